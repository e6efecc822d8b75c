/*
 * fuzz_tracedata.c - the TRACING_DATA framing and libtraceevent's format
 * parser (merge/perfdata/tracedata.c) on any bytes, then every field of every event
 * the input names ("ID: N" lines) read from the input itself as raw data,
 * numbers and strings (__data_loc, as uprobes' :string fetches make).
 */
#include "tracedata.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tracedata *td = tracedata__new(data, size);
    if (!td)
        return 0;
    for (const uint8_t *p = data; p + 4 < data + size; p++) {
        if (memcmp(p, "ID: ", 4) != 0)
            continue;
        uint64_t id = strtoull((const char *)p + 4, NULL, 10) & 0xffff;
        (void)tracedata__event_name(td, id);
        struct td_field_info fi;
        for (size_t i = 0; tracedata__field_info(td, id, i, &fi) == 0; i++) {
            struct td_field f;
            uint64_t v;
            const char *str;
            size_t len;
            if (tracedata__field(td, id, fi.name, &f) == 0)
                (void)td_field__read(&f, data, size, &v);
            if (tracedata__string_field(td, id, fi.name, &f) == 0 &&
                td_field__read_string(&f, data, size, &str, &len) == 0 && len)
                v = (uint8_t)str[len - 1];      /* the whole string is inside the input */
        }
    }
    tracedata__delete(td);
    return 0;
}
