/* ownframes.c - pyperfmap's own frames, by file and then by symbol. */
#include "ownframes.h"

#include <string.h>

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The extension (_pyperfmap.cpython-312-x86_64-linux-gnu.so, or
 * _pyperfmap.so) and the interposer pyperf-record preloads, as
 * libpyperfmap/pyperfmap/meson.build names them. */
static int is_own_file(const char *dso_path, int *preload)
{
    const char *base = basename_of(dso_path);
    *preload = strcmp(base, "libpyperfmap-preload.so") == 0;
    return *preload || (strncmp(base, "_pyperfmap.", 11) == 0 && strstr(base + 10, ".so"));
}

/* The extension's functions that user code runs through: the eval hooks
 * (libpyperfmap/evalhook.c), which call the Python function's trampoline
 * and its eval loop, and the sampler of Python's allocators
 * (libpyperfmap/heapsample.c), which calls the allocator it wraps.  Their
 * time is the caller's.  Compared without a compiler's suffix (.cold). */
static int passes_through(const char *name)
{
    static const char *const exact[] = {
        "pyperfmap_eval", "pyperfmap_eval_path", "pyperfmap_eval_tasks",
        "pyperfmap_eval_path_tasks", "pyperfmap_noop_eval", "pyperfmap_first_eval",
        "pyperfmap_first_eval_path", "pyperfmap_next_task_frame",
        "pyperfmap_next_task_frame_path", "pyperfmap_coroutine_eval", "pyperfmap_traced_call",
        "pyperfmap_first_in_thread",
        "call_through_path", "call_trampoline_path",
        "sampled_python_alloc", "hs_malloc", "hs_calloc", "hs_realloc", "hs_free", "wrapped",
        "taken", "released", "call",
    };
    size_t len = strcspn(name, ".");
    for (size_t i = 0; i < sizeof(exact) / sizeof(*exact); i++)
        if (strlen(exact[i]) == len && strncmp(name, exact[i], len) == 0)
            return 1;
    return 0;
}

enum own_role ownframes__role(const char *dso_path, const char *name)
{
    int preload;
    if (!dso_path || !is_own_file(dso_path, &preload))
        return OWN_NONE;
    /* The interposer only passes allocations on (and samples some); an
     * unnamed address of the extension (a stripped copy) is most likely
     * its hot path, the eval hook. */
    if (preload || !name || passes_through(name))
        return OWN_PASS;
    /* CPython's inline functions (Py_DECREF) kept out of line: the
     * interpreter's code, whatever runs below them (a destructor) the user's */
    if (strncmp(name, "Py", 2) == 0 || strncmp(name, "_Py", 3) == 0)
        return OWN_PASS;
    return OWN_WORK;
}
