/*
 * cpython.h - CPython's private internals that pyperfmap reads, one small
 * file per version family, chosen here and nowhere else.  evalhook.c and
 * tasks.c include this and hold only logic that every version shares.
 *
 * Each family file defines the same names (docs/trampolines.md, "Porting
 * to a new CPython", says what each must be and which tests prove it):
 *
 *   the eval-frame function (PEP 523):
 *     frame_t            what CPython hands the hook as its frame
 *     HOOK_PARAMS, HOOK_ARGS          the hook's parameters, and passing them
 *     TRAMPOLINE_PARAMS, TRAMPOLINE_ARGS  a trampoline's first three
 *                        (trampoline.h: its evaluator comes fourth)
 *     trampoline_fn      a trampoline's type
 *     EVAL_DEFAULT(frame)  the frame run by CPython's own evaluator
 *     EVAL_WITH(eval)    the hook's frame run by evaluator eval
 *     get_eval(), set_eval(f)  the main interpreter's eval-frame function
 *   frames (the macros may read the hook's ts):
 *     FRAME_CODE(frame)  its code object (3.13+: or not, for a shim frame)
 *     IS_CODE(code)      whether FRAME_CODE is a code object
 *     FRAME_GEN(frame)   its generator or coroutine, or NULL
 *     CALLER_FRAME(frame)  the frame it returns to, or NULL
 *     FRAME_POS(frame)   32 bits of where it is (trampoline.h, "position")
 *     FRAME_STARTED(frame, co)  a generator frame is past its body's start
 *     FRAME_ARG0(frame)  its first argument, before it runs
 *   code objects:
 *     code_base(co), code_bytes(co), code_unit   what FRAME_POS counts in
 *     CPYTHON_QUALNAME   1: co_qualname exists; 0: evalhook.c computes it
 *     CPYTHON_LNOTAB     1: lines from co_lnotab; 0: from co_lines()
 *     RequestCodeExtraIndex, Code_SetExtra       the co_extra API's names
 *   the raised exception, kept across the slow path:
 *     struct raised, raised__save(&r), raised__restore(&r)
 *   asyncio (tasks.c, tasks_cpython.h):
 *     TASK_WAKEUP_WRAPPER_NAME, struct task_wakeup_wrapper   (up to 3.11)
 *     GetOptionalAttr    getattr that tells "no attribute" apart
 */
#ifndef PYPERFMAP_CPYTHON_H
#define PYPERFMAP_CPYTHON_H

#include <Python.h>
#include <frameobject.h>

#if PY_VERSION_HEX < 0x03090000
#  include "py38.h"
#elif PY_VERSION_HEX < 0x030B0000
#  include "py39.h"
#elif PY_VERSION_HEX < 0x030C0000
#  include "py311.h"
#elif PY_VERSION_HEX < 0x030D0000
#  include "py312.h"
#elif PY_VERSION_HEX < 0x030E0000
#  include "py313.h"
#else
#  include "py314.h"
#endif

#endif
