#ifndef DWWORK_H
#define DWWORK_H
unsigned long lib_inner(unsigned long n);
unsigned long lib_outer(unsigned long n);
unsigned long lib_syscalls(int fd, unsigned long n);
unsigned long lib_callback(unsigned long (*fn)(unsigned long), unsigned long n);
unsigned long lib_tiny(unsigned long n);
#endif
