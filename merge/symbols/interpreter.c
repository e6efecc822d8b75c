/*
 * interpreter.c - CPython's own function names (interpreter.h).
 *
 * One recording can hold several CPythons, and pymerge learns no process's
 * version, so it matches the union of every version's names: no name here
 * means anything else in another version.  A new CPython adds its new names
 * in a group of their own (docs/trampolines.md, "Porting to a new
 * CPython").  The groups say which of pyenv's 3.8-3.13 builds have each as
 * a symbol (`nm`); the last group's are inlined in those builds, and kept
 * for builds that keep them.
 */
#include "interpreter.h"

#include <string.h>

#include "symbols.h"

static int in(const char *name, const char *const *names, size_t n)
{
    size_t len = strcspn(name, ".");
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncmp(name, names[i], len) == 0)
            return 1;
    return 0;
}

#define IN(name, names) in(name, names, sizeof(names) / sizeof(*(names)))

int interpreter__is_plumbing(const char *name)
{
    static const char *const exact[] = {
        /* 3.8 to 3.13 */
        "_PyEval_EvalFrameDefault", "PyEval_EvalFrame", "PyEval_EvalFrameEx",
        "_PyFunction_Vectorcall", "_PyObject_MakeTpCall", "method_vectorcall", "slot_tp_call",
        "slot_tp_init", "slot_tp_new", "type_call", "gen_iternext", "PyEval_EvalCode",
        "PyEval_EvalCodeEx", "PyVectorcall_Call", "method_vectorcall_NOARGS",
        "method_vectorcall_O", "method_vectorcall_FASTCALL", "method_vectorcall_FASTCALL_KEYWORDS",
        "method_vectorcall_VARARGS", "method_vectorcall_VARARGS_KEYWORDS", "object_vacall",
        /* 3.8 */
        "cfunction_call_varargs", "call_function", "_PyCFunction_FastCallDict",
        "_PyMethodDef_RawFastCallKeywords", "_PyMethodDef_RawFastCallDict",
        /* 3.8, 3.9 */
        "function_code_fastcall", "_PyEval_EvalCodeWithName",
        /* 3.9 */
        "_PyEval_EvalCode",
        /* 3.9 to 3.13 */
        "cfunction_call", "vectorcall_method", "vectorcall_maybe",
        "method_vectorcall_FASTCALL_KEYWORDS_METHOD",
        /* 3.8, 3.9, 3.11 to 3.13; 3.10 has gen_send_ex2 */
        "gen_send_ex", "gen_send_ex2",
        /* 3.10 to 3.13 */
        "_PyEval_Vector", "gen_send",
        /* 3.12, 3.13: the evaluator that -X perf's trampolines call */
        "py_trampoline_evaluator",
        /* 3.13 */
        "_PyVectorcall_Call",
        /* inlined in these builds */
        "_PyEval_EvalFrame", "do_call_core", "vectorcall_unbound", "_PyCFunction_FastCallKeywords",
    };
    /* Families of names, in every version. */
    static const char *const prefix[] = {
        "_PyObject_Call", "PyObject_Call", "_PyObject_Vectorcall", "PyObject_Vectorcall",
        "_PyObject_FastCall", "PyObject_FastCall", "cfunction_vectorcall_",
        "_PyFunction_FastCall", "_PyEval_EvalFrame",
    };
    if (IN(name, exact))
        return 1;
    for (size_t i = 0; i < sizeof(prefix) / sizeof(*prefix); i++)
        if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
            return 1;
    return 0;
}

int interpreter__gil_role(const char *name)
{
    static const char *const take[] = {"take_gil"};     /* 3.8 to 3.13 */
    static const char *const entry[] = {
        /* 3.8 to 3.13 */
        "PyEval_RestoreThread", "PyEval_AcquireThread", "PyEval_AcquireLock", "PyGILState_Ensure",
        /* 3.12, 3.13 */
        "_Py_HandlePending",
        /* 3.13 */
        "_PyThreadState_Attach",
        /* inlined in these builds */
        "eval_frame_handle_pending", "_PyEval_HandleEvalBreaker",
    };
    if (IN(name, take))
        return GIL_TAKE;
    return IN(name, entry) ? GIL_ENTRY : 0;
}
