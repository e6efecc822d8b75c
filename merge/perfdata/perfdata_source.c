/* perfdata_source.c - mapped or buffered input bytes (see perfdata_source.h). */
#include "perfdata_source.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

ssize_t pd_source__want(struct src *s, size_t n)
{
    if (s->map)
        return (ssize_t)(s->end - s->off < n ? s->end - s->off : n);
    if (s->len - s->pos >= n)
        return (ssize_t)n;
    memmove(s->buf, s->buf + s->pos, s->len - s->pos);
    s->len -= s->pos;
    s->pos = 0;
    while (s->len < n) {
        u64 fill_off = s->off + s->len;
        size_t room = SRC_BUF_SIZE - s->len;
        if (fill_off >= s->end)
            break;
        if (room > s->end - fill_off)
            room = (size_t)(s->end - fill_off);
        ssize_t got = s->seekable ? pread(s->fd, s->buf + s->len, room, (off_t)fill_off)
                                  : read(s->fd, s->buf + s->len, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            break;
        s->len += (size_t)got;
    }
    return (ssize_t)(s->len - s->pos < n ? s->len - s->pos : n);
}

const u8 *pd_source__ptr(const struct src *s)
{
    return s->map ? s->map + (s->off - s->map_off) : s->buf + s->pos;
}

void pd_source__take(struct src *s, size_t n)
{
    s->pos += n;
    s->off += n;
}

/*
 * A mapped file that another process truncates under us raises SIGBUS on
 * the next page touched: end with the usual one-line error instead.  Only
 * faults inside our own mappings are blamed on an input; any other SIGBUS
 * (libelf's or libdw's mappings of other files, a kill) goes to the
 * handler that was there before, which is put back when the last mapping
 * is gone.  The handler reads only this table, never freed memory.
 */
#define MAX_MAPPED 4
static struct mapped {
    const u8 *start;
    size_t len;
    char path[256];
} mapped[MAX_MAPPED];
static int n_mapped;
static struct sigaction old_sigbus;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    static const char a[] = "pymerge: ", b[] = ": the file shrank while being read\n";
    (void)uc;
    for (int i = 0; i < MAX_MAPPED; i++) {
        const struct mapped *m = &mapped[i];
        uintptr_t at = (uintptr_t)si->si_addr, lo = (uintptr_t)m->start;
        if (si->si_code > 0 && m->start && at >= lo && at - lo < m->len) {
            if (write(2, a, sizeof(a) - 1) < 0 || write(2, m->path, strlen(m->path)) < 0 ||
                write(2, b, sizeof(b) - 1) < 0)
                _exit(2);
            _exit(2);
        }
    }
    /* Not ours: the previous disposition, as if we had never been here.  A
     * fault repeats when the instruction is retried; a sent signal does not. */
    sigaction(SIGBUS, &old_sigbus, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

/* Returns 0, or -EBUSY when MAX_MAPPED inputs are mapped already. */
static int watch(const u8 *start, size_t len, const char *path)
{
    for (int i = 0; i < MAX_MAPPED; i++) {
        struct mapped *m = &mapped[i];
        if (m->start)
            continue;
        snprintf(m->path, sizeof(m->path), "%s", path);
        m->len = len;
        m->start = start;
        if (n_mapped++ == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof(sa));
            sa.sa_sigaction = on_sigbus;
            sa.sa_flags = SA_SIGINFO;
            sigaction(SIGBUS, &sa, &old_sigbus);
        }
        return 0;
    }
    return -EBUSY;
}

static void unwatch(const u8 *start)
{
    for (int i = 0; i < MAX_MAPPED; i++) {
        if (mapped[i].start != start)
            continue;
        mapped[i].start = NULL;
        if (--n_mapped == 0)
            sigaction(SIGBUS, &old_sigbus, NULL);
        return;
    }
}

void pd_source__map(struct src *s, const char *path)
{
    long page = sysconf(_SC_PAGESIZE);
    u64 start = s->off & ~(u64)(page - 1);
    if (s->end <= start || s->end - start > SIZE_MAX)
        return;
    void *m = mmap(NULL, (size_t)(s->end - start), PROT_READ, MAP_PRIVATE, s->fd, (off_t)start);
    if (m == MAP_FAILED)
        return;
    if (watch(m, (size_t)(s->end - start), path) < 0) {
        munmap(m, (size_t)(s->end - start));
        return;
    }
    s->map = m;
    s->map_off = start;
    s->map_len = (size_t)(s->end - start);
}

/* Everything before low has been delivered: peak memory stays one round,
 * not the file. */
void pd_source__release(struct src *s, u64 low)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!s->map || low <= s->map_off)
        return;
    size_t upto = (size_t)(low - s->map_off) & ~(size_t)(page - 1);
    if (upto < s->released + (1u << 20))     /* in steps of 1 MiB */
        return;
    madvise((void *)(s->map + s->released), upto - s->released, MADV_DONTNEED);
    s->released = upto;
}

void pd_source__exit(struct src *s)
{
    if (s->map) {
        unwatch(s->map);
        munmap((void *)s->map, s->map_len);
    }
    if (s->fd > 0)
        close(s->fd);
    free(s->buf);
    memset(s, 0, sizeof(*s));
}
