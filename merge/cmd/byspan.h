/*
 * byspan.h - pymerge --by-span DIR: one profile per span name, each file
 * named after its span (characters other than letters, digits, '.', '-'
 * and '_' become '_'; a name that comes out the same as an earlier one
 * gets "-2", "-3"...).
 */
#ifndef PYMERGE_BYSPAN_H
#define PYMERGE_BYSPAN_H

#include <stddef.h>

/* The --span pattern that matches exactly name (an extended regex). */
char *byspan__pattern(const char *name);

/* DIR/FILE.ext for the i-th of names[0..n) (earlier ones decide the
 * suffix); ext from the writer's name ("svg" -> ".svg"). */
char *byspan__path(const char *dir, const char *const *names, size_t i, const char *format);

#endif
