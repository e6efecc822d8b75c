/* Signal frames: a handler that burns CPU on top of an interrupted loop.
 *   main -> interrupted_loop -> [signal frame] -> on_signal -> handler_spin
 * Unwinding from handler_spin back to main goes through the kernel's
 * signal frame, whose CFI (glibc's __restore_rt) is DWARF expressions. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;
static volatile sig_atomic_t handled;

__attribute__((noinline)) static void handler_spin(void)
{
    for (unsigned long i = 0; i < 2000000; i++)
        sink += i * i;
}

__attribute__((noinline)) static void on_signal(int sig)
{
    (void)sig;
    handler_spin();
    handled++;
}

__attribute__((noinline)) static void interrupted_loop(double seconds)
{
    struct timespec ts;
    do {
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while (ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
    /* Stopped here, not in main or at exit (the test wants each handler
     * over this loop): a signal still pending comes on setitimer's return. */
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    sink++;     /* no tail call: this frame stays below setitimer's */
}

int main(int argc, char **argv)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_PROF, &it, NULL);
    interrupted_loop(argc > 1 ? atof(argv[1]) : 1.0);
    return handled > 0 ? 0 : 1;
}
