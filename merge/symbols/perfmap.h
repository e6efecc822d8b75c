/*
 * perfmap.h - JIT symbols from perf-PID.map files ("START SIZE name" per
 * line, hex, 0x optional), as CPython's -X perf and pyperfmap write them.
 */
#ifndef PYMERGE_PERFMAP_H
#define PYMERGE_PERFMAP_H

#include "symtab.h"

#include <sys/types.h>

/* Where a writer that is still running adds its next lines: just past the
 * last line taken, over what the loader read there then (padding, a line
 * being written, or nothing at the end of the file). */
struct perfmap_tail {
    off_t offset;
    size_t len;
    char next[32];
};

/* Load path into t.  Returns 0, or a negative errno (a file owned by another
 * user, or not a regular file, is refused: EPERM).  tail is NULL for a map
 * that is finished; otherwise a writer may still be adding to it, so a last
 * line without its newline is not taken, and *tail is filled. */
int perfmap__load(struct symtab *t, const char *path, struct perfmap_tail *tail);

#endif
