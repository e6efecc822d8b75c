/*
 * fuzz_pdrecord.c - one kernel record (merge/perfdata/perfdata_record.c) under any event
 * attributes: every sample_type combination, read formats, register
 * masks, sample_id_all.
 *
 * Input: sample_type, read_format, sample_regs_user, branch_sample_type
 * (8 bytes each), a flags byte (sample_id_all, freq), then the record; its
 * header's size field is set to the bytes given (at most 65528).
 */
#include "perfdata_record.h"

#include <stdlib.h>
#include <string.h>

#define FIXED 33

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static u64 rec_buf[65536 / 8];      /* records are 8-byte aligned */
    if (size < FIXED + 8)
        return 0;
    struct pd_attr a;
    memset(&a, 0, sizeof(a));
    a.name = "fuzz";
    memcpy(&a.attr.sample_type, data, 8);
    memcpy(&a.attr.read_format, data + 8, 8);
    memcpy(&a.attr.sample_regs_user, data + 16, 8);
    memcpy(&a.attr.branch_sample_type, data + 24, 8);
    a.attr.sample_id_all = data[32] & 1;
    a.attr.freq = data[32] >> 1 & 1;
    a.attr.sample_period = 1000;
    a.attr.size = sizeof(a.attr);
    size_t len = (size - FIXED) & ~(size_t)7;
    if (len > 65528)
        len = 65528;
    memcpy(rec_buf, data + FIXED, len);
    u16 size16 = (u16)len;
    memcpy((u8 *)rec_buf + 6, &size16, 2);
    struct pd_raw rec;
    memcpy(&rec.type, rec_buf, 4);
    memcpy(&rec.misc, (u8 *)rec_buf + 4, 2);
    rec.size = size16;
    rec.p = (const u8 *)rec_buf;
    rec.off = 0;
    rec.mapped = 0;
    struct pd_layout l = pd_record__layout_of(&a.attr);
    u64 id;
    (void)pd_record__id(&l, &rec, &id);
    (void)pd_record__time(&l, &rec);
    (void)pd_record__is_queued(rec.type);
    struct pd_event ev;
    const char *part;
    (void)pd_record__parse(&a, &l, &rec, &ev, &part);
    return 0;
}
