/*
 * mapfile.h - the process's perf map, <dir>/perf-<pid>.map.
 *
 * Lines are CPython's format, "<start hex> <size hex> <name>\n", which perf,
 * samply, hotspot and pymerge read.  Each line is one pwrite(2) at the end
 * of the file, so it is in the page cache the moment it is written: nothing
 * is lost when the process is killed or calls os._exit(), and the file holds
 * its entries and nothing else, however the process ends.
 *
 * What a reader can rely on, even while the process runs: every line that
 * ends in its newline is a whole entry.  A reader may catch the last line
 * without its newline while it is written; only in the map of a process
 * killed in the middle of a write (or of one whose file system filled and
 * could not give the bytes back) does such a line stay, last.
 *
 * None of these functions is thread-safe: the caller serialises them.
 * Each int function returns 0 or a negative errno, and keeps no message:
 * the caller names the file (mapfile__dir() and the pid) and says why.
 * Besides the errors of the system calls, two mean more than strerror says:
 *   -EEXIST  a file of another user's that we may not open has our name,
 *            left by an earlier process with this PID (/tmp's sticky bit
 *            forbids replacing it);
 *   -EPERM   what has our name is not a regular file of this user with one
 *            link (a planted hard link, device or other user's file), or
 *            may not be changed: it is left untouched.
 */
#ifndef PYPERFMAP_MAPFILE_H
#define PYPERFMAP_MAPFILE_H

#include <stddef.h>

/*
 * Opens <dir>/perf-<pid>.map for this process, refusing anything but a
 * regular file that this user owns (O_NOFOLLOW, mode 0600) and emptying what
 * a former process of the same pid left.  Returns 0 or a negative errno
 * (-ENAMETOOLONG for a dir too long to name the file in).  A no-op when
 * already open.
 */
int mapfile__open(const char *dir);

/*
 * Appends one entry.  Newlines in name become spaces so that one entry is
 * always one line.  In a forked child that has not yet moved to its own
 * file, moves first (see mapfile__after_fork).  Returns 0, -EBADF when the
 * map is closed, or the errno of the write that could not grow it
 * (-ENOSPC for a full file system).
 */
int mapfile__add(const void *start, size_t size, const char *name, size_t namelen);

/*
 * Appends one line (len bytes ending in its newline) to the line file,
 * <dir>/perf-<pid>.lines, opened, emptied and moved after a fork together
 * with the map and written the same way.  Its lines are libpyperfmap's
 * (evalhook.c writes them, merge/symbols/linefile.h reads them).  Returns
 * 0, the negative errno that kept the file from opening, or -EBADF.
 */
int mapfile__add_lines(const char *line, size_t len);

/*
 * In a forked child: switches to perf-<childpid>.map, which starts as a copy
 * of every entry the parent had written before the fork, because the child
 * still runs the inherited trampolines; the line file likewise.  Never
 * writes to the parent's files.
 * Returns 0, or a negative errno (the map is then closed in the child).
 */
int mapfile__after_fork(void);

/* Closes the file; later adds fail. */
void mapfile__close(void);

/* The open map's path, or NULL. */
const char *mapfile__path(void);

/* The dir of the last mapfile__open ("" before any): a map's failure
 * concerns <dir>/perf-<getpid()>.map even once it is closed. */
const char *mapfile__dir(void);

#endif
