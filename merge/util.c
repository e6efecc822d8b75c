/* util.c - allocation, growth, hashing and warnings shared by all stages. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void (*oom_handler)(void);

void util__on_oom(void (*handler)(void))
{
    oom_handler = handler;
}

static int muted;              /* warn_mute */

/* Several threads can run out at once: the handler runs in the first
 * only (one message, and no exit() racing another exit(), which is
 * undefined); the others wait for it to end the process. */
void util__out_of_memory(void)
{
    static atomic_flag running = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&running))
        for (;;)
            pause();
    muted = 0;                  /* the one line a dying pymerge says */
    if (oom_handler)
        oom_handler();
    abort();    /* a handler must not return: nothing below can go on */
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        util__out_of_memory();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        util__out_of_memory();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        util__out_of_memory();
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

void grow(void *pp, size_t *cap, size_t need, size_t size)
{
    void **p = pp;
    size_t c = *cap;

    if (need <= c)
        return;
    if (c < 16)
        c = 16;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            util__out_of_memory();
        c *= 2;
    }
    if (c > SIZE_MAX / size)         /* catch size_t overflow */
        util__out_of_memory();
    *p = xrealloc(*p, c * size);
    *cap = c;
}

void grow_zeroed(void *pp, size_t *cap, size_t need, size_t size)
{
    size_t old = *cap;
    grow(pp, cap, need, size);
    if (*cap > old)
        memset(*(char **)pp + old * size, 0, (*cap - old) * size);
}

u64 hash_bytes(const void *p, size_t n)
{
    /* FNV-1a over 8-byte words where possible, finished by a mixer: fast
     * enough for short names and callchains, and no alignment demands. */
    const unsigned char *b = p;
    u64 h = 0xcbf29ce484222325ULL;
    while (n >= 8) {
        u64 w;
        memcpy(&w, b, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        b += 8;
        n -= 8;
    }
    while (n--)
        h = (h ^ *b++) * 0x100000001b3ULL;
    return hash_u64(h);
}

void warn_mute(int on)
{
    muted = on;
}

void warnx_(const char *fmt, ...)
{
    va_list ap;
    if (muted)
        return;
    fputs("pymerge: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

FILE *warn_begin(struct warn_msg *w)
{
    w->text = NULL;
    w->len = 0;
    FILE *f = open_memstream(&w->text, &w->len);
    if (!f)
        util__out_of_memory();
    return w->f = f;
}

void warn_end(struct warn_msg *w)
{
    fclose(w->f);
    warnx_("%s", w->text ? w->text : "");
    free(w->text);
}

void *zlib_alloc(void *opaque, unsigned items, unsigned size)
{
    (void)opaque;
    return xcalloc(items, size);
}

void zlib_free(void *opaque, void *ptr)
{
    (void)opaque;
    free(ptr);
}

int read_whole_file(const char *path, char **out, size_t *out_len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        int err = errno;
        warnx_("%s: %s", path, strerror(err));
        return -err;
    }
    size_t len = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
        if (cap == len)
            GROW(buf, cap, cap + 1);
    }
    int err = ferror(f);
    if (f != stdin)
        fclose(f);
    if (err) {
        warnx_("%s: read error", path);
        free(buf);
        return -EIO;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int written(FILE *f, int ret)
{
    return fflush(f) != 0 || ferror(f) ? -EIO : ret;
}

const char *path_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void put_xml_text(FILE *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
        }
    }
}

void put_json_string(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
