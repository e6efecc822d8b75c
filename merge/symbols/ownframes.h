/*
 * ownframes.h - which native frames are pyperfmap's own code.
 *
 * pyperfmap runs inside the profiled process: its eval hook between two
 * Python frames, its trampoline and perf-map writer on a function's first
 * call, its allocation samplers (the extension's and the malloc
 * interposer's).  A frame is pyperfmap's by the file its code is in (the
 * _pyperfmap extension, libpyperfmap-preload.so), never by its name alone:
 * a user's function may be called anything.  Its symbol then says what
 * part it plays, which decides what the user's views do with it.
 */
#ifndef PYMERGE_OWNFRAMES_H
#define PYMERGE_OWNFRAMES_H

enum own_role {
    OWN_NONE,   /* not pyperfmap's */
    OWN_PASS,   /* a hook or sampler the user's code passes through: dropped */
    OWN_WORK,   /* pyperfmap's own work (a first call, a map write): [pyperfmap] */
};

/* The role of symbol name (NULL: none found) in the file at dso_path. */
enum own_role ownframes__role(const char *dso_path, const char *name);

#endif
