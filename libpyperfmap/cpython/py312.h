/*
 * py312.h - CPython 3.12's internals (cpython.h lists the names): 3.11's
 * frames; the co_extra API and the raised exception under new names, and
 * the C Task's wake-up callback a PyCFunction bound to the task (tasks.c
 * follows it by the generic rule).
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
#define RequestCodeExtraIndex PyUnstable_Eval_RequestCodeExtraIndex
#define Code_SetExtra PyUnstable_Code_SetExtra

struct raised {
    PyObject *exc;
};
#define raised__save(r) ((r)->exc = PyErr_GetRaisedException())
#define raised__restore(r) PyErr_SetRaisedException((r)->exc)

#define GetOptionalAttr _PyObject_LookupAttr
