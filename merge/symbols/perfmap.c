/* perfmap.c - parse perf-PID.map files the way perf's dso__load_perf_map does. */
#include "perfmap.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Keeps the first bytes that followed the last line taken. */
static void after(struct perfmap_tail *tail, const char *bytes, size_t len)
{
    size_t room = sizeof(tail->next) - tail->len;
    size_t n = len < room ? len : room;
    memcpy(tail->next + tail->len, bytes, n);
    tail->len += n;
}

int perfmap__load(struct symtab *t, const char *path, struct perfmap_tail *tail)
{
    struct stat st;
    struct perfmap_tail seen = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    off_t at = 0;
    /* Non-blocking: a FIFO planted at the name must not hang the open. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f;

    if (fd < 0)
        return -errno;
    /* Anyone can write /tmp/perf-PID.map for someone else's PID. */
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != getuid())) {
        close(fd);
        errno = EPERM;
        return -EPERM;
    }
    if (!(f = fdopen(fd, "r"))) {
        int e = errno;
        close(fd);
        errno = e;
        return -e;
    }
    while ((len = getline(&line, &cap, f)) > 0) {
        char *p = line, *end;
        at += len;
        after(&seen, line, (size_t)len);
        if (line[len - 1] != '\n' && tail)
            break;          /* a writer may be halfway through it */
        if (line[len - 1] == '\n')
            line[--len] = 0;
        unsigned long long start = strtoull(p, &end, 16);
        if (end == p || *end != ' ')
            continue;
        p = end + 1;
        unsigned long long size = strtoull(p, &end, 16);
        if (end == p || *end != ' ' || !end[1])
            continue;
        const char *name = end + 1;
        symtab__add(t, start, size, STB_GLOBAL, STT_FUNC, name, strlen(name));
        seen.offset = at;
        seen.len = 0;
    }
    free(line);
    fclose(f);
    symtab__finish(t, 0);
    if (tail)
        *tail = seen;
    return 0;
}
