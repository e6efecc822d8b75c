/*
 * dwdump - THROWAWAY test driver until pymerge's own perf.data reader
 * exists: reads MMAP2 and SAMPLE records of a file-mode perf.data written
 * with --call-graph dwarf, unwinds each sample with unwind_dwarf, and prints
 *   S <tid> <time> <stop> <user frames>
 *   F <path> <file offset hex>        (one per user frame, leaf first)
 * Mappings are kept per pid without time (the test programs never unmap).
 */
#define _POSIX_C_SOURCE 200809L
#include "unwind_dwarf.h"
#include "trampoline.h"

#include <glob.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct map { uint32_t pid; uint64_t start, end, pgoff; char *path; };
static struct map *maps;
static size_t nmaps;

/* The perf map of the one Python process a test records (/tmp/perf-PID.map). */
struct sym { uint64_t start, size; char name[256]; };
static struct sym *syms;
static size_t nsyms;
static uint32_t syms_pid;

static void load_perf_map(uint32_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
    FILE *f = fopen(path, "r");
    syms_pid = pid;
    while (f && fgets(line, sizeof(line), f)) {
        struct sym s;
        if (sscanf(line, "%lx %lx %255[^\n]", &s.start, &s.size, s.name) != 3)
            break;
        syms = realloc(syms, (nsyms + 1) * sizeof(*syms));
        syms[nsyms++] = s;
    }
    if (f)
        fclose(f);
}

static const struct sym *perf_sym(uint32_t pid, uint64_t addr)
{
    if (pid != syms_pid)
        load_perf_map(pid);
    for (size_t i = nsyms; i-- > 0;)
        if (addr - syms[i].start < syms[i].size)
            return &syms[i];
    return NULL;
}

static int lookup(void *ctx, uint64_t addr, struct unwind_map *m)
{
    uint32_t pid = *(uint32_t *)ctx;
    const struct sym *s = perf_sym(pid, addr);
    if (s && !strncmp(s->name, "py::", 4)) {
        const struct sym *arena = perf_sym(pid, addr & ~(uint64_t)(PYPERFMAP_ARENA_SIZE - 1));
        int ours = arena && !strcmp(arena->name, PYPERFMAP_ARENA_SYMBOL);
        uint64_t start = ours ? addr & ~(uint64_t)(PYPERFMAP_TRAMPOLINE_SIZE - 1) : s->start;
        *m = (struct unwind_map){ours ? UNWIND_MAP_PYPERFMAP : UNWIND_MAP_CPYTHON_PERF,
                                 start, s->start + s->size, 0, NULL, NULL};
        return 0;
    }
    for (size_t i = nmaps; i-- > 0;)
        if (maps[i].pid == pid && addr >= maps[i].start && addr < maps[i].end) {
            if (maps[i].path[0] != '/')
                return -1;
            *m = (struct unwind_map){UNWIND_MAP_ELF, maps[i].start, maps[i].end,
                                     maps[i].pgoff, maps[i].path, maps[i].path};
            return 0;
        }
    return -1;
}

static const char *path_of(uint32_t pid, uint64_t addr, uint64_t *off)
{
    struct unwind_map m;
    if (lookup(&pid, addr, &m) != 0)
        return NULL;
    *off = addr - m.start + m.pgoff;
    return m.path;
}

int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    if (argc != 2 || !f)
        return 2;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    uint8_t *buf = malloc((size_t)len);
    fseek(f, 0, SEEK_SET);
    if (fread(buf, 1, (size_t)len, f) != (size_t)len)
        return 2;
    uint64_t *h = (uint64_t *)buf;  /* magic size attr_size attrs{off,size} data{off,size} */
    struct perf_event_attr *attr = (struct perf_event_attr *)(buf + h[3]);
    uint64_t st = attr->sample_type, nregs = (uint64_t)__builtin_popcountll(attr->sample_regs_user);
    struct unwind_dwarf *u = unwind_dwarf__new();
    uint64_t ips[1024];
    /* Records are not in time order: take all mappings first. */
    for (int pass = 0; pass < 2; pass++)
    for (uint64_t p = h[5]; p < h[5] + h[6];) {
        struct perf_event_header *e = (struct perf_event_header *)(buf + p);
        uint8_t *b = (uint8_t *)(e + 1);
        p += e->size;
        if (e->type == PERF_RECORD_MMAP2 && pass == 0) {
            maps = realloc(maps, (nmaps + 1) * sizeof(*maps));
            uint64_t *q = (uint64_t *)(b + 8);
            char *path = (char *)(b + 8 + 24 + 24 + 8);
            glob_t g;   /* perf keeps a copy of the vdso in its cache */
            if (!strcmp(path, "[vdso]") && !glob("/root/.debug/[[]vdso]/*/vdso", 0, NULL, &g))
                path = g.gl_pathv[0];
            maps[nmaps++] = (struct map){*(uint32_t *)b, q[0], q[0] + q[1], q[2], strdup(path)};
            if (path != (char *)(b + 8 + 24 + 24 + 8))
                globfree(&g);
            continue;
        }
        if (e->type != PERF_RECORD_SAMPLE || pass == 0)
            continue;
        uint64_t *q = (uint64_t *)b, t = 0, nk = 0;
        uint32_t pid = 0, tid = 0;
        if (st & PERF_SAMPLE_IDENTIFIER) q++;
        if (st & PERF_SAMPLE_IP) q++;
        if (st & PERF_SAMPLE_TID) { pid = ((uint32_t *)q)[0]; tid = ((uint32_t *)q)[1]; q++; }
        if (st & PERF_SAMPLE_TIME) t = *q++;
        if (st & PERF_SAMPLE_ADDR) q++;
        if (st & PERF_SAMPLE_ID) q++;
        if (st & PERF_SAMPLE_STREAM_ID) q++;
        if (st & PERF_SAMPLE_CPU) q++;
        if (st & PERF_SAMPLE_PERIOD) q++;
        if (st & PERF_SAMPLE_CALLCHAIN) { nk = *q; q += 1 + nk; }
        struct unwind_user user = {0};
        user.abi = *q++;
        user.mask = attr->sample_regs_user;
        if (user.abi) { user.regs = q; q += nregs; }
        uint64_t ssize = *q++;
        user.stack = (uint8_t *)q;
        if (ssize) { q = (uint64_t *)((uint8_t *)q + ssize); user.stack_size = *q; }
        unsigned n;
        enum unwind_stop stop = unwind_dwarf__walk(u, &user, lookup, &pid, ips, 1024, &n);
        printf("S %u %llu %s %u\n", tid, (unsigned long long)t, unwind_stop__name(stop), n);
        for (unsigned i = 0; i < n; i++) {
            uint64_t off = 0;
            const struct sym *sym = perf_sym(pid, ips[i]);
            if (sym) {
                printf("P %s\n", sym->name);
                continue;
            }
            const char *path = path_of(pid, ips[i], &off);
            printf("F %s %llx\n", path ? path : "?", (unsigned long long)(path ? off : ips[i]));
        }
    }
    if (unwind_dwarf__file_error(u))
        fprintf(stderr, "dwdump: %s\n", unwind_dwarf__file_error(u));
    unwind_dwarf__delete(u);
    free(buf);
    return 0;
}
