/* test_perfdata_source.c - a mapped input truncated by another process
 * while being read (merge/perfdata/perfdata_source.c): the one-line error
 * for faults in our mapping, the previous SIGBUS handler for any other
 * fault and after pd_source__exit. */
#include "check.h"
#include "perfdata_source.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGES 4
#define TEMP "/tmp/test_perfdata_source-"

static long page;

/* A temporary file of PAGES pages, already unlinked; its name in path. */
static int temp_file(char *path)
{
    strcpy(path, TEMP "XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, PAGES * page) == 0);
    return fd;
}

static void previous(int sig)
{
    (void)sig;
    _exit(42);
}

/* Run fn in a child with stderr to a pipe: its exit status (or 128 +
 * signal) and what it printed. */
static int child(void (*fn)(void), char *out, size_t outlen)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 2);
        fn();
        _exit(0);
    }
    close(p[1]);
    size_t len = 0;
    ssize_t n;
    while ((n = read(p[0], out + len, outlen - 1 - len)) > 0)  /* to EOF: several writes */
        len += (size_t)n;
    out[len] = 0;
    close(p[0]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static struct src mapped_src(char *path)
{
    struct src s;
    memset(&s, 0, sizeof(s));
    s.fd = temp_file(path);
    s.seekable = 1;
    s.end = (u64)(PAGES * page);
    pd_source__map(&s, path);
    CHECK(s.map != NULL);
    return s;
}

/* The file shrinks after mapping, and the reader touches a page past the
 * new end: our message, status 2. */
static void truncated_input(void)
{
    char path[64];
    signal(SIGBUS, previous);
    struct src s = mapped_src(path);
    unlink(path);
    CHECK(ftruncate(s.fd, page) == 0);
    volatile u8 x = s.map[2 * page];
    (void)x;
    _exit(0);
}

/* A fault in a mapping that is not an input (as in libelf's): the previous
 * handler gets it. */
static void other_mapping(void)
{
    char path[64], other[64];
    signal(SIGBUS, previous);
    struct src s = mapped_src(path);
    unlink(path);
    int fd = temp_file(other);
    unlink(other);
    const u8 *m = mmap(NULL, PAGES * page, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED);
    CHECK(ftruncate(fd, page) == 0);
    volatile u8 x = m[2 * page];
    (void)x;
    pd_source__exit(&s);
    _exit(0);
}

/* A SIGBUS sent by kill is no fault of the input either. */
static void sent_signal(void)
{
    char path[64];
    signal(SIGBUS, previous);
    struct src s = mapped_src(path);
    unlink(path);
    raise(SIGBUS);
    pd_source__exit(&s);
    _exit(0);
}

/* After pd_source__exit the previous handler is back. */
static void restored(void)
{
    char path[64];
    signal(SIGBUS, previous);
    struct src s = mapped_src(path);
    unlink(path);
    struct sigaction sa;
    sigaction(SIGBUS, NULL, &sa);
    CHECK(sa.sa_handler != previous);
    pd_source__exit(&s);
    sigaction(SIGBUS, NULL, &sa);
    CHECK(sa.sa_handler == previous);
    _exit(0);
}

int main(void)
{
    char out[512];
    page = sysconf(_SC_PAGESIZE);
    CHECK(child(truncated_input, out, sizeof(out)) == 2);
    CHECK(strncmp(out, "pymerge: " TEMP, strlen("pymerge: " TEMP)) == 0);
    CHECK(strstr(out, ": the file shrank while being read\n") != NULL);
    CHECK(child(other_mapping, out, sizeof(out)) == 42 && !out[0]);
    CHECK(child(sent_signal, out, sizeof(out)) == 42 && !out[0]);
    CHECK(child(restored, out, sizeof(out)) == 0 && !out[0]);
    return 0;
}
