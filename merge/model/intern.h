/*
 * intern.h - an interner of byte strings: equal strings get one stable
 * pointer and a dense id, so later stages compare and hash names as
 * integers.  The profile interns its stacks here too, each as the bytes
 * of its frame ids: a copy starts 4-byte aligned.
 */
#ifndef PYMERGE_INTERN_H
#define PYMERGE_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern;

struct intern *intern__new(void);
void intern__delete(struct intern *in);   /* accepts NULL */

/* Id of the bytes s[0..len) (s may be NULL when len is 0); the same id
 * for equal strings. */
uint32_t intern__id(struct intern *in, const void *s, size_t len);
/* The bytes of an id, NUL-terminated, and their length; valid until
 * intern__delete. */
const char *intern__str(const struct intern *in, uint32_t id);
size_t intern__len(const struct intern *in, uint32_t id);
uint32_t intern__count(const struct intern *in);

#endif
