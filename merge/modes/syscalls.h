/* syscalls.h - x86-64 system call names (generated into syscalls.c). */
#ifndef PYMERGE_SYSCALLS_H
#define PYMERGE_SYSCALLS_H

/* The name of system call nr ("write"), or NULL when it has none. */
const char *syscall_name(long nr);

#endif
