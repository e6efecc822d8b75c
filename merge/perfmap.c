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

int perfmap__load(struct symtab *t, const char *path)
{
    struct stat st;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    FILE *f = fopen(path, "re");

    if (!f)
        return -1;
    /* Anyone can write /tmp/perf-PID.map for someone else's PID. */
    if (fstat(fileno(f), &st) < 0 || (st.st_uid != 0 && st.st_uid != getuid())) {
        fclose(f);
        errno = EPERM;
        return -1;
    }
    while ((len = getline(&line, &cap, f)) > 0) {
        char *p = line, *end;
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
    }
    free(line);
    fclose(f);
    symtab__finish(t, 0);
    return 0;
}
