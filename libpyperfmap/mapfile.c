/*
 * mapfile.c - /tmp/perf-<pid>.map written through a shared mapping.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* mremap */
#endif
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define INITIAL_CAPACITY (64 * 1024)

static struct {
    int fd;            /* -1 when closed */
    pid_t pid;         /* the process the file belongs to */
    char *view;        /* shared mapping of the file, cap bytes */
    size_t len, cap;   /* bytes of entries written, bytes mapped */
    char dir[PATH_MAX];
    char path[PATH_MAX];
} mf = {.fd = -1};

/* Writes newlines over [from, to) of the file.  Written, not fallocated
 * and then filled through the mapping: the blocks are allocated all the
 * same (a store into a shared mapping that the file system cannot back
 * raises SIGBUS instead of returning ENOSPC), and a process killed meanwhile
 * leaves padding, never a run of NUL bytes. */
static int pad(size_t from, size_t to)
{
    char nl[4096];
    memset(nl, '\n', sizeof nl);
    for (size_t at = from; at < to;) {
        size_t n = to - at < sizeof nl ? to - at : sizeof nl;
        ssize_t w = pwrite(mf.fd, nl, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w == 0 ? ENOSPC : errno;
            /* Give back what was written: the file was `from` long.  Should
             * that fail too, only padding stays, which readers skip. */
            (void)!ftruncate(mf.fd, (off_t)from);
            return -e;
        }
        at += (size_t)w;
    }
    return 0;
}

/* Grows the file and its mapping so that `need` more bytes fit. */
static int reserve(size_t need)
{
    if (mf.len + need <= mf.cap)
        return 0;
    size_t cap = mf.cap ? mf.cap : INITIAL_CAPACITY;
    while (cap < mf.len + need)
        cap *= 2;
    int rc = pad(mf.cap, cap);
    if (rc != 0)
        return rc;
    char *view = mf.view
        ? mremap(mf.view, mf.cap, cap, MREMAP_MAYMOVE)
        : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, mf.fd, 0);
    if (view == MAP_FAILED)
        return -errno;
    mf.view = view;
    mf.cap = cap;
    return 0;
}

static void drop(void)
{
    if (mf.view)
        munmap(mf.view, mf.cap);
    if (mf.fd >= 0)
        close(mf.fd);
    mf.view = NULL;
    mf.fd = -1;
    mf.len = mf.cap = 0;
    mf.path[0] = '\0';
}

/* Opens this process's file under mf.dir, empty and with no mapping. */
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
    int rc = create();
    if (rc == 0 && (rc = reserve(1)) != 0)
        drop();
    return rc;
}

/* Writes the parent's entries at the start of the new file.  Through
 * write(2), not memcpy into the view: the kernel copies in order, so a child
 * killed meanwhile leaves whole lines and at most one cut short, where a
 * memcpy may store its chunks in any order and leave holes. */
static int copy_in(const char *p, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(mf.fd, p + done, len - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -ENOSPC : -errno;
        done += (size_t)n;
    }
    return 0;
}

int mapfile__after_fork(void)
{
    if (mf.fd < 0 || mf.pid == getpid())
        return 0;
    /* The inherited view still shows the parent's file: read the entries
     * from it, then let go of it without writing a byte. */
    char *parent = mf.view;
    size_t len = mf.len, cap = mf.cap;
    close(mf.fd);
    mf.fd = -1;
    mf.view = NULL;
    mf.len = mf.cap = 0;
    int rc = create();
    if (rc == 0 && (rc = reserve(len + 1)) == 0 && (rc = copy_in(parent, len)) == 0)
        mf.len = len;
    munmap(parent, cap);
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
    char head[48];
    int hl = snprintf(head, sizeof head, "%lx %zx ", (unsigned long)(uintptr_t)start, size);
    if ((rc = reserve((size_t)hl + namelen + 1)) != 0)
        return rc;
    /* A reader of the live file (pymerge -) must never take half a line:
     * it skips a line that starts with '#', so the line's first byte is
     * stored last, after the rest is visible. */
    char *line = mf.view + mf.len, *p = line + hl;
    line[0] = '#';
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(line + 1, head + 1, (size_t)hl - 1);
    for (size_t i = 0; i < namelen; i++)
        p[i] = (name[i] == '\n' || name[i] == '\r') ? ' ' : name[i];
    p[namelen] = '\n';
    __atomic_store_n(line, head[0], __ATOMIC_RELEASE);
    mf.len += (size_t)hl + namelen + 1;
    return 0;
}

void mapfile__close(void)
{
    if (mf.fd < 0)
        return;
    /* A child that never moved to its own file must not trim its parent's.
     * Should trimming fail, only padding stays, which readers skip. */
    if (mf.pid == getpid())
        (void)!ftruncate(mf.fd, (off_t)mf.len);
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
