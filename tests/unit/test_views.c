/* test_views.c - which frames each view keeps (merge/model/views.c, with the
 * frames' roles from merge/symbols/symbols.c), on stacks of named frames: the
 * native view keeps all; the mixed view drops interpreter plumbing next to
 * a Python frame, folds a blocking GIL wait into one frame and strips the
 * launcher; the python view keeps Python frames and the leaf.  pyperfmap's
 * own frames (merge/symbols/ownframes.c: known by their file, then their
 * symbol) leave both: hooks and samplers go, its own work is one
 * [pyperfmap] frame in the mixed view.  And the mixed view drops every
 * libpyperfmap hook between two Python frames: the hooks are read from
 * libpyperfmap/evalhook.c itself (argv[1]), every function taking the
 * eval-frame arguments (HOOK_PARAMS), so a hook added there without
 * teaching pymerge its name fails here. */
#include "check.h"
#include "ownframes.h"
#include "symbols.h"
#include "views.h"

#include <regex.h>
#include <string.h>

#define MAXF 16
#define EXTENSION "/site/pyperfmap/_pyperfmap.cpython-312-x86_64-linux-gnu.so"
#define PRELOAD "/site/pyperfmap/libpyperfmap-preload.so"

static enum frame_kind spec_kind(const char *spec);

/* A frame's spec: "py::NAME:FILE" a Python frame, "K NAME" a kernel one,
 * "R NAME" a root label, "E NAME" native code of pyperfmap's extension,
 * "P NAME" of its malloc interposer, anything else native code. */
static const char *spec_name(const char *spec)
{
    return !strncmp(spec, "K ", 2) || !strncmp(spec, "R ", 2) || !strncmp(spec, "E ", 2) ||
                   !strncmp(spec, "P ", 2)
               ? spec + 2
               : spec;
}

/* The frame of spec, with the role its file and name give it (a frame of
 * a file is made so by symbols.c's resolution, which needs a recording). */
static uint32_t spec_frame(struct symbols *sy, const char *spec)
{
    uint32_t id = symbols__named(sy, spec_name(spec), spec_kind(spec));
    const char *file = !strncmp(spec, "E ", 2) ? EXTENSION : !strncmp(spec, "P ", 2) ? PRELOAD : NULL;
    ((struct frame *)symbols__get(sy, id))->own = (uint8_t)ownframes__role(file, spec_name(spec));
    return id;
}

static enum frame_kind spec_kind(const char *spec)
{
    if (!strncmp(spec, "py::", 4))
        return FRAME_PYTHON;
    if (!strncmp(spec, "K ", 2))
        return FRAME_KERNEL;
    return !strncmp(spec, "R ", 2) ? FRAME_ROOT : FRAME_USER;
}

/* Applies view (native_leaf for the python view) to the stack in, and
 * checks the names of the frames kept against want, leaf first. */
static void expect(enum view view, int native_leaf, const char *const *in, size_t n,
                   const char *const *want, size_t n_want)
{
    struct symbols_opts so = {0};
    struct symbols *sy = symbols__new(&so);
    CHECK(sy);
    uint32_t ids[MAXF], out[MAXF];
    CHECK(n <= MAXF);
    for (size_t i = 0; i < n; i++)
        ids[i] = spec_frame(sy, in[i]);
    struct view_opts vo = {.view = view, .native_leaf = native_leaf};
    size_t m = view__apply(&vo, sy, ids, n, out);
    int same = m == n_want;
    for (size_t i = 0; same && i < m; i++)
        same = !strcmp(symbols__get(sy, out[i])->name, spec_name(want[i]));
    if (!same) {
        fprintf(stderr, "view %d kept %zu frames:", (int)view, m);
        for (size_t i = 0; i < m; i++)
            fprintf(stderr, " %s;", symbols__get(sy, out[i])->name);
        fprintf(stderr, "\n");
        CHECK(0);
    }
    symbols__delete(sy);
}

#define N(a) (sizeof(a) / sizeof(*(a)))

/* A stack with plumbing, a GIL wait and the launcher, every view. */
static const char *const busy[] = {
    "memcpy", "PyObject_Vectorcall", "py::g:/app/a.py", "_PyEval_EvalFrameDefault",
    "_PyFunction_Vectorcall.constprop.0", "py::f:/app/a.py", "qsort_r", "PyObject_Call",
    "call_back", "py::<module>:/app/a.py", "PyEval_EvalCode", "py::_run_code:<frozen runpy>",
    "py::_run_module_as_main:<frozen runpy>", "Py_RunMain", "_start", "R python3",
};

/* The native view is every frame as perf names it, plumbing included. */
static void native_keeps_every_frame(void)
{
    expect(VIEW_NATIVE, 0, busy, N(busy), busy, N(busy));
}

