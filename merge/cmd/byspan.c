/* byspan.c - file names and patterns for --by-span (byspan.h). */
#include "byspan.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *byspan__pattern(const char *name)
{
    char *p = xmalloc(2 * strlen(name) + 3), *w = p;
    *w++ = '^';
    for (const char *c = name; *c; c++) {
        if (strchr("\\^$.|?*+()[]{}", *c))
            *w++ = '\\';
        *w++ = *c;
    }
    *w++ = '$';
    *w = '\0';
    return p;
}

static char *safe(const char *name)
{
    char *s = xstrdup(*name ? name : "_");
    for (char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_'))
            *c = '_';
    if (s[0] == '.')
        s[0] = '_';             /* no hidden files, no ".." */
    return s;
}

static const char *extension(const char *format)
{
    static const char *const ext[][2] = {{"folded", ".folded"}, {"svg", ".svg"},
                                         {"pprof", ".pb.gz"}, {"speedscope", ".speedscope.json"},
                                         {"trace", ".trace.json"}};
    for (size_t i = 0; i < sizeof(ext) / sizeof(*ext); i++)
        if (!strcmp(format, ext[i][0]))
            return ext[i][1];
    return ".txt";
}

char *byspan__path(const char *dir, const char *const *names, size_t i, const char *format)
{
    char *mine = safe(names[i]);
    size_t same = 0;
    for (size_t j = 0; j < i; j++) {
        char *other = safe(names[j]);
        same += !strcmp(other, mine);
        free(other);
    }
    size_t len = strlen(dir) + strlen(mine) + 40;
    char *path = xmalloc(len);
    if (same)
        snprintf(path, len, "%s/%s-%zu%s", dir, mine, same + 1, extension(format));
    else
        snprintf(path, len, "%s/%s%s", dir, mine, extension(format));
    free(mine);
    return path;
}
