/*
 * perfmap.h - JIT symbols from perf-PID.map files ("START SIZE name" per
 * line, hex, 0x optional), as CPython's -X perf and pyperfmap write them.
 */
#ifndef PYMERGE_PERFMAP_H
#define PYMERGE_PERFMAP_H

#include "symtab.h"

/* Load path into t.  Returns 0, or -1 with errno (a file owned by another
 * user is refused, as perf refuses it: EPERM). */
int perfmap__load(struct symtab *t, const char *path);

#endif
