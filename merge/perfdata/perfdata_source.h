/*
 * perfdata_source.h - the bytes of a perf.data input, for perfdata.c.
 *
 * A file's data section is mapped and records are used in place; a pipe is
 * read through a buffer.  Either way pd_source__want() makes n bytes readable at
 * pd_source__ptr(), and pd_source__take() moves past them.
 */
#ifndef PYMERGE_PERFDATA_SOURCE_H
#define PYMERGE_PERFDATA_SOURCE_H

#include "util.h"

#include <sys/types.h>

#define SRC_BUF_SIZE (1u << 20)     /* read buffer; records are < 64 KiB */

struct src {
    int fd;
    int seekable;
    u8 *buf;
    size_t pos, len;            /* unread bytes are buf[pos..len) */
    u64 off;                    /* input offset of the next unread byte */
    u64 end;                    /* stop reading here */
    /* A mapped data section: pages already delivered are given back. */
    const u8 *map;
    u64 map_off;                /* file offset of map[0] (page aligned) */
    size_t map_len, released;   /* bytes mapped; bytes at the start given back */
};

/* Make n bytes readable at pd_source__ptr() if the input has them; returns how
 * many are (fewer only at the end of the input), or a negative errno on a
 * read error. */
ssize_t pd_source__want(struct src *s, size_t n);
const u8 *pd_source__ptr(const struct src *s);
void pd_source__take(struct src *s, size_t n);
/* Map [s->off, s->end) of the file; on failure buffered reads remain.
 * Until pd_source__exit, a SIGBUS in the mapping (the file was truncated) ends
 * the process with "pymerge: PATH: the file shrank..." and status 2: a
 * signal handler cannot return an error, so this is, with running out of
 * memory, an exception to "exit statuses are decided in main.c" (util.h). */
void pd_source__map(struct src *s, const char *path);
/* Give back mapped pages before file offset low (all delivered). */
void pd_source__release(struct src *s, u64 low);
void pd_source__exit(struct src *s);

#endif
