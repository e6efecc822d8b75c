/* kallsyms.h - kernel symbols from /proc/kallsyms or a saved copy. */
#ifndef PYMERGE_KALLSYMS_H
#define PYMERGE_KALLSYMS_H

#include "symtab.h"

/*
 * Load the text and data symbols perf would load (types T, W, D, B) from
 * path into t.  Returns 0, or a negative errno.  *hidden is set when every
 * address reads as zero, as kptr_restrict makes them for this user.
 * *text receives the address of _text (0 if absent), against which the
 * recording's own _text tells how far KASLR moved the kernel since.
 */
int kallsyms__load(struct symtab *t, const char *path, int *hidden, uint64_t *text);

#endif
