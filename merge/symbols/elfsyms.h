/*
 * elfsyms.h - the function symbols of one ELF file, found the way perf
 * finds them: a separate debug file (debuglink, /usr/lib/debug/.build-id)
 * first, then the file's own .symtab, then .dynsym; PLT entries as
 * name@plt.  The file's build id is checked against the one recorded, and
 * perf's build-id cache (~/.debug) supplies the recorded binary when the
 * file on disk has been rebuilt since.  Before all of these, a recording
 * folder's own copies (pyperf-record --archive): ARCHIVE/.build-id/xx/rest/elf
 * (the object, a vdso too) and .../debug (its debug file), xx/rest being the
 * build id in hex, as in perf's ~/.debug.
 */
#ifndef PYMERGE_ELFSYMS_H
#define PYMERGE_ELFSYMS_H

#include "symtab.h"

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct elf_load {               /* one PT_LOAD: file offsets -> addresses */
    uint64_t offset, filesz, vaddr;
};

/* The PT_LOAD segments of elf into *loads (malloc'd, NULL if none); their
 * count.  Shared with the DWARF unwinder's CFI reader. */
size_t elf_loads__read(Elf *elf, struct elf_load **loads);
/* The virtual address at file offset off through n segments; 0 if none
 * holds it. */
int elf_loads__vaddr(const struct elf_load *loads, size_t n, uint64_t off, uint64_t *vaddr);

struct elf_image {
    struct symtab syms;         /* addresses are the ELF's virtual addresses */
    struct elf_load *loads;
    size_t n_loads;
    char *file;                 /* the file matching the recording (path, or perf's
                                 * cached copy); the DWARF unwinder reads its CFI.
                                 * NULL for this machine's own vdso */
};

/*
 * Load the symbols of `path`.  want/want_size: the build id recorded for
 * it (want_size 0: no check).  archive: the recording folder, or NULL.
 * Returns 0, or a negative errno: -ESTALE when the file was rebuilt since
 * the recording (its build id differs) and perf's cache has no copy of the
 * recorded one, -ENOEXEC when it is not a usable ELF file, or the error of
 * opening it.  The caller says which, if it should be said.
 */
int elf_image__load(struct elf_image *img, const char *path, const uint8_t *want,
                    uint8_t want_size, const char *archive);
/* The same for the vdso: the recording folder's copy, else this process's
 * own if its build id matches (file stays NULL), else perf's cached copy
 * (file names the copy used).  -ENOENT when none of them is the recorded
 * vdso. */
int elf_image__load_vdso(struct elf_image *img, const uint8_t *want, uint8_t want_size,
                         const char *archive);
void elf_image__exit(struct elf_image *img);

/* This machine's vdso image (mapped in every process), or NULL; *size
 * gets its length.  The DWARF unwinder reads its CFI from it too. */
const void *elf_own_vdso(size_t *size);

/* The virtual address at file offset off; 0 if no PT_LOAD holds it. */
int elf_image__vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr);

#endif
