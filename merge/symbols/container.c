/* container.c - where a live process in its own namespaces keeps its perf map. */
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int container__nspid(const char *status, size_t len, uint32_t *nspid)
{
    static const char key[] = "NSpid:";
    const size_t klen = sizeof(key) - 1;
    size_t i = 0;

    while (i < len) {
        const char *line = status + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) : len - i;
        i += n + 1;
        if (n < klen || memcmp(line, key, klen) != 0)
            continue;
        /* "NSpid:\t4242\t1": one PID per namespace, outermost first */
        int count = 0;
        uint32_t last = 0;
        for (size_t j = klen; j < n;) {
            if (line[j] == ' ' || line[j] == '\t') {
                j++;
                continue;
            }
            if (line[j] < '0' || line[j] > '9')
                return -EINVAL;
            uint64_t v = 0;
            for (; j < n && line[j] >= '0' && line[j] <= '9'; j++) {
                v = v * 10 + (uint64_t)(line[j] - '0');
                if (v > UINT32_MAX)
                    return -EINVAL;
            }
            last = (uint32_t)v;
            count++;
        }
        if (count == 0)
            return -EINVAL;
        *nspid = last;
        return count;
    }
    return -ENOENT;
}

/* Whether /proc/PID/ns/mnt is pymerge's own mount namespace: 1, 0, or a
 * negative errno. */
static int same_mount_ns(uint32_t pid)
{
    char path[64];
    struct stat a, b;
    snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
    if (stat(path, &a) < 0 || stat("/proc/self/ns/mnt", &b) < 0)
        return -errno;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int container__perfmap_path(uint32_t pid, char *path, size_t size)
{
    char file[64], buf[8192];
    size_t len = 0;
    ssize_t got = 0;

    snprintf(file, sizeof(file), "/proc/%u/status", pid);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    /* A few hundred bytes come before NSpid; the whole text is ~1.5 KiB. */
    while (len < sizeof(buf) && (got = read(fd, buf + len, sizeof(buf) - len)) > 0)
        len += (size_t)got;
    int err = got < 0 ? -errno : 0;
    close(fd);
    if (err)
        return err;
    uint32_t nspid;
    int levels = container__nspid(buf, len, &nspid);
    if (levels < 0)
        return levels;
    if (levels == 1) {
        int same = same_mount_ns(pid);
        if (same != 0)
            return same > 0 ? -ENOENT : same;
    }
    int n = snprintf(path, size, "/proc/%u/root/tmp/perf-%u.map", pid, nspid);
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}
