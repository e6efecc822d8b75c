/*
 * calltree.h - a profile's samples merged into one tree of frames, root
 * first, for the writers that draw or compare whole paths (svg, diff).
 *
 * Node 0 is the "all" root; its children are the threads' root labels.
 * Each node carries the weight of every sample through it (total) and of
 * the samples that end at it (self), in the profile's weight type.
 * Siblings are sorted by name, as flamegraph.pl lays them out.
 */
#ifndef PYMERGE_CALLTREE_H
#define PYMERGE_CALLTREE_H

#include "profile.h"

#include <stdint.h>

#define CALLTREE_NONE UINT32_MAX

struct ctnode {
    uint32_t frame;             /* profile frame id; CALLTREE_NONE for the root */
    uint32_t parent, first_child, next_sibling;
    uint32_t depth;             /* 0 for the root */
    uint64_t total, self;
};

struct calltree {
    const struct profile *p;
    struct ctnode *nodes;
    size_t n, cap;
};

/* Builds the tree of p's samples; calltree__exit frees it. */
void calltree__init(struct calltree *t, const struct profile *p);
void calltree__exit(struct calltree *t);   /* accepts a zeroed struct */

/* The child of node named name, of kind kind, or CALLTREE_NONE: how a
 * path of one profile is found in another's tree. */
uint32_t calltree__child(const struct calltree *t, uint32_t node, const char *name,
                         uint8_t kind);

#endif
