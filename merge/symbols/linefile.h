/*
 * linefile.h - perf-PID.lines, the line tables that libpyperfmap writes
 * beside its perf map (format: libpyperfmap/evalhook.c, "line tables"):
 * which line of its code object a caller's position (trampoline.h) names.
 */
#ifndef PYMERGE_LINEFILE_H
#define PYMERGE_LINEFILE_H

#include <stddef.h>
#include <stdint.h>

struct line_run {
    uint32_t off;           /* first byte offset of the run */
    int32_t line;           /* its line, or -1: none */
};

struct line_code {
    uint64_t tramp;         /* the trampoline's start: the key */
    uint64_t base;          /* what positions count from */
    uint32_t bytes;         /* the code's size in bytes */
    uint32_t unit;          /* bytes per step of a position (1 or 2) */
    size_t first, n;        /* its runs, in struct linefile's runs */
};

struct linefile {
    struct line_code *codes;    /* sorted by tramp once loaded */
    size_t n_codes, cap_codes;
    struct line_run *runs;
    size_t n_runs, cap_runs;
    size_t bad;                 /* lines that were not whole entries */
};

/* Parses len bytes of a line file into lf (zeroed or freshly exited).  A
 * line cut short or malformed is left out and counted in lf->bad. */
void linefile__parse(struct linefile *lf, const char *buf, size_t len);

/* Loads path: 0, or a negative errno (-EPERM for a file that is not a
 * regular file of this user or root, as perf maps are refused). */
int linefile__load(struct linefile *lf, const char *path);

/* The line that position pos of the code behind the trampoline starting at
 * tramp names, or 0 when the file says none (no entry, outside its code). */
int linefile__line(const struct linefile *lf, uint64_t tramp, uint32_t pos);

void linefile__exit(struct linefile *lf);

#endif
