/*
 * stacks.h - interned stacks.
 *
 * A stack is an array of frame ids, root first.  Equal stacks are stored
 * once (hash table over the id arrays) and named by a dense id, so a
 * sample is a pair of small integers.
 */
#ifndef PYMERGE_STACKS_H
#define PYMERGE_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stacks;

struct stacks *stacks__new(void);
void stacks__delete(struct stacks *st);   /* accepts NULL */

/* The id of root_first[0..n); the same id for equal arrays. */
uint32_t stacks__intern(struct stacks *st, const uint32_t *root_first, size_t n);

size_t stacks__count(const struct stacks *st);
/* The frames of stack id, root first. */
const uint32_t *stacks__get(const struct stacks *st, uint32_t id, size_t *n);

#endif
