/*
 * intern.h - a string interner: equal strings get one stable pointer and
 * a dense id, so later stages compare and hash names as integers.
 */
#ifndef PYMERGE_INTERN_H
#define PYMERGE_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern;

struct intern *intern__new(void);
void intern__delete(struct intern *in);   /* accepts NULL */

/* Id of the string s[0..len); the same id for equal strings. */
uint32_t intern__id(struct intern *in, const char *s, size_t len);
/* The NUL-terminated string of an id; valid until intern__delete. */
const char *intern__str(const struct intern *in, uint32_t id);
uint32_t intern__count(const struct intern *in);

#endif