/* Mixed: a run of plumbing that touches a Python frame on either side
 * goes (PyObject_Vectorcall between memcpy and g; the eval loop between g
 * and f); between two native frames it stays (PyObject_Call between
 * qsort_r and call_back); the launcher's frames go, with the plumbing
 * that led into the program's <module>, and the native frames rootward of
 * the launcher stay. */
static void mixed_drops_plumbing_next_to_python(void)
{
    const char *const want[] = {
        "memcpy", "py::g:/app/a.py", "py::f:/app/a.py", "qsort_r", "PyObject_Call", "call_back",
        "py::<module>:/app/a.py", "Py_RunMain", "_start", "python3",
    };
    expect(VIEW_MIXED, 0, busy, N(busy), want, N(want));
}

/* Python: the Python frames and the root, plus the native leaf when asked
 * (the innermost frame, whatever code it is). */
static void python_keeps_python_frames_and_leaf(void)
{
    const char *const leaf[] = {"memcpy", "py::g:/app/a.py", "py::f:/app/a.py",
                                "py::<module>:/app/a.py", "python3"};
    expect(VIEW_PYTHON, 1, busy, N(busy), leaf, N(leaf));
    expect(VIEW_PYTHON, 0, busy, N(busy), leaf + 1, N(leaf) - 1);
    const char *const kernel[] = {"K schedule", "py::f:/app/a.py", "main"};
    const char *const kept[] = {"K schedule", "py::f:/app/a.py"};
    expect(VIEW_PYTHON, 1, kernel, N(kernel), kept, N(kept));
}

/* A thread blocked in take_gil: take_gil and everything leafward of it
 * become one [GIL wait], and the calls that led into it (the GIL_ENTRY
 * functions) go too, so the wait sits under the code that wanted to run,
 * in the mixed and python views alike.  An uncontended take_gil (nothing
 * blocking leafward of it) is just code, and so is a block rootward of it. */
static void gil_wait_folded_when_it_blocks(void)
{
    const char *const blocked[] = {
        "K futex_wait_queue", "__futex_abstimed_wait_common", "pthread_cond_timedwait",
        "take_gil.constprop.0", "PyEval_RestoreThread", "_PyEval_HandleEvalBreaker",
        "time_sleep", "py::f:/app/a.py", "main",
    };
    const char *const folded[] = {"[GIL wait]", "time_sleep", "py::f:/app/a.py", "main"};
    expect(VIEW_MIXED, 0, blocked, N(blocked), folded, N(folded));
    const char *const py[] = {"[GIL wait]", "py::f:/app/a.py"};
    expect(VIEW_PYTHON, 0, blocked, N(blocked), py, N(py));
    expect(VIEW_NATIVE, 0, blocked, N(blocked), blocked, N(blocked));

    const char *const uncontended[] = {"pthread_mutex_lock", "take_gil", "PyEval_RestoreThread",
                                       "py::f:/app/a.py"};
    expect(VIEW_MIXED, 0, uncontended, N(uncontended), uncontended, N(uncontended));
    const char *const waits_rootward[] = {"pthread_mutex_lock", "take_gil", "pthread_cond_wait",
                                          "py::f:/app/a.py"};
    expect(VIEW_MIXED, 0, waits_rootward, N(waits_rootward), waits_rootward, N(waits_rootward));
}

/* The launcher (python -m pyperfmap, runpy) goes only from stacks that
 * reach the program: a stack still inside it keeps it whole; each of its
 * spellings (the module's file, runpy's file or frozen name) counts. */
static void launcher_stripped_only_below_the_program(void)
{
    const char *const inside[] = {"py::_get_module_details:<frozen runpy>",
                                  "py::_run_module_as_main:<frozen runpy>", "Py_RunMain"};
    expect(VIEW_MIXED, 0, inside, N(inside), inside, N(inside));
    const char *const files[] = {"py::main:/app/a.py", "py::<module>:/app/a.py",
                                 "py::_run_code:/usr/lib/python3.11/runpy.py",
                                 "py::<module>:/site/pyperfmap/__main__.py", "Py_RunMain"};
    const char *const want[] = {"py::main:/app/a.py", "py::<module>:/app/a.py", "Py_RunMain"};
    expect(VIEW_MIXED, 0, files, N(files), want, N(want));
}

/* pyperfmap's first call of a function: its trampoline made, its perf-map
 * line written (a system call, the syscalls mode's marker leaf).  Mixed:
 * one [pyperfmap] frame under the caller, the marker kept; python: the
 * marker under the caller.  The hook that led there goes either way. */
