/*
 * out_speedscope.c - folded stacks -> speedscope JSON, one profile per thread.
 */
#include "out_speedscope.h"
#include "folded.h"
#include "intern.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void put_json_string(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int out_speedscope__write(FILE *f, const struct folded_line *lines, size_t n,
                          const char *name, const char *unit)
{
    struct intern *frames = intern__new();
    /* Lines are sorted, so each thread's lines are one run. */
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", f);
    fputs("\"exporter\":\"pymerge\",\"name\":", f);
    put_json_string(f, name, strlen(name));
    fputs(",\"activeProfileIndex\":0,\"profiles\":[", f);
    size_t i = 0;
    int first_profile = 1;
    while (i < n) {
        const char *semi = strchr(lines[i].text, ';');
        size_t tlen = semi ? (size_t)(semi - lines[i].text) : strlen(lines[i].text);
        size_t j = i;
        u64 total = 0;
        while (j < n && strncmp(lines[j].text, lines[i].text, tlen) == 0
               && (lines[j].text[tlen] == ';' || lines[j].text[tlen] == 0))
            total += lines[j++].weight;
        fputs(first_profile ? "" : ",", f);
        first_profile = 0;
        fputs("{\"type\":\"sampled\",\"name\":", f);
        put_json_string(f, lines[i].text, tlen);
        fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
                unit, total);
        for (size_t k = i; k < j; k++) {
            fputs(k > i ? ",[" : "[", f);
            const char *p = lines[k].text + tlen;
            int first = 1;
            while (*p == ';') {
                const char *s = p + 1, *e = strchr(s, ';');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                p = s + len;
                folded__annotation(s, &len);
                fprintf(f, first ? "%" PRIu32 : ",%" PRIu32, intern__id(frames, s, len));
                first = 0;
            }
            fputc(']', f);
        }
        fputs("],\"weights\":[", f);
        for (size_t k = i; k < j; k++)
            fprintf(f, k > i ? ",%" PRIu64 : "%" PRIu64, lines[k].weight);
        fputs("]}", f);
        i = j;
    }
    fputs("],\"shared\":{\"frames\":[", f);
    for (u32 id = 0; id < intern__count(frames); id++) {
        const char *s = intern__str(frames, id);
        fputs(id ? ",{\"name\":" : "{\"name\":", f);
        put_json_string(f, s, strlen(s));
        fputc('}', f);
    }
    fputs("]}}\n", f);
    intern__delete(frames);
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
