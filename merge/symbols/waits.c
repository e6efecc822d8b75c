/*
 * waits.c - what an off-CPU thread waits on (waits.h): a small table of
 * the functions a wait goes through, CPython's, the C library's and the
 * kernel's system call entries (these name it when the C library's frames
 * have no symbols).  A GIL wait is named before (views.c's [GIL wait]).
 */
#include "waits.h"

#include "symbols.h"

#include <string.h>

static const struct {
    const char *name;
    enum wait_kind kind;
} known[] = {
    {"lock_PyThread_acquire_lock", WAIT_LOCK}, {"rlock_acquire", WAIT_LOCK},
    {"PyThread_acquire_lock_timed", WAIT_LOCK}, {"sem_clockwait", WAIT_LOCK},
    {"sem_timedwait", WAIT_LOCK}, {"sem_wait", WAIT_LOCK}, {"do_futex_wait", WAIT_LOCK},
    {"pthread_mutex_lock", WAIT_LOCK}, {"___pthread_mutex_lock", WAIT_LOCK},
    {"pthread_cond_wait", WAIT_LOCK}, {"___pthread_cond_wait", WAIT_LOCK},
    {"pthread_cond_timedwait", WAIT_LOCK}, {"___pthread_cond_timedwait", WAIT_LOCK},
    {"pthread_cond_clockwait", WAIT_LOCK}, {"__x64_sys_futex", WAIT_LOCK},
    {"time_sleep", WAIT_SLEEP}, {"pysleep", WAIT_SLEEP}, {"clock_nanosleep", WAIT_SLEEP},
    {"__clock_nanosleep", WAIT_SLEEP}, {"nanosleep", WAIT_SLEEP}, {"__nanosleep", WAIT_SLEEP},
    {"__x64_sys_clock_nanosleep", WAIT_SLEEP}, {"__x64_sys_nanosleep", WAIT_SLEEP},
    {"select_select_impl", WAIT_SELECT}, {"select", WAIT_SELECT}, {"__select", WAIT_SELECT},
    {"pselect", WAIT_SELECT}, {"__x64_sys_select", WAIT_SELECT}, {"__x64_sys_pselect6", WAIT_SELECT},
    {"select_poll_poll_impl", WAIT_POLL}, {"poll", WAIT_POLL}, {"__poll", WAIT_POLL},
    {"ppoll", WAIT_POLL}, {"__ppoll", WAIT_POLL}, {"__x64_sys_poll", WAIT_POLL},
    {"__x64_sys_ppoll", WAIT_POLL},
    {"select_epoll_poll_impl", WAIT_EPOLL}, {"epoll_wait", WAIT_EPOLL}, {"epoll_pwait", WAIT_EPOLL},
    {"__x64_sys_epoll_wait", WAIT_EPOLL}, {"__x64_sys_epoll_pwait", WAIT_EPOLL},
    {"read", WAIT_READ}, {"__libc_read", WAIT_READ}, {"readv", WAIT_READ}, {"pread64", WAIT_READ},
    {"recv", WAIT_READ}, {"__libc_recv", WAIT_READ}, {"recvfrom", WAIT_READ},
    {"__libc_recvfrom", WAIT_READ}, {"recvmsg", WAIT_READ}, {"__libc_recvmsg", WAIT_READ},
    {"__x64_sys_read", WAIT_READ}, {"__x64_sys_readv", WAIT_READ}, {"__x64_sys_pread64", WAIT_READ},
    {"__x64_sys_recvfrom", WAIT_READ}, {"__x64_sys_recvmsg", WAIT_READ},
    {"write", WAIT_WRITE}, {"__libc_write", WAIT_WRITE}, {"writev", WAIT_WRITE},
    {"send", WAIT_WRITE}, {"__libc_send", WAIT_WRITE}, {"sendto", WAIT_WRITE},
    {"__libc_sendto", WAIT_WRITE}, {"sendmsg", WAIT_WRITE}, {"__libc_sendmsg", WAIT_WRITE},
    {"__x64_sys_write", WAIT_WRITE}, {"__x64_sys_writev", WAIT_WRITE},
    {"__x64_sys_sendto", WAIT_WRITE}, {"__x64_sys_sendmsg", WAIT_WRITE},
    {"accept", WAIT_ACCEPT}, {"accept4", WAIT_ACCEPT}, {"__libc_accept", WAIT_ACCEPT},
    {"__libc_accept4", WAIT_ACCEPT}, {"__x64_sys_accept", WAIT_ACCEPT},
    {"__x64_sys_accept4", WAIT_ACCEPT},
    {"connect", WAIT_CONNECT}, {"__libc_connect", WAIT_CONNECT}, {"__x64_sys_connect", WAIT_CONNECT},
    {"waitpid", WAIT_CHILD}, {"__waitpid", WAIT_CHILD}, {"wait4", WAIT_CHILD},
    {"__wait4", WAIT_CHILD}, {"waitid", WAIT_CHILD}, {"__waitid", WAIT_CHILD},
    {"__x64_sys_wait4", WAIT_CHILD}, {"__x64_sys_waitid", WAIT_CHILD},
};

static const char *const leaves[WAIT_KINDS] = {
    [WAIT_LOCK] = "[off-cpu: lock]", [WAIT_SLEEP] = "[off-cpu: sleep]",
    [WAIT_SELECT] = "[off-cpu: select]", [WAIT_POLL] = "[off-cpu: poll]",
    [WAIT_EPOLL] = "[off-cpu: epoll]", [WAIT_READ] = "[off-cpu: read]",
    [WAIT_WRITE] = "[off-cpu: write]", [WAIT_ACCEPT] = "[off-cpu: accept]",
    [WAIT_CONNECT] = "[off-cpu: connect]", [WAIT_CHILD] = "[off-cpu: wait]",
};

enum wait_kind waits__kind(const char *name, int native)
{
    if (strcmp(name, "[off-cpu: S]") == 0)
        return WAIT_SLEEPING;
    if (!native)
        return WAIT_NONE;
    /* without glibc's prefixes and suffixes: __GI___poll, read@@GLIBC_2.2.5,
     * select_select_impl.constprop.0 */
    if (strncmp(name, "__GI_", 5) == 0)
        name += 5;
    size_t len = strcspn(name, ".@");
    for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
        if (strlen(known[i].name) == len && strncmp(known[i].name, name, len) == 0)
            return known[i].kind;
    return WAIT_NONE;
}

const char *waits__leaf(enum wait_kind k)
{
    return leaves[k];
}

void waits__name_leaf(const struct symbols *sy, uint32_t *fr, size_t n)
{
    if (n < 2 || symbols__get(sy, fr[0])->wait != WAIT_SLEEPING)
        return;
    size_t py = 1;
    while (py < n && symbols__get(sy, fr[py])->kind != FRAME_PYTHON)
        py++;
    for (size_t i = py; i-- > 1;) {
        enum wait_kind k = (enum wait_kind)symbols__get(sy, fr[i])->wait;
        if (k > WAIT_SLEEPING) {
            fr[0] = symbols__wait_leaf(sy, k);
            return;
        }
    }
}
