/* pdsrc.c - mapped or buffered input bytes (see pdsrc.h). */
#include "pdsrc.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

ssize_t src_want(struct src *s, size_t n)
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
            return -1;
        if (got == 0)
            break;
        s->len += (size_t)got;
    }
    return (ssize_t)(s->len - s->pos < n ? s->len - s->pos : n);
}

const u8 *src_ptr(const struct src *s)
{
    return s->map ? s->map + (s->off - s->map_off) : s->buf + s->pos;
}

void src_take(struct src *s, size_t n)
{
    s->pos += n;
    s->off += n;
}

/* A mapped file that another process truncates under us raises SIGBUS
 * on the next page touched: end with the usual one-line error instead. */
static const char *mapped_path;

static void on_sigbus(int sig)
{
    static const char a[] = "pymerge: ", b[] = ": the file shrank while being read\n";
    (void)sig;
    if (write(2, a, sizeof(a) - 1) < 0 || write(2, mapped_path, strlen(mapped_path)) < 0 ||
        write(2, b, sizeof(b) - 1) < 0)
        _exit(2);
    _exit(2);
}

void src_map(struct src *s, const char *path)
{
    long page = sysconf(_SC_PAGESIZE);
    u64 start = s->off & ~(u64)(page - 1);
    if (s->end <= start || s->end - start > SIZE_MAX)
        return;
    void *m = mmap(NULL, (size_t)(s->end - start), PROT_READ, MAP_PRIVATE, s->fd, (off_t)start);
    if (m == MAP_FAILED)
        return;
    s->map = m;
    s->map_off = start;
    s->map_len = (size_t)(s->end - start);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigbus;
    mapped_path = path;
    sigaction(SIGBUS, &sa, NULL);
}

/* Everything before low has been delivered: peak memory stays one round,
 * not the file. */
void src_release(struct src *s, u64 low)
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

void src_exit(struct src *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_len);
    if (s->fd > 0)
        close(s->fd);
    free(s->buf);
    memset(s, 0, sizeof(*s));
}
