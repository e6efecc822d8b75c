/*
 * folded.h - folded stacks in memory: the lines of pymerge's own output, or
 * of any folded file (flamegraph.pl's stackcollapse-*, inferno, py-spy -f
 * raw...), sorted and with duplicate stacks summed, ready for the SVG,
 * speedscope and diff writers.
 */
#ifndef PYMERGE_FOLDED_H
#define PYMERGE_FOLDED_H

#include "out_svg.h"

#include <stdint.h>
#include <stdio.h>

struct folded {
    struct folded_line *lines;   /* sorted bytewise, distinct */
    size_t n;
    uint64_t total;              /* sum of the weights */
    uint64_t *cum;               /* cum[i]: weight of lines[0..i), n + 1 entries */
    char *text;                  /* owns the strings of lines[] */
};

/*
 * Parses folded text, taking ownership of text (a malloc'd, NUL-terminated
 * buffer of len bytes).  Each non-empty line is "frame;frame;... COUNT".
 * Returns 0, or -1 after printing "pymerge: NAME: line N: what is wrong".
 */
int folded__parse(struct folded *fd, char *text, size_t len, const char *name);

/* Reads and parses a whole file ("-": standard input).  As folded__parse. */
int folded__read(struct folded *fd, const char *path);

/* Weight of the frame path `prefix` ("a;b") and of every stack under it. */
uint64_t folded__weight_under(const struct folded *fd, const char *prefix, size_t len);

void folded__exit(struct folded *fd);   /* accepts a zeroed struct */

/* flamegraph.pl's frame annotations: `_[k]` kernel, `_[j]` Python (and
 * JIT), `_[i]` inlined.  Returns the one that ends name[0..*len) and takes
 * it off *len; ANN_NONE (native code) leaves *len alone. */
enum annotation { ANN_NONE, ANN_KERNEL, ANN_PYTHON, ANN_INLINED };
enum annotation folded__annotation(const char *name, size_t *len);

#endif
