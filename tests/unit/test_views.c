/* test_views.c - the mixed view drops every libpyperfmap hook between two
 * Python frames (merge/views.c, merge/symbols.c).  The hooks are read from
 * libpyperfmap/evalhook.c itself (argv[1]): every function taking the
 * eval-frame arguments (HOOK_PARAMS), so a hook added there without
 * teaching pymerge its name fails here. */
#include "check.h"
#include "symbols.h"
#include "views.h"

#include <regex.h>
#include <string.h>

/* "g (a.py)" <- hook <- _PyEval_EvalFrameDefault <- "f (a.py)", leaf
 * first: the mixed view must keep only the two Python frames. */
static void dropped_between_python_frames(const char *hook)
{
    struct symbols_opts so = {0};
    struct symbols *sy = symbols__new(&so);
    CHECK(sy);
    uint32_t in[] = {
        symbols__named(sy, "py::g:/tmp/a.py", FRAME_PYTHON),
        symbols__named(sy, hook, FRAME_USER),
        symbols__named(sy, "_PyEval_EvalFrameDefault", FRAME_USER),
        symbols__named(sy, "py::f:/tmp/a.py", FRAME_PYTHON),
    }, out[4];
    struct view_opts vo = {.view = VIEW_MIXED};
    size_t n = view__apply(&vo, sy, in, 4, out);
    if (n != 2 || out[0] != in[0] || out[1] != in[3]) {
        fprintf(stderr, "the mixed view keeps %s: %zu frames\n", hook, n);
        CHECK(0);
    }
    symbols__delete(sy);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    FILE *f = fopen(argv[1], "r");
    CHECK(f);
    regex_t re;
    CHECK(regcomp(&re, "[ *](pyperfmap_[a-z_0-9]+)\\(HOOK_PARAMS", REG_EXTENDED) == 0);
    char line[512];
    int hooks = 0;
    while (fgets(line, sizeof(line), f)) {
        regmatch_t m[2];
        if (regexec(&re, line, 2, m, 0) != 0)
            continue;
        char name[128];
        int len = (int)(m[1].rm_eo - m[1].rm_so);
        snprintf(name, sizeof(name), "%.*s", len, line + m[1].rm_so);
        dropped_between_python_frames(name);
        /* as a compiler's clone of it is named */
        strcat(name, ".cold");
        dropped_between_python_frames(name);
        hooks++;
    }
    regfree(&re);
    fclose(f);
    /* the plain and path hooks, their first calls, the traced call and the
     * benchmark's no-op: a scan that finds fewer has lost its way */
    CHECK(hooks >= 6);
    printf("%d hook declarations checked\n", hooks);
    return 0;
}
