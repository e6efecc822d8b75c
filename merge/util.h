/*
 * util.h - the few helpers every stage of pymerge shares: allocation that
 * cannot return NULL, growable arrays, hashing, and the one error printer.
 *
 * THE ERROR CONVENTION of merge/, in one place:
 *   - a function that can fail returns 0 (or a count, or 1 for "yes") on
 *     success and a negative errno on failure; one that returns a pointer
 *     returns NULL and sets errno;
 *   - the function that finds out what is wrong, and knows the input's
 *     name, prints it once: "pymerge: FILE: what is wrong" (warnx_); its
 *     callers only pass the negative errno up, and no caller ever looks at
 *     message text;
 *   - exit statuses are decided in main.c alone (0 done, 1 bad usage, 2 bad
 *     input, a failed write or no memory, 3 a diff gate exceeded), and so is
 *     what running out of memory does (util__on_oom).  Two places end the
 *     process where they are, because nothing can be returned from them:
 *     main.c's out-of-memory handler, and perfdata_source.c's SIGBUS handler (an
 *     input file truncated while mapped); both with status 2.
 *
 * Allocation goes through one place so that running out of memory is one
 * clear message instead of a NULL dereference somewhere downstream.
 */
#ifndef PYMERGE_UTIL_H
#define PYMERGE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;

/* Never return NULL: call the out-of-memory handler instead, which does
 * not return (main.c's prints one line and exits). */
void util__on_oom(void (*handler)(void));
/* Calls that handler: for libraries that allocate on their own (zstd). */
void util__out_of_memory(void) __attribute__((noreturn));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* zlib's allocation callbacks (z_stream's zalloc, zfree), through xcalloc. */
void *zlib_alloc(void *opaque, unsigned items, unsigned size);
void zlib_free(void *opaque, void *ptr);

/*
 * Make room for `need` elements in *p (capacity *cap, elements of `size`
 * bytes), growing geometrically.  Overflow of need * size exits like OOM.
 */
void grow(void *p, size_t *cap, size_t need, size_t size);
#define GROW(ptr, cap, need) grow(&(ptr), &(cap), (need), sizeof(*(ptr)))
/* The same, with the new elements zeroed: tables indexed by an id. */
void grow_zeroed(void *p, size_t *cap, size_t need, size_t size);
#define GROW_ZEROED(ptr, cap, need) grow_zeroed(&(ptr), &(cap), (need), sizeof(*(ptr)))

/* Hashes for the open-addressing tables (not cryptographic). */
static inline u64 hash_u64(u64 x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}
u64 hash_bytes(const void *p, size_t n);

/* "pymerge: " + message + newline on stderr. */
/* While on, warnx_ says nothing: for a second reading of an input whose
 * problems the first (or the main) reading says. */
void warn_mute(int on);
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a message written in pieces (a list): fprintf them to the
 * FILE warn_begin returns, and warn_end prints it through warnx_. */
struct warn_msg {
    FILE *f;
    char *text;
    size_t len;
};
FILE *warn_begin(struct warn_msg *w);
void warn_end(struct warn_msg *w);

/* s[0..len) as XML text or attribute value: escaped, control characters
 * (not allowed in XML 1.0) as '?'. */
void put_xml_text(FILE *f, const char *s, size_t len);

/* s[0..len) as a JSON string, quoted and escaped. */
void put_json_string(FILE *f, const char *s, size_t len);

/* Reads the whole file path ("-": standard input) into *buf (malloc'd,
 * *len bytes).  Returns 0, or a negative errno after printing
 * "pymerge: PATH: why". */
int read_whole_file(const char *path, char **buf, size_t *len);

/* How a writer ends: ret, or -EIO when what was written to f did not all
 * reach it (flushed here). */
int written(FILE *f, int ret);

/* The final path component ("/usr/lib/libc.so.6" -> "libc.so.6"). */
const char *path_basename(const char *path);

#endif
