/* linefile.c - parse perf-PID.lines (see linefile.h). */
#include "linefile.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A number in base at *p (hex digits only, or a decimal with an optional
 * '-'), followed by sep; moves *p past sep.  0 on success. */
static int field(char **p, int base, char sep, long long lo, unsigned long long hi,
                 unsigned long long *v)
{
    char *s = *p, *end;
    int neg = base == 10 && *s == '-';
    if (!(s[neg] >= '0' && s[neg] <= '9') && !(base == 16 && s[0] >= 'a' && s[0] <= 'f'))
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s + neg, &end, base);
    if (errno || *end != sep || (neg ? x > (unsigned long long)-lo : x > hi))
        return -1;
    *v = neg ? (unsigned long long)-(long long)x : x;
    *p = end + (sep != 0);
    return 0;
}

/* One line, NUL-terminated: "TRAMP BASE BYTES UNIT OFF:LINE...", hex but
 * for UNIT and LINE; runs rise from offset 0. */
static int entry(struct linefile *lf, char *p)
{
    unsigned long long tramp, base, bytes, unit, off, line, prev = 0;
    if (field(&p, 16, ' ', 0, ULLONG_MAX, &tramp) || field(&p, 16, ' ', 0, ULLONG_MAX, &base) ||
        field(&p, 16, ' ', 0, UINT32_MAX, &bytes) || field(&p, 10, ' ', 0, 2, &unit) || !unit)
        return -1;
    size_t first = lf->n_runs;
    while (*p) {
        char sep = strchr(p, ' ') ? ' ' : 0;    /* the last run ends the line */
        if (field(&p, 16, ':', 0, UINT32_MAX, &off) || field(&p, 10, sep, -1, INT32_MAX, &line) ||
            (lf->n_runs > first ? off <= prev : off != 0)) {
            lf->n_runs = first;
            return -1;
        }
        prev = off;
        GROW(lf->runs, lf->cap_runs, lf->n_runs + 1);
        lf->runs[lf->n_runs++] = (struct line_run){(uint32_t)off, (int32_t)line};
    }
    if (lf->n_runs == first)
        return -1;
    GROW(lf->codes, lf->cap_codes, lf->n_codes + 1);
    lf->codes[lf->n_codes++] = (struct line_code){tramp, base, (uint32_t)bytes, (uint32_t)unit,
                                                  first, lf->n_runs - first};
    return 0;
}

/* By trampoline, then in the file's order. */
static int by_tramp(const void *a, const void *b)
{
    const struct line_code *x = a, *y = b;
    if (x->tramp != y->tramp)
        return x->tramp < y->tramp ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Slots are never reused in a process: a trampoline named twice comes
 * from a damaged file.  The last entry stays, the others count as bad. */
static void drop_repeats(struct linefile *lf)
{
    size_t k = 0;
    for (size_t i = 0; i < lf->n_codes; i++) {
        if (k && lf->codes[k - 1].tramp == lf->codes[i].tramp) {
            lf->bad++;
            k--;
        }
        lf->codes[k++] = lf->codes[i];
    }
    lf->n_codes = k;
}

void linefile__parse(struct linefile *lf, const char *buf, size_t len)
{
    char *copy = xmalloc(len + 1);
    memcpy(copy, buf, len);
    copy[len] = 0;
    for (char *p = copy, *nl; p < copy + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(copy + len - p));
        if (!nl || memchr(p, 0, (size_t)(nl - p))) {
            lf->bad++;          /* cut short, or a NUL inside */
            if (!nl)
                break;
            continue;
        }
        *nl = 0;
        if (entry(lf, p) != 0)
            lf->bad++;
    }
    free(copy);
    if (lf->n_codes)    /* qsort of NULL, even of none, is undefined */
        qsort(lf->codes, lf->n_codes, sizeof(*lf->codes), by_tramp);
    drop_repeats(lf);
}

#define LINEFILE_MAX_BYTES (1ull << 30)

int linefile__load(struct linefile *lf, const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != getuid())) {
        close(fd);
        return -EPERM;
    }
    /* A program's line tables are megabytes; a file far past that (a
     * sparse one, or another file named so) is refused, not read. */
    if ((uint64_t)st.st_size > LINEFILE_MAX_BYTES) {
        close(fd);
        return -EFBIG;
    }
    size_t len = (size_t)st.st_size, got = 0;
    char *buf = xmalloc(len + 1);
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0)
            break;      /* shorter than it was: take what is there */
        got += (size_t)n;
    }
    close(fd);
    linefile__parse(lf, buf, got);
    free(buf);
    return 0;
}

static int tramp_is(const void *key, const void *code)
{
    uint64_t t = *(const uint64_t *)key, u = ((const struct line_code *)code)->tramp;
    return t < u ? -1 : t > u;
}

int linefile__line(const struct linefile *lf, uint64_t tramp, uint32_t pos)
{
    const struct line_code *c = lf->n_codes ? bsearch(&tramp, lf->codes, lf->n_codes,
                                                      sizeof(*lf->codes), tramp_is) : NULL;
    if (!c)
        return 0;
    uint64_t off = (uint64_t)(uint32_t)(pos - (uint32_t)c->base) * c->unit;
    if (off >= c->bytes)
        return 0;
    const struct line_run *r = lf->runs + c->first;
    size_t a = 0, b = c->n;     /* the last run starting at or before off */
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (r[mid].off <= off)
            a = mid;
        else
            b = mid;
    }
    return r[a].line > 0 ? r[a].line : 0;
}

void linefile__exit(struct linefile *lf)
{
    free(lf->codes);
    free(lf->runs);
    memset(lf, 0, sizeof(*lf));
}
