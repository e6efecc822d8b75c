/* fuzz_folded.c - the folded-text parser (merge/input/in_folded.c) on any
 * bytes, and input.c's telling of an input's kind from its first bytes. */
#include "in_folded.h"
#include "input.h"
#include "profile.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile *p = profile__new(0);
    (void)input__kind_of(data, size < INPUT_HEAD ? size : INPUT_HEAD);    /* what AUTO makes of it */
    (void)folded__parse(p, (const char *)data, size, "fuzz");
    profile__delete(p);
    return 0;
}
