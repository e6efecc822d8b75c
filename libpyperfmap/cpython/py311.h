/*
 * py311.h - CPython 3.11's internals (cpython.h lists the names).  The hook
 * gets an internal _PyInterpreterFrame that holds the code object; its
 * position is a pointer to its current instruction, inside the code object.
 */
#ifndef Py_BUILD_CORE
#  define Py_BUILD_CORE 1
#endif
#include "internal/pycore_frame.h"

typedef struct _PyInterpreterFrame frame_t;
#define HOOK_PARAMS PyThreadState *ts, frame_t *frame, int throwflag
#define HOOK_ARGS ts, frame, throwflag
#define TRAMPOLINE_PARAMS HOOK_PARAMS
#define TRAMPOLINE_ARGS HOOK_ARGS
typedef PyObject *(*trampoline_fn)(PyThreadState *, frame_t *, int, void *, uint64_t, uint64_t);
#define EVAL_DEFAULT(frame) _PyEval_EvalFrameDefault(ts, frame, throwflag)
#define EVAL_WITH(eval) ((PyObject *(*)(PyThreadState *, frame_t *, int))(eval))(ts, frame, throwflag)

static inline _PyFrameEvalFunction get_eval(void)
{
    return _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Main());
}
static inline void set_eval(_PyFrameEvalFunction f)
{
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Main(), f);
}

#define FRAME_CODE(frame) ((PyObject *)(frame)->f_code)
#define IS_CODE(code) 1
#define FRAME_GEN(frame) \
    ((frame)->owner == FRAME_OWNED_BY_GENERATOR ? (PyObject *)_PyFrame_GetGenerator(frame) : NULL)
/* The evaluator links the frame to its caller only after the hook. */
#define CALLER_FRAME(frame) (ts->cframe->current_frame)
#define FRAME_POS(c) ((uint32_t)(uintptr_t)(c)->prev_instr)
/* Its position reached the first traceable instruction (the RESUME after
 * RETURN_GENERATOR), as CPython's _PyFrame_IsIncomplete tests. */
#define FRAME_STARTED(frame, co) ((frame)->prev_instr >= _PyCode_CODE(co) + (co)->_co_firsttraceable)
#define FRAME_ARG0(frame) ((frame)->localsplus[0])

#define code_base(co) ((uintptr_t)_PyCode_CODE(co))
#define code_bytes(co) ((size_t)Py_SIZE(co) * sizeof(_Py_CODEUNIT))
#define code_unit 1u
#define CPYTHON_QUALNAME 1
#define CPYTHON_LNOTAB 0
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
