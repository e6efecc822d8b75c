/*
 * stitch.h - complete a DWARF stack that the stack copy cut off, from
 * another sample of the same thread that went through the same call.
 *
 * `perf record --call-graph dwarf,SIZE` copies SIZE bytes of the user stack
 * from the stack pointer up; a deeper stack unwinds only part of the way
 * and ends `[truncated]`.  Every pyperfmap trampoline keeps a number in its
 * frame that no other call of the process had (its activation identity,
 * libpyperfmap/trampoline.h), so when two samples of one thread show the
 * same trampoline with the same number, they were taken inside the same
 * call, and all frames outward of it (its callers) are the same in both.
 * A truncated sample whose outermost activation appears in a sample that
 * reaches the root takes that sample's frames outward of the activation.
 * That exact match comes first; where none is, call paths (PATHS) and
 * callers by name (CALLERS) give the same Python functions exactly, and
 * the native frames between them as another call showed them.
 *
 * WHICH SAMPLE COMPLETES WHICH
 *   Activations nest: while a call runs, so do all its callers.  So the
 *   last complete stack of a thread holds every activation still running
 *   that an earlier complete stack held, and an activation of a truncated
 *   sample that the next complete stack does not hold has returned and
 *   will never be seen again.  Hence per thread:
 *   - a truncated sample is completed from the thread's last complete
 *     stack when that holds its outermost activation ("from earlier");
 *   - otherwise it waits, with the others since that stack, until the next
 *     complete stack of its thread, which either holds the activation (it
 *     is completed from it, "from later") or proves that it never will be
 *     (it stays truncated).  Waiting samples are settled newest first, and
 *     each one completed is the stack the older ones are matched against.
 *   A stitched stack is complete, so it completes others in turn: chains
 *   of samples, each reaching further out, complete the deepest ones.
 *
 * PATHS
 *   A short call (a web request) is often cut off in every sample taken
 *   inside it.  Its call path recurs, though, and each trampoline frame
 *   also keeps its caller's path (trampoline.h), from which its own path
 *   follows.  Every stack teaches what its paths continue with: the frames
 *   between a trampoline and the next one out, when the inner one's caller
 *   is the outer one's path (so greenlets and corrupt copies teach
 *   nothing), and from the outermost trampoline of a complete stack, when
 *   it was called from the root, the frames to the root.  A truncated
 *   sample that no activation completes follows what its outermost
 *   trampoline's path was seen to continue with, link by link to the root:
 *   the same Python functions, each called from the same function, all the
 *   way out.  The native frames between two of them are those seen; a path
 *   that two stacks continue differently (one function calling another
 *   both directly and through map()) is disputed: its frames are not
 *   followed from then on (what it completed before stays), and the way
 *   out goes on past it as past an unseen one (CALLERS).  Paths are folds of
 *   the functions' names (trampoline.h), so one table serves every
 *   process of a program: each of ten short runs completes the others.
 *   "A program" is the interpreter build (the caller says which): another
 *   one has other native frames between the same Python ones.
 *
 * CALLERS
 *   A long call that is always deep (an import of a big package, whose
 *   own imports nest under it) can hide its callers from every copy taken
 *   while it runs: 100 samples of one Django import, once, had no
 *   trampoline of theirs whose caller any stack showed.  A trampoline's
 *   path and name give its caller's path (the fold is invertible), and
 *   what lies between them comes from another call of the same two
 *   functions by name ("call links", learned wherever a copy shows a
 *   trampoline whose caller's path is the next one out's, and disputed
 *   like paths).  A caller whose path no copy showed either is guessed
 *   among the callers seen for its callee's name, at most
 *   STITCH_GUESS_DEPTH guesses along the way to the root, fewest first;
 *   a guess stands only when the path it implies is one a stack showed,
 *   a 64-bit match, so the Python functions are exact and only the native
 *   frames between are those of another call.  A disputed path is passed
 *   the same way.  Where calls of the same two functions were seen with
 *   different native frames between (the adaptive interpreter specializes
 *   a call site after some runs; `import` and `__import__` reach the same
 *   function), or never seen at all while the caller's path was (a
 *   module's body calls `_find_and_load` for each of its imports, and
 *   each such call may be seen only from inside), those frames are not
 *   known: one gap frame stands for them.
 *
 * AT THE END
 *   Paths and calls are learned in time order, so the first of ten short
 *   runs could be completed only from what it showed itself: the import of
 *   a module that was deep in every sample of the first run may be seen
 *   from outside in the fifth.  A waiting sample that nothing completed
 *   when its thread went on or ended is kept, and stitch__finish tries its
 *   path again with all that the input showed (in the ten runs of `import
 *   numpy`, 0-14 of about 500 truncated samples, in 25 recordings).
 *
 *   The counts name how a sample itself was completed: one completed from
 *   another through an activation counts there, though what it took may
 *   have come through paths or callers.
 *
 * BOUNDED MEMORY
 *   Per thread: its last complete stack, and at most STITCH_MAX_PENDING
 *   waiting samples (a longer wait settles the oldest at once, through
 *   paths, kept for the end or left truncated); each holds its frame ids,
 *   activations and payload.  A thread's buffers are freed when it exits
 *   (stitch__thread_exit).  So the worst case is about STITCH_MAX_PENDING *
 *   (4 + 40) * max_frames bytes per thread that ever had a truncated stack
 *   with an activation.  Paths: at most STITCH_MAX_PATH_FRAMES learned
 *   frames in all (4 bytes each, plus about 80 per path and per call);
 *   later ones are not learned.  Kept for the end: at most
 *   STITCH_MAX_LATE_BYTES in all (each sample's frames, its outermost
 *   activation and payload, about 120 bytes more); later ones stay
 *   truncated at once.
 *
 * Stacks are arrays of frame ids (any 32-bit ids; pymerge's are symbols'),
 * leaf first.  A sample that cannot wait (its caller must account it now)
 * is only completed from earlier.  Samples of a thread must come in time
 * order (perf.data's are, through pdqueue).
 */