static void own_work_is_one_frame(void)
{
    const char *const in[] = {
        "R [syscall pwrite64]", "K ksys_pwrite64", "__libc_pwrite", "E mapfile__add",
        "E new_trampoline", "E pyperfmap_first_call", "E pyperfmap_first_eval",
        "_PyEval_EvalFrameDefault", "py::f:/app/a.py", "R python3",
    };
    const char *const mixed[] = {"R [syscall pwrite64]", "[pyperfmap]", "py::f:/app/a.py",
                                 "R python3"};
    const char *const python[] = {"R [syscall pwrite64]", "py::f:/app/a.py", "R python3"};
    expect(VIEW_MIXED, 1, in, N(in), mixed, N(mixed));
    expect(VIEW_PYTHON, 1, in, N(in), python, N(python));
    expect(VIEW_NATIVE, 1, in, N(in), in, N(in));
    /* at exit, no Python frame calling: [pyperfmap] is the python view's leaf */
    const char *const at_exit[] = {"__ftruncate64", "E mapfile__close", "E close_at_exit",
                                   "Py_FinalizeEx", "R python3"};
    const char *const exit_want[] = {"[pyperfmap]", "R python3"};
    expect(VIEW_PYTHON, 1, at_exit, N(at_exit), exit_want, N(exit_want));
}

/* An allocation's stack ends at the function that allocated, not in the
 * sampler (Python's allocators) or the interposer (malloc); and the eval
 * hook is no python-view leaf, its time is the Python frame's. */
static void samplers_and_hooks_go(void)
{
    const char *const py[] = {"E sampled_python_alloc", "E hs_malloc", "PyList_New",
                              "py::f:/app/a.py", "R python3"};
    const char *const py_want[] = {"PyList_New", "py::f:/app/a.py", "R python3"};
    expect(VIEW_MIXED, 1, py, N(py), py_want, N(py_want));
    expect(VIEW_PYTHON, 1, py, N(py), py_want, N(py_want));
    const char *const c[] = {"P sampled_native_alloc", "P malloc", "keep_block", "R python3"};
    const char *const c_want[] = {"keep_block", "R python3"};
    expect(VIEW_MIXED, 1, c, N(c), c_want, N(c_want));
    const char *const hook[] = {"E pyperfmap_eval", "[unknown]", "py::f:/app/a.py", "R python3"};
    const char *const hook_want[] = {"[unknown]", "py::f:/app/a.py", "R python3"};
    expect(VIEW_PYTHON, 1, hook, N(hook), hook_want, N(hook_want));
}

/* Whose frame it is comes from its file: a user's function of any name
 * stays, the interposer's malloc is pyperfmap's and libc's is not. */
static void roles_by_file_then_symbol(void)
{
    CHECK(ownframes__role("/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc") == OWN_NONE);
    CHECK(ownframes__role(PRELOAD, "malloc") == OWN_PASS);
    CHECK(ownframes__role("/app/libmine.so", "pyperfmap_eval") == OWN_NONE);
    CHECK(ownframes__role("/app/_pyperfmap_helpers.so", "new_trampoline") == OWN_NONE);
    CHECK(ownframes__role(NULL, "sampled_python_alloc") == OWN_NONE);
    CHECK(ownframes__role(EXTENSION, "new_trampoline") == OWN_WORK);
    CHECK(ownframes__role("/b/_pyperfmap.so", "mapfile__add") == OWN_WORK);
    CHECK(ownframes__role(EXTENSION, "pyperfmap_eval.cold") == OWN_PASS);
    CHECK(ownframes__role(EXTENSION, "Py_DECREF") == OWN_PASS);
    CHECK(ownframes__role(EXTENSION, NULL) == OWN_PASS);
    const char *const in[] = {"pyperfmap_eval", "py::f:/app/a.py", "R python3"};
    expect(VIEW_PYTHON, 1, in, N(in), in, N(in));
}

/* "g (a.py)" <- hook <- _PyEval_EvalFrameDefault <- "f (a.py)", leaf
 * first: the mixed view must keep only the two Python frames. */
static void dropped_between_python_frames(const char *hook)
{
    struct symbols_opts so = {0};
    struct symbols *sy = symbols__new(&so);
    CHECK(sy);
    char spec[160];
    snprintf(spec, sizeof(spec), "E %s", hook);
    uint32_t in[] = {
        symbols__named(sy, "py::g:/tmp/a.py", FRAME_PYTHON),
        spec_frame(sy, spec),
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
    native_keeps_every_frame();
    mixed_drops_plumbing_next_to_python();
    python_keeps_python_frames_and_leaf();
    gil_wait_folded_when_it_blocks();
    launcher_stripped_only_below_the_program();
    own_work_is_one_frame();
    samplers_and_hooks_go();
    roles_by_file_then_symbol();
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
