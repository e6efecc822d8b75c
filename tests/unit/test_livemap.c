/* test_livemap.c - pymerge reading the perf map of a process that is still
 * running (perf record -o - | pymerge -): libpyperfmap's writer
 * (libpyperfmap/mapfile.c) adds lines at the end of the file, which holds
 * nothing else; a lookup that misses must still find them, and must never
 * take a line that is only half written.  The map pymerge first read may
 * also be a stale one of an earlier process with the same PID, which the
 * process empties and rewrites; and neither a bad return address into the
 * stack before there is a map, nor the process's mapping of the map file,
 * may make pymerge give up on it.  (Only live, from a pipe: a recording read
 * from a file was made before, and its maps hold all its samples need.)
 * First, the errors that the writer's callers turn into their warning. */
#include "check.h"
#include "perfdata.h"
#include "perfmap.h"
#include "session.h"
#include "symbols.h"
#include "../../libpyperfmap/mapfile.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define BASE 0x7f0000001000ull
#define STACK 0x7ffea7bee000ull
#define MAPFILE 0x7f0000100000ull

static void add(uint64_t start, const char *name)
{
    CHECK(mapfile__add((const void *)(uintptr_t)start, 0x40, name, strlen(name)) == 0);
}

/* The name symbols gives addr, looked up once per address (frames are
 * cached per address, so each check uses a fresh one). */
static const char *name_at(struct symbols *sy, const struct process *proc, uint64_t addr)
{
    return symbols__get(sy, symbols__frame(sy, proc, addr, 0, 0))->name;
}

static void age(const char *path)
{
    struct timespec t[2] = {{1600000000, 0}, {1600000000, 0}};
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

/* An earlier process's map at path: five entries elsewhere, padded to the
 * size libpyperfmap's file starts at, last written long ago. */
static void stale(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f);
    for (int i = 0; i < 5; i++)
        fprintf(f, "%llx 40 py::stale%d:old.py\n", BASE + 0x8000 + 0x40ull * i, i);
    while (ftell(f) < 64 * 1024)
        fputc('\n', f);
    CHECK(fclose(f) == 0);
    age(path);
}

/* A CPython -X perf map is appended to with stdio: a reader can catch its
 * last line without its newline. */
static void unterminated(const char *dir)
{
    char path[64];
    snprintf(path, sizeof(path), "%s/cpython.map", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("1000 40 py::a:x.py\n2000 40 py::b", f) >= 0 && fclose(f) == 0);
    struct symtab t = {0};
    struct perfmap_tail tail;
    CHECK(perfmap__load(&t, path, &tail) == 0);
    CHECK(t.n == 1 && tail.offset == 19 && tail.len == 13 && !memcmp(tail.next, "2000 40 py::b", 13));
    symtab__exit(&t);
    CHECK(perfmap__load(&t, path, NULL) == 0);      /* a finished map: all of it */
    CHECK(t.n == 2);
    symtab__exit(&t);
    CHECK(unlink(path) == 0);
}

/* What the writer refuses, each with the errno that mapfile.h promises,
 * leaving what it found at its name as it was. */
static void refusals(const char *dir, const char *path)
{
    CHECK(mapfile__add((const void *)(uintptr_t)BASE, 0x40, "f", 1) == -EBADF);
    char other[64], name[PATH_MAX + 16];
    snprintf(other, sizeof(other), "%s/other", dir);
    FILE *f = fopen(other, "w");
    CHECK(f && fputs("theirs\n", f) >= 0 && fclose(f) == 0);
    CHECK(link(other, path) == 0);          /* a hard link planted at our name */
    CHECK(mapfile__open(dir) == -EPERM);
    struct stat st;
    CHECK(stat(other, &st) == 0 && st.st_size == 7 && st.st_nlink == 2);
    CHECK(unlink(path) == 0 && symlink(other, path) == 0);
    CHECK(mapfile__open(dir) == -ELOOP);    /* never followed */
    CHECK(stat(other, &st) == 0 && st.st_size == 7);
    CHECK(unlink(path) == 0 && unlink(other) == 0);
    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    CHECK(mapfile__open(name) == -ENAMETOOLONG);
    CHECK(mapfile__path() == NULL);
}

