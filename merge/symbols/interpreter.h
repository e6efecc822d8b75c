/*
 * interpreter.h - CPython's own function names, as far as pymerge treats
 * them specially: the calls between two Python frames, and the GIL.  The
 * one place that lists them, grouped by the versions that have them.
 */
#ifndef PYMERGE_INTERPRETER_H
#define PYMERGE_INTERPRETER_H

/* Whether name (matched without a suffix such as .cold or .constprop.0) is
 * interpreter plumbing: a function of the interpreter between two Python
 * frames, which the python view leaves out. */
int interpreter__is_plumbing(const char *name);

/* GIL_TAKE for the function that blocks until the GIL is free, GIL_ENTRY
 * for those that call it on the way back into Python (symbols.h), else 0;
 * matched without a suffix. */
int interpreter__gil_role(const char *name);

#endif
