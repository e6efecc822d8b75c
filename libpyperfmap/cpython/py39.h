/*
 * py39.h - CPython 3.9 and 3.10's internals (cpython.h lists the names).
 * The hook gets the thread state and a PyFrameObject, whose fields are
 * public; 3.10 counts f_lasti in code units and has co_lines().
 */
typedef PyFrameObject frame_t;
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
#define FRAME_GEN(frame) ((frame)->f_gen)
#define CALLER_FRAME(frame) ((frame)->f_back)
/* The address of its bytecode plus f_lasti (-1 before the first
 * instruction), in code_units. */
#define FRAME_POS(c) ((uint32_t)(code_base((c)->f_code) + (uintptr_t)(intptr_t)(c)->f_lasti))
#define FRAME_STARTED(frame, co) ((frame)->f_lasti >= 0)
#define FRAME_ARG0(frame) ((frame)->f_localsplus[0])

#define code_base(co) ((uintptr_t)PyBytes_AS_STRING((co)->co_code))
#define code_bytes(co) ((size_t)PyBytes_GET_SIZE((co)->co_code))
#define code_unit (PY_VERSION_HEX >= 0x030A0000 ? 2u : 1u)
#define CPYTHON_QUALNAME 0
#define CPYTHON_LNOTAB (PY_VERSION_HEX < 0x030A0000)
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
