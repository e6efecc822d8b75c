/* Spends its time in the two functions of badcfi.S, whose CFI loops. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

void cfi_loop_frame(unsigned long n);
void cfi_loop_expr(unsigned long n);

int main(void)
{
    struct timespec ts;
    do {
        cfi_loop_frame(1000000);
        cfi_loop_expr(1000000);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while (ts.tv_sec * 1000000000L + ts.tv_nsec < 400000000L);
    return 0;
}
