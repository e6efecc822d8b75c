/*
 * py38.h - CPython 3.8's internals (cpython.h lists the names).  The hook
 * gets no thread state, and eval_frame is a field of the interpreter
 * struct, which is internal.
 */
#ifndef Py_BUILD_CORE
#  define Py_BUILD_CORE 1
#endif
#include "internal/pycore_pystate.h"

typedef PyFrameObject frame_t;
#define HOOK_PARAMS frame_t *frame, int throwflag
#define HOOK_ARGS frame, throwflag
/* A third argument that no one reads keeps the evaluator fourth, where
 * every other version's trampolines find it. */
#define TRAMPOLINE_PARAMS frame_t *frame, int throwflag, __attribute__((unused)) void *unused
#define TRAMPOLINE_ARGS frame, throwflag, NULL
typedef PyObject *(*trampoline_fn)(frame_t *, int, void *, void *, uint64_t, uint64_t);
#define EVAL_DEFAULT(frame) _PyEval_EvalFrameDefault(frame, throwflag)
#define EVAL_WITH(eval) ((PyObject *(*)(frame_t *, int))(eval))(frame, throwflag)

static inline _PyFrameEvalFunction get_eval(void) { return PyInterpreterState_Main()->eval_frame; }
static inline void set_eval(_PyFrameEvalFunction f) { PyInterpreterState_Main()->eval_frame = f; }

#define FRAME_CODE(frame) ((PyObject *)(frame)->f_code)
#define IS_CODE(code) 1
#define FRAME_GEN(frame) ((frame)->f_gen)
#define CALLER_FRAME(frame) ((frame)->f_back)
/* The address of its bytecode plus f_lasti, in bytes (-1 before the first
 * instruction). */
#define FRAME_POS(c) ((uint32_t)(code_base((c)->f_code) + (uintptr_t)(intptr_t)(c)->f_lasti))
#define FRAME_STARTED(frame, co) ((frame)->f_lasti >= 0)
#define FRAME_ARG0(frame) ((frame)->f_localsplus[0])

#define code_base(co) ((uintptr_t)PyBytes_AS_STRING((co)->co_code))
#define code_bytes(co) ((size_t)PyBytes_GET_SIZE((co)->co_code))
#define code_unit 1u
#define CPYTHON_QUALNAME 0
#define CPYTHON_LNOTAB 1
#define RequestCodeExtraIndex _PyEval_RequestCodeExtraIndex
#define Code_SetExtra _PyCode_SetExtra

struct raised {
    PyObject *type, *value, *tb;
};
#define raised__save(r) PyErr_Fetch(&(r)->type, &(r)->value, &(r)->tb)
#define raised__restore(r) PyErr_Restore((r)->type, (r)->value, (r)->tb)

/* The C Task's wake-up callback: an object of this type holding its task. */
#define TASK_WAKEUP_WRAPPER_NAME "TaskWakeupMethWrapper"
struct task_wakeup_wrapper {
    PyObject_HEAD
    PyObject *task;
};
#define GetOptionalAttr _PyObject_LookupAttr
