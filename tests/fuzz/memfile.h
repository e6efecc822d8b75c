/*
 * memfile.h - the fuzz input as a file name, for readers that take a path:
 * one memfd per process, rewritten for each input, named through
 * /proc/self/fd.  No disk is touched in the loop.
 */
#ifndef PYMERGE_FUZZ_MEMFILE_H
#define PYMERGE_FUZZ_MEMFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *memfile(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("memfd");
        abort();
    }
    return path;
}

#endif
