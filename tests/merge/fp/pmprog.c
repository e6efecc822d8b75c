/*
 * pmprog.c - the pymerge test program, built with frame pointers so that
 * `perf record -g` sees whole user stacks.  Its call tree is known:
 *
 *   main -> phase_cpu -> spin                     (user CPU)
 *   main -> phase_lib -> lib_work -> lib_inner    (shared library)
 *   main -> phase_sys -> do_writes -> write       (system calls)
 *   main -> phase_thread: a thread named "pm worker" runs thread_body -> spin
 *   main -> phase_child: fork and exec of this program, which, named
 *           "pm child", runs child_body -> spin
 *
 * ROUNDS (argv[1], default 3) scales the run time.
 */
#include "pmwork.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned long n)
{
    unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i ^ (x >> 3);
    sink = x;
}

__attribute__((noinline)) void phase_cpu(void)
{
    spin(60000000);
}

__attribute__((noinline)) void phase_lib(void)
{
    sink = lib_work(60000000);
}

__attribute__((noinline)) void do_writes(int n)
{
    int fd = open("/dev/null", O_WRONLY);
    char c = 'x';
    for (int i = 0; i < n; i++)
        if (write(fd, &c, 1) != 1)
            abort();
    close(fd);
}

__attribute__((noinline)) void phase_sys(void)
{
    do_writes(150000);
}

__attribute__((noinline)) static void *thread_body(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "pm worker");
    spin(30000000);
    return NULL;
}

__attribute__((noinline)) void phase_thread(void)
{
    pthread_t t;
    pthread_create(&t, NULL, thread_body, NULL);
    pthread_join(t, NULL);
}

__attribute__((noinline)) void child_body(void)
{
    prctl(PR_SET_NAME, "pm child");
    spin(30000000);
}

__attribute__((noinline)) void phase_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "pmprog", "child", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        child_body();
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    for (int i = 0; i < rounds; i++) {
        phase_cpu();
        phase_lib();
        phase_sys();
        phase_thread();
        phase_child();
    }
    return 0;
}
