/* fuzz_folded.c - the folded-text parser (merge/input/in_folded.c) on any bytes. */
#include "in_folded.h"
#include "profile.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile *p = profile__new(0);
    (void)folded__parse(p, (const char *)data, size, "fuzz");
    profile__delete(p);
    return 0;
}
