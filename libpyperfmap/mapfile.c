/*
 * mapfile.c - /tmp/perf-<pid>.map and its line file perf-<pid>.lines,
 * each written a line at a time.
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

struct file {
    int fd;            /* -1 when closed */
    size_t len;        /* bytes of entries written: the file's size */
    char path[PATH_MAX];
};

static struct {
    pid_t pid;         /* the process the files belong to */
    char dir[PATH_MAX];
    struct file map, lines;
    int lines_err;     /* why the line file could not be opened or moved, or 0 */
} mf = {.map.fd = -1, .lines.fd = -1};

/* Writes len bytes at the end of the file, all or none: a short write
 * (a full file system) is taken back, so the file stays whole lines. */
static int append(struct file *f, const char *p, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(f->fd, p + done, len - done, (off_t)(f->len + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n == 0 ? ENOSPC : errno;
            /* Should this fail too, a line cut short stays last, without
             * its newline, which readers of a live map wait for. */
            (void)!ftruncate(f->fd, (off_t)f->len);
            return -e;
        }
        done += (size_t)n;
    }
    f->len += len;
    return 0;
}

static void drop(struct file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    f->len = 0;
    f->path[0] = '\0';
}

/* Opens this process's file of that suffix under mf.dir, empty. */
static int create(struct file *f, const char *suffix)
{
    mf.pid = getpid();
    if (snprintf(f->path, sizeof f->path, "%s/perf-%ld.%s", mf.dir, (long)mf.pid, suffix)
        >= (int)sizeof f->path)
        return -ENAMETOOLONG;
    int fd = open(f->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        /* PIDs are reused, and /tmp is sticky: an earlier process of another
         * user may have left its map at our name, which we may not replace.
         * EEXIST says so: open() without O_EXCL never returns it. */
        if (e == EACCES && lstat(f->path, &st) == 0 && st.st_uid != geteuid())
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
    f->fd = fd;
    return 0;
}

/* The line file is a bonus: without it (no room, a planted file) the map
 * still names every function, and mapfile__add_lines says why not. */
static int create_both(void)
{
    int rc = create(&mf.map, "map");
    if (rc == 0)
        mf.lines_err = create(&mf.lines, "lines");
    return rc;
}

int mapfile__open(const char *dir)
{
    if (mf.map.fd >= 0 && mf.pid == getpid())
        return 0;
    if (mf.map.fd >= 0 && mapfile__after_fork() == 0)
        return 0;
    if (snprintf(mf.dir, sizeof mf.dir, "%s", dir) >= (int)sizeof mf.dir)
        return -ENAMETOOLONG;
    return create_both();
}

/* Copies the first len bytes of the parent's file (from, the inherited
 * descriptor: the parent only appends past them, and len ends a line) to
 * the start of ours, whole lines at a time: a write that fails is taken
 * back to a line's end.  Through write(2), which the kernel copies in
 * order: a child killed meanwhile leaves whole lines and at most one cut
 * short. */
static int copy_in(struct file *f, int from, size_t len)
{
    char buf[16384];
    while (f->len < len) {
        size_t want = len - f->len < sizeof buf ? len - f->len : sizeof buf;
        ssize_t n = pread(from, buf, want, (off_t)f->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -EIO : -errno;   /* the parent's file was cut short */
        size_t whole = (size_t)n;
        while (whole > 0 && buf[whole - 1] != '\n')
            whole--;
        int rc = append(f, buf, whole ? whole : (size_t)n);   /* or one line longer than buf */
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Moves f, the parent's file, to this process's: a copy of its entries. */
static int move_after_fork(struct file *f, const char *suffix)
{
    /* The inherited descriptor is the parent's file: read the entries from
     * it, then let go of it without writing a byte. */
    int parent = f->fd;
    size_t len = f->len;
    f->fd = -1;
    f->len = 0;
    int rc = create(f, suffix);
    if (rc == 0)
        rc = copy_in(f, parent, len);
    close(parent);
    if (rc != 0)
        drop(f);
    return rc;
}

int mapfile__after_fork(void)
{
    if (mf.map.fd < 0 || mf.pid == getpid())
        return 0;
    if (mf.lines.fd >= 0)
        mf.lines_err = move_after_fork(&mf.lines, "lines");
    int rc = move_after_fork(&mf.map, "map");
    if (rc != 0)
        drop(&mf.lines);
    return rc;
}

int mapfile__add(const void *start, size_t size, const char *name, size_t namelen)
{
    int rc = mf.map.fd >= 0 && mf.pid != getpid() ? mapfile__after_fork() : 0;
    if (rc != 0)
        return rc;
    if (mf.map.fd < 0)
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
    rc = append(&mf.map, line, len);
    if (line != stackbuf)
        free(line);
    return rc;
}

int mapfile__add_lines(const char *line, size_t len)
{
    int rc = mf.map.fd >= 0 && mf.pid != getpid() ? mapfile__after_fork() : 0;
    if (rc != 0)
        return rc;
    if (mf.lines.fd < 0)
        return mf.lines_err ? mf.lines_err : -EBADF;
    return append(&mf.lines, line, len);
}

void mapfile__close(void)
{
    drop(&mf.map);
    drop(&mf.lines);
}

const char *mapfile__path(void)
{
    return mf.map.fd >= 0 && mf.pid == getpid() ? mf.map.path : NULL;
}

const char *mapfile__dir(void)
{
    return mf.dir;
}
