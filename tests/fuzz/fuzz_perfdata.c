/*
 * fuzz_perfdata.c - the perf.data reader (merge/perfdata/perfdata.c) on any bytes:
 * header, attrs, features, records, zstd chunks, read to the end.
 *
 * Built twice: fuzz_perfdata_file takes the input as a whole file (file or
 * pipe mode, as its header says); fuzz_perfdata_pipe (PIPE_MODE) puts a
 * pipe-mode header in front, so every input is a stream of records.
 */
#include "memfile.h"
#include "perfdata.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef PIPE_MODE
    static uint8_t *buf;
    static size_t cap;
    if (size + 16 > cap) {
        cap = size + 16;
        buf = realloc(buf, cap);
        if (!buf)
            abort();
    }
    memcpy(buf, "PERFILE2\x10\0\0\0\0\0\0\0", 16);
    memcpy(buf + 16, data, size);
    data = buf;
    size += 16;
#endif
    struct perf_reader *r = perf_reader__open(memfile(data, size));
    if (!r)
        return 0;
    struct pd_event ev;
    /* Everything the reader hands out, as pymerge's pipeline reads it. */
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++)
        (void)perf_reader__attr(r, i)->name[0];
    for (size_t i = 0; i < perf_reader__n_build_ids(r); i++)
        (void)perf_reader__build_id(r, i);
    while (perf_reader__next(r, &ev) > 0)
        ;
    size_t tsize;
    (void)perf_reader__tracing_data(r, &tsize);
    (void)perf_reader__lost(r);
    (void)perf_reader__truncated(r);
    perf_reader__delete(r);
    return 0;
}
