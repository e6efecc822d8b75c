/*
 * dynsym.h - a definition in the dynamic symbol table of a loaded object,
 * made to name another function.
 *
 * Calls bound through the global scope reach an LD_PRELOAD interposer,
 * but some lookups start at one object: dlsym on a library's own handle
 * (ctypes.CDLL("libc.so.6").malloc, cffi's dlopen), and the binding of a
 * library loaded with RTLD_DEEPBIND, which searches its dependencies
 * before the global scope.  Both read the object's table in memory when
 * they happen, so a definition changed there sends every later one of
 * them elsewhere; bindings made before stay as they are.
 */
#ifndef PYPERFMAP_DYNSYM_H
#define PYPERFMAP_DYNSYM_H

/* Makes name's dynamic definitions that are at from (in the loaded object
 * holding from) point to to: 0, -ENOENT when no such definition is there
 * (from is not name's, or its object has no dynamic symbol table), or the
 * -errno of making the table's page writable.  Allocates nothing and
 * holds the dynamic loader's lock (dl_iterate_phdr) meanwhile. */
int dynsym__redirect(const char *name, const void *from, const void *to);

#endif
