/* fuzz_pprof.c - the pprof reader (merge/input/in_pprof.c: gzip, protobuf-c's
 * decoder, every index and id checked) on any bytes. */
#include "in_pprof.h"
#include "profile.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile *p = profile__new(0);
    (void)pprof_in__parse(p, data, size, "fuzz");
    profile__delete(p);
    return 0;
}
