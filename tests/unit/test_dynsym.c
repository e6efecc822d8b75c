/* test_dynsym.c - libpyperfmap/dynsym.c on objects the dynamic loader has
 * loaded: libc's malloc, in a table hashed by GNU's function, and a
 * function of a library linked with the System V hash only.  After the
 * redirect, dlsym on the object's own handle finds the new function, a
 * library loaded with RTLD_DEEPBIND binds to it and one loaded before keeps
 * its binding, and the table's page keeps its protection; what is not a
 * definition of that name at that address is left alone.
 *
 *   test_dynsym GNU_LIB SYSV_LIB   (tests/memory/deepbind_alloc.c, built
 *                                   with each hash style)
 *
 * AddressSanitizer refuses RTLD_DEEPBIND, and owns malloc: a sanitized
 * build checks the lookups only. */
#include "check.h"
#include "../../libpyperfmap/dynsym.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#  define SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define SANITIZED 1
#  endif
#endif
#ifndef SANITIZED
#  define SANITIZED 0
#endif

typedef void *alloc_fn(size_t);
static alloc_fn *real_malloc;
static int counted;

static void *counting_malloc(size_t size)
{
    counted++;
    return real_malloc(size);
}

static void *other_malloc(size_t size)
{
    return real_malloc(size);
}

/* The permissions of the mapping holding addr, as /proc/self/maps says. */
static void protection(const void *addr, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    unsigned long lo, hi;
    char p[5];
    CHECK(f);
    perms[0] = '\0';
    while (fscanf(f, "%lx-%lx %4s %*[^\n]", &lo, &hi, p) == 3)
        if ((unsigned long)addr >= lo && (unsigned long)addr < hi)
            memcpy(perms, p, 5);
    fclose(f);
    CHECK(perms[0]);
}

static void *symbol(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    CHECK(p);
    return p;
}

/* What is not name's definition at from: nothing changes. */
static void not_definitions(void *libc)
{
    CHECK(dynsym__redirect("malloc", (char *)real_malloc + 1, counting_malloc) == -ENOENT);
    CHECK(dynsym__redirect("calloc", real_malloc, counting_malloc) == -ENOENT);
    CHECK(dynsym__redirect("malloc", &counted, counting_malloc) == -ENOENT);
    CHECK(dynsym__redirect("malloc", (void *)(uintptr_t)16, counting_malloc) == -ENOENT);
    CHECK(symbol(libc, "malloc") == (void *)real_malloc);
}

/* libc's malloc, redirected between two RTLD_DEEPBIND libraries' loads:
 * lookups on libc's handle find the new one, and so does the binding of
 * the library loaded after; the one loaded before keeps libc's. */
static void libc_malloc(void *libc, const char *gnu_lib, const char *sysv_lib)
{
    Dl_info info;
    const ElfW(Sym) *entry;
    char before[5], after[5];
    CHECK(dladdr1((void *)real_malloc, &info, (void **)&entry, RTLD_DL_SYMENT));
    CHECK(strcmp(info.dli_sname, "malloc") == 0);
    protection(entry, before);
    void *early = SANITIZED ? NULL : dlopen(gnu_lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    CHECK(SANITIZED || early);

    CHECK(dynsym__redirect("malloc", real_malloc, counting_malloc) == 0);
    CHECK(symbol(libc, "malloc") == (void *)counting_malloc);
    CHECK(dlvsym(libc, "malloc", "GLIBC_2.2.5") == (void *)counting_malloc);
    protection(entry, after);
    CHECK(strcmp(before, after) == 0);
    /* once redirected, it is no longer real_malloc's definition */
    CHECK(dynsym__redirect("malloc", real_malloc, other_malloc) == -ENOENT);
    if (SANITIZED)
        return;
    void *late = dlopen(sysv_lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    CHECK(late);
    void (*release)(void *) = (void (*)(void *))symbol(early, "deepbind_free");
    release(((alloc_fn *)symbol(early, "deepbind_malloc"))(64));
    CHECK(counted == 0);
    release(((alloc_fn *)symbol(late, "deepbind_malloc"))(64));
    CHECK(counted == 1);
}

/* A function of a library whose table has only the System V hash. */
static void sysv_hashed(const char *sysv_lib)
{
    void *lib = dlopen(sysv_lib, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib);
    void *f = symbol(lib, "deepbind_malloc");
    CHECK(dynsym__redirect("deepbind_malloc", f, other_malloc) == 0);
    CHECK(symbol(lib, "deepbind_malloc") == (void *)other_malloc);
    CHECK(dynsym__redirect("deepbind_free", f, other_malloc) == -ENOENT);
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    CHECK(libc);
    real_malloc = (alloc_fn *)symbol(libc, "malloc");
    not_definitions(libc);
    libc_malloc(libc, argv[1], argv[2]);
    sysv_hashed(argv[2]);
    return 0;
}
