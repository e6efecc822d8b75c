/*
 * mapfile.c - /tmp/perf-<pid>.map, written a line at a time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* pread, pwrite, lstat, O_NOFOLLOW under -std=c11 */
#endif
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    int fd;            /* -1 when closed */
    pid_t pid;         /* the process the file belongs to */
    size_t len;        /* bytes of entries written: the file's size */
    char dir[PATH_MAX];
    char path[PATH_MAX];
} mf = {.fd = -1};

/* Writes len bytes at the end of the file, all or none: a short write
 * (a full file system) is taken back, so the file stays whole lines. */
static int append(const char *p, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(mf.fd, p + done, len - done, (off_t)(mf.len + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n == 0 ? ENOSPC : errno;
            /* Should this fail too, a line cut short stays last, without
             * its newline, which readers of a live map wait for. */
            (void)!ftruncate(mf.fd, (off_t)mf.len);
            return -e;
        }
        done += (size_t)n;
    }
    mf.len += len;
    return 0;
}

static void drop(void)
{
    if (mf.fd >= 0)
        close(mf.fd);
    mf.fd = -1;
    mf.len = 0;
    mf.path[0] = '\0';
}

/* Opens this process's file under mf.dir, empty. */
static int create(void)
{
    mf.pid = getpid();
    if (snprintf(mf.path, sizeof mf.path, "%s/perf-%ld.map", mf.dir, (long)mf.pid)
        >= (int)sizeof mf.path)
        return -ENAMETOOLONG;
    int fd = open(mf.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        /* PIDs are reused, and /tmp is sticky: an earlier process of another
         * user may have left its map at our name, which we may not replace.
         * EEXIST says so: open() without O_EXCL never returns it. */
        if (e == EACCES && lstat(mf.path, &st) == 0 && st.st_uid != geteuid())
            return -EEXIST;
        return -e;
    }
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    /* Someone else's file, a hard link or a device planted at our name: do
     * not write through it, and do not remove it either. */
    else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
        e = EPERM;
    else if (ftruncate(fd, 0) != 0)
        e = errno;
    if (e != 0) {
        close(fd);
        return -e;
    }
    mf.fd = fd;
    return 0;
}

int mapfile__open(const char *dir)
{
    if (mf.fd >= 0 && mf.pid == getpid())
        return 0;
    if (mf.fd >= 0 && mapfile__after_fork() == 0)
        return 0;
    if (snprintf(mf.dir, sizeof mf.dir, "%s", dir) >= (int)sizeof mf.dir)
        return -ENAMETOOLONG;
    return create();
}

/* Copies the first len bytes of the parent's file (from, the inherited
 * descriptor: the parent only appends past them, and len ends a line) to
 * the start of ours, whole lines at a time: a write that fails is taken
 * back to a line's end.  Through write(2), which the kernel copies in
 * order: a child killed meanwhile leaves whole lines and at most one cut
 * short. */
static int copy_in(int from, size_t len)
{
    char buf[16384];
    while (mf.len < len) {
        size_t want = len - mf.len < sizeof buf ? len - mf.len : sizeof buf;
        ssize_t n = pread(from, buf, want, (off_t)mf.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -EIO : -errno;   /* the parent's file was cut short */
        size_t whole = (size_t)n;
        while (whole > 0 && buf[whole - 1] != '\n')
            whole--;
        int rc = append(buf, whole ? whole : (size_t)n);   /* or one line longer than buf */
        if (rc != 0)
            return rc;
    }
    return 0;
}

int mapfile__after_fork(void)
{
    if (mf.fd < 0 || mf.pid == getpid())
        return 0;
    /* The inherited descriptor is the parent's file: read the entries from
     * it, then let go of it without writing a byte. */
    int parent = mf.fd;
    size_t len = mf.len;
    mf.fd = -1;
    mf.len = 0;
    int rc = create();
    if (rc == 0)
        rc = copy_in(parent, len);
    close(parent);
    if (rc != 0)
        drop();
    return rc;
}

int mapfile__add(const void *start, size_t size, const char *name, size_t namelen)
{
    int rc = mf.fd >= 0 && mf.pid != getpid() ? mapfile__after_fork() : 0;
    if (rc != 0)
        return rc;
    if (mf.fd < 0)
        return -EBADF;
    char head[48], stackbuf[512];
    int hl = snprintf(head, sizeof head, "%lx %zx ", (unsigned long)(uintptr_t)start, size);
    size_t len = (size_t)hl + namelen + 1;
    char *line = len <= sizeof stackbuf ? stackbuf : malloc(len);
    if (line == NULL)
        return -ENOMEM;
    memcpy(line, head, (size_t)hl);
    for (size_t i = 0; i < namelen; i++)
        line[hl + i] = (name[i] == '\n' || name[i] == '\r') ? ' ' : name[i];
    line[len - 1] = '\n';
    /* One write per line, at the end of the file: a reader of the live
     * file (pymerge -) sees it grow, and takes a last line only once its
     * newline is there. */
    rc = append(line, len);
    if (line != stackbuf)
        free(line);
    return rc;
}

void mapfile__close(void)
{
    drop();
}

const char *mapfile__path(void)
{
    return mf.fd >= 0 && mf.pid == getpid() ? mf.path : NULL;
}

const char *mapfile__dir(void)
{
    return mf.dir;
}