int main(void)
{
    char dir[] = "/tmp/pymerge-livemap-XXXXXX";
    CHECK(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
    refusals(dir, path);

    /* The recording's data mappings too (perf record -d, or a tracepoint
     * with a stack): the stack, libpyperfmap's own mapping of its map file,
     * then the arena, made executable. */
    struct session *s = session__new();
    struct pd_event ev = {.type = PD_MMAP};
    ev.u.mmap = (struct pd_mmap){.pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
                                 .start = STACK, .len = 0x21000, .prot = PROT_READ | PROT_WRITE,
                                 .filename = "[stack]"};
    session__apply(s, &ev);
    char tmp_map[64];
    snprintf(tmp_map, sizeof(tmp_map), "/tmp/perf-%d.map", (int)getpid());
    /* pymerge's last resort for this PID: an earlier process's, if any */
    CHECK(unlink(tmp_map) == 0 || errno == ENOENT);
    ev.u.mmap.start = MAPFILE, ev.u.mmap.len = 0x10000, ev.u.mmap.filename = tmp_map;
    session__apply(s, &ev);
    ev.u.mmap.start = BASE, ev.u.mmap.len = 0x10000, ev.u.mmap.filename = "//anon";
    session__apply(s, &ev);
    ev.u.mmap.prot = PROT_READ | PROT_EXEC;
    session__apply(s, &ev);
    struct process *proc = session__thread(s, (uint32_t)getpid(), (uint32_t)getpid())->proc;
    struct symbols_opts opts = {.map_dir = dir, .live = 1};
    struct symbols *sy = symbols__new(&opts);
    CHECK(sy);
    /* Before there is a map: a bad return address into the stack, and a
     * sample in the arena, find nothing, and pymerge does not give up. */
    uint64_t entry;
    CHECK(symbols__trampoline(sy, proc, STACK + 0x100, &entry) == TRAMPOLINE_NONE);
    CHECK(symbols__trampoline(sy, proc, BASE + 0x8008, &entry) == TRAMPOLINE_NONE);

    stale(path);
    /* A sample before the process opened its map reads the stale one. */
    CHECK(!strcmp(name_at(sy, proc, BASE + 0x8010), "py::stale0:old.py"));

    /* The process empties and rewrites it; with the old time put back, its
     * size and first bytes tell. */
    CHECK(mapfile__open(dir) == 0);
    add(BASE, "py::first:app.py");
    age(path);
    CHECK(!strcmp(name_at(sy, proc, BASE + 0x10), "py::first:app.py"));
    char buf[4096];
    FILE *f = fopen(path, "r+");
    CHECK(f);
    size_t n = fread(buf, 1, sizeof(buf), f);
    const char *first = "7f0000001000 40 py::first:app.py\n";
    CHECK(n == strlen(first) && !memcmp(buf, first, n));   /* the writer's format, and only it */

    /* Added after pymerge read the map: the file grew by the line, found
     * on a miss. */
    struct stat before, after;
    CHECK(stat(path, &before) == 0);
    add(BASE + 0x40, "py::second:app.py");
    CHECK(stat(path, &after) == 0
          && after.st_size == before.st_size + (off_t)strlen("7f0000001040 40 py::second:app.py\n"));
    CHECK(symbols__trampoline(sy, proc, BASE + 0x48, &entry) != TRAMPOLINE_NONE);
    CHECK(entry == BASE + 0x40);
    CHECK(!strcmp(name_at(sy, proc, BASE + 0x50), "py::second:app.py"));

    /* A line caught while it is written: not taken, then taken once its
     * newline lands. */
    char line[] = "7f0000001080 40 py::third:app.py";
    CHECK(fseek(f, 0, SEEK_END) == 0 && fwrite(line, 1, strlen(line), f) == strlen(line));
    CHECK(fflush(f) == 0);
    CHECK(symbols__trampoline(sy, proc, BASE + 0x88, &entry) == TRAMPOLINE_NONE);
    CHECK(fputc('\n', f) == '\n' && fflush(f) == 0);
    CHECK(symbols__trampoline(sy, proc, BASE + 0x88, &entry) != TRAMPOLINE_NONE);
    CHECK(entry == BASE + 0x80);
    CHECK(!strcmp(name_at(sy, proc, BASE + 0x90), "py::third:app.py"));
    fclose(f);

    symbols__delete(sy);
    session__delete(s);
    mapfile__close();
    CHECK(unlink(path) == 0);
    snprintf(path, sizeof(path), "%s/perf-%d.lines", dir, (int)getpid());
    CHECK(unlink(path) == 0);     /* the map's line file, empty */
    unterminated(dir);
    CHECK(rmdir(dir) == 0);
    return 0;
}
