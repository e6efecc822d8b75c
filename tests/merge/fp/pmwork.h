#ifndef PMWORK_H
#define PMWORK_H
unsigned long lib_work(unsigned long n);
#endif
