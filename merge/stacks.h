/*
 * stacks.h - interned stacks and their summed weights.
 *
 * A stack is an array of frame ids, root first.  Equal stacks are stored
 * once (hash table over the id arrays); adding a sample is a hash, a
 * compare and an add.
 */
#ifndef PYMERGE_STACKS_H
#define PYMERGE_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct stacks;

struct stacks *stacks__new(void);
void stacks__delete(struct stacks *st);   /* accepts NULL */

/* Add weight to the stack root, leaf_first[n-1], ..., leaf_first[0]. */
void stacks__add(struct stacks *st, uint32_t root, const uint32_t *leaf_first, size_t n,
                 uint64_t weight);

size_t stacks__count(const struct stacks *st);
/* The i-th distinct stack (in insertion order): root-first frames. */
const uint32_t *stacks__get(const struct stacks *st, size_t i, size_t *n, uint64_t *weight);

#endif