#ifndef PYMERGE_STITCH_H
#define PYMERGE_STITCH_H

#include <stddef.h>
#include <stdint.h>

#define STITCH_MAX_PENDING 64
#define STITCH_MAX_PATH_FRAMES (16u << 20)
#define STITCH_GUESS_DEPTH 8        /* callers guessed on one way out */
#define STITCH_MAX_GUESSES 4096     /* callers tried per completion by path */
#define STITCH_NO_GAP UINT32_MAX
#define STITCH_MAX_LATE_BYTES (64u << 20)

/* A trampoline frame of a stack and its activation identity. */
struct stitch_act {
    uint64_t id;            /* the identity read from its frame (never 0) */
    uint64_t addr;          /* the frame's address: the same trampoline has the same */
    uint32_t pos;           /* its index in the stack, leaf first */
    uint64_t parent;        /* its caller's path, or 0 (unknown) */
    uint64_t key;           /* what its path folds in: pyperfmap_path__key of its name */
};

/*
 * A waiting sample, settled: payload as given to stitch__sample, its frames
 * (leaf first), and whether they now reach the root (complete) or are still
 * the truncated ones.  ids is only valid during the call.
 */
typedef void (*stitch_emit_fn)(void *ctx, const void *payload, const uint32_t *ids, size_t n,
                               int complete);

struct stitch;

/* payload_size: bytes kept per waiting sample; max_frames: the longest
 * stack (a stitch that would be longer is not made); gap: the frame id
 * that stands for native frames not known (CALLERS), or STITCH_NO_GAP.
 * Never NULL.
 * __delete accepts NULL; call stitch__finish first to settle waiting
 * samples. */
struct stitch *stitch__new(size_t payload_size, size_t max_frames, uint32_t gap,
                           stitch_emit_fn emit, void *ctx);
void stitch__delete(struct stitch *st);

enum stitch_result {
    STITCH_COMPLETE,        /* it reached the root by itself */
    STITCH_STITCHED,        /* completed from an earlier sample: ids and *n rewritten */
    STITCH_WAITING,         /* kept: emit gets it later; account nothing now */
    STITCH_TRUNCATED,       /* stays as it is */
};

/*
 * One sample's stack of thread `thread` (any unique key, e.g. pid << 32 |
 * tid), whose paths mean what they mean in `program` (any key of the
 * interpreter build; 0 is one too): ids[0..*n) leaf first, with room for max_frames; acts its
 * activations, leaf first; complete: the unwind reached the root.
 * payload: for a truncated sample that may wait, what emit gets back;
 * NULL when the caller must account the sample now.  Settling waiting
 * samples calls emit (for this thread's, before this returns), or keeps
 * them for stitch__finish.
 */
enum stitch_result stitch__sample(struct stitch *st, uint64_t thread, uint64_t program,
                                  uint32_t *ids, size_t *n,
                                  const struct stitch_act *acts, size_t n_acts, int complete,
                                  const void *payload);

/* The thread ended: its waiting samples are settled (through paths, kept
 * for the end, or left truncated) and its buffers freed, so that a program that churns
 * through short-lived threads holds no memory for those that ended. */
void stitch__thread_exit(struct stitch *st, uint64_t thread);

/* The end of the input: every waiting sample is settled, and those kept
 * for the end are tried once more through paths, or left truncated. */
void stitch__finish(struct stitch *st);

/* For -v: how many truncated stacks were completed, and how (warnx_). */
void stitch__summary(const struct stitch *st);

/* The counts behind the summary. */
struct stitch_counts {
    uint64_t truncated;     /* truncated samples offered */
    uint64_t from_earlier, from_later;  /* through an activation */
    uint64_t from_path;
    uint64_t through_calls;             /* ...of them past a caller by name (CALLERS) */
    uint64_t with_gap;                  /* ...of those, with the gap frame */
    uint64_t path_conflicts;            /* paths disputed */
    uint64_t at_end;                    /* ...of them by stitch__finish */
};
struct stitch_counts stitch__counts(const struct stitch *st);

#endif /* PYMERGE_STITCH_H */
