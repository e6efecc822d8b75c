/*
 * test_stitch.c - stitch.c on hand-made stacks: completion from earlier
 * and later samples, chains, the exact-match rule, giving up, the bounds.
 *
 * A stack is written root first as a string of one-letter frames, upper
 * case for trampoline frames; a trampoline's activation identity is given
 * per letter, so "the same call" is spelled by the same letter and number.
 * Paths (trampoline.h) are computed from the letters outward of each one,
 * as the hook folds them: a letter is a trampoline's name.
 */
#include "check.h"
#include "stitch.h"
#include "../../libpyperfmap/trampoline.h"

#include <stdint.h>
#include <string.h>

#define MAXF 64

/* What emit was given, in order. */
static struct {
    int payload;
    char stack[MAXF + 1];       /* root first, as written */
    int complete;
} got[200];
static int n_got;

static void emit(void *ctx, const void *payload, const uint32_t *ids, size_t n, int complete)
{
    (void)ctx;
    CHECK(n_got < 200 && n <= MAXF);
    memcpy(&got[n_got].payload, payload, sizeof(int));
    for (size_t i = 0; i < n; i++)
        got[n_got].stack[n - 1 - i] = (char)ids[i];
    got[n_got].stack[n] = 0;
    got[n_got++].complete = complete;
}

/* An emit that only counts, for more samples than got[] holds. */
static size_t counted;

static void count(void *ctx, const void *payload, const uint32_t *ids, size_t n, int complete)
{
    (void)ctx, (void)payload, (void)ids, (void)n;
    CHECK(!complete);
    counted++;
}

struct sample {
    uint32_t ids[MAXF];
    size_t n;
    struct stitch_act acts[MAXF];
    size_t n_acts;
};

/* frames: root first; ids: the activation of each upper-case letter, in
 * the same order (0: a trampoline caught before it stored one). */
/* The key of the trampoline named by letter c. */
static uint64_t key_of(char c)
{
    return pyperfmap_path__key(&c, 1);
}

static struct sample make(const char *frames, const uint64_t *act_ids)
{
    struct sample s = {{0}, strlen(frames), {{0, 0, 0, 0, 0}}, 0};
    size_t k = 0, n_upper = 0;
    for (size_t i = 0; frames[i]; i++)
        n_upper += frames[i] >= 'A' && frames[i] <= 'Z';
    k = n_upper;
    for (size_t i = 0; i < s.n; i++) {     /* leaf first */
        char c = frames[s.n - 1 - i];
        s.ids[i] = (uint32_t)c;
        if (c >= 'A' && c <= 'Z' && act_ids[--k])
            s.acts[s.n_acts++] = (struct stitch_act){act_ids[k], 0x1000u + (uint64_t)c * 16,
                                                     (uint32_t)i, 0, key_of(c)};
    }
    return s;
}

/* A sample of the stack `full` (root first) whose copy ended `cut` frames
 * short of the root, each trampoline with its own activation (base, base +
 * 1, ... from the root) and its caller's path, as the hook folds them. */
static struct sample make_path(const char *full, size_t cut, uint64_t base)
{
    uint64_t ids[MAXF], parents[MAXF], parent = PYPERFMAP_PATH_ROOT;
    size_t n_upper = 0, skipped = 0;
    for (size_t i = 0; full[i]; i++) {
        if (full[i] < 'A' || full[i] > 'Z')
            continue;
        if (i < cut)
            skipped++;
        parents[n_upper] = parent;
        ids[n_upper] = base + n_upper;
        parent = pyperfmap_path__step(parent, key_of(full[i]));
        n_upper++;
    }
    struct sample s = make(full + cut, ids + skipped);
    for (size_t i = 0; i < s.n_acts; i++)     /* acts are leaf first */
        s.acts[i].parent = parents[n_upper - 1 - i];
    return s;
}

static char text[MAXF + 1];

static const char *as_text(const struct sample *s)
{
    for (size_t i = 0; i < s->n; i++)
        text[s->n - 1 - i] = (char)s->ids[i];
    text[s->n] = 0;
    return text;
}

static enum stitch_result offer(struct stitch *st, uint64_t thread, struct sample *s, int complete,
                                int payload)
{
    return stitch__sample(st, thread, thread >> 48, s->ids, &s->n, s->acts, s->n_acts, complete,
                          payload ? &payload : NULL);
}

/* Offers the stack `full` as a complete one, to learn its paths from. */
static void teach(struct stitch *st, uint64_t thread, const char *full, uint64_t base)
{
    struct sample s = make_path(full, 0, base);
    CHECK(offer(st, thread, &s, 1, 0) == STITCH_COMPLETE);
}

/* Offers `full` cut `cut` frames short, unable to wait; the result, and
 * the stack as it came out in `text`. */
static enum stitch_result try_cut(struct stitch *st, uint64_t thread, const char *full, size_t cut,
                                  uint64_t base)
{
    struct sample s = make_path(full, cut, base);
    enum stitch_result r = offer(st, thread, &s, 0, 0);
    as_text(&s);
    return r;
}

/* A table whose gap frame is '?', with got[] emptied. */
static struct stitch *fresh(void)
{
    n_got = 0;
    return stitch__new(sizeof(int), MAXF, (uint32_t)'?', emit, NULL);
}

/* From earlier: the last complete stack holds the truncated sample's
 * outermost activation (B, call 2): the frames outward of it come from
 * there; the truncated sample's own frames above B are dropped.  The
 * completed stack completes the next one in turn (a chain): C (call 3) is
 * only in the stitched stack.  Thread 1. */
static void offer_earlier_chain(struct stitch *st)
{
    struct sample s = make("rmAxByz", (uint64_t[]){1, 2});
    CHECK(offer(st, 1, &s, 1, 0) == STITCH_COMPLETE);
    s = make("xByCpq", (uint64_t[]){2, 3});
    CHECK(offer(st, 1, &s, 0, 0) == STITCH_STITCHED);
    CHECK(!strcmp(as_text(&s), "rmAxByCpq"));
    s = make("yCpDd", (uint64_t[]){3, 4});
    CHECK(offer(st, 1, &s, 0, 0) == STITCH_STITCHED);
    CHECK(!strcmp(as_text(&s), "rmAxByCpDd"));
}

static void completed_from_earlier_in_a_chain(void)
{
    struct stitch *st = fresh();
    offer_earlier_chain(st);
    struct stitch_counts c = stitch__counts(st);
    CHECK(c.from_earlier == 2 && c.from_later == 0 && c.truncated == 2);
    stitch__delete(st);
}

/* Exactness: the same trampoline in another call (C, call 5), or the same
 * number in another trampoline, or another thread, never match; nor does
 * a sample with no activation (none stored yet). */
static void activation_matches_exactly(void)
{
    struct stitch *st = fresh();
    offer_earlier_chain(st);
    struct sample s = make("yCpq", (uint64_t[]){5});
    CHECK(offer(st, 1, &s, 0, 0) == STITCH_TRUNCATED);
    s = make("yEpq", (uint64_t[]){3});
    CHECK(offer(st, 1, &s, 0, 0) == STITCH_TRUNCATED);
    s = make("yCpq", (uint64_t[]){3});
    CHECK(offer(st, 2, &s, 0, 0) == STITCH_TRUNCATED);
    s = make("yCpq", (uint64_t[]){0});
    CHECK(offer(st, 1, &s, 0, 7) == STITCH_TRUNCATED);
    CHECK(n_got == 0);
    CHECK(stitch__counts(st).truncated == 6 && stitch__counts(st).from_earlier == 2);
    stitch__delete(st);
}

/* From later, with a chain: two samples wait, the newer one reaching
 * further out (call 20) than the older one (call 21, which the newer one
 * holds).  The next complete stack holds 20 but not 21 (it has returned):
 * the newer is completed from it, then the older from the newer, which is
 * settled first for that reason. */
static void waiting_completed_from_later_in_a_chain(void)
{
    struct stitch *st = fresh();
    struct sample s = make("vGwHh", (uint64_t[]){21, 22});
    CHECK(offer(st, 4, &s, 0, 201) == STITCH_WAITING);
    s = make("uFvGw", (uint64_t[]){20, 21});
    CHECK(offer(st, 4, &s, 0, 202) == STITCH_WAITING);
    s = make("rKuFx", (uint64_t[]){19, 20});
    CHECK(offer(st, 4, &s, 1, 0) == STITCH_COMPLETE);
    CHECK(n_got == 2);
    CHECK(got[0].payload == 202 && got[0].complete && !strcmp(got[0].stack, "rKuFvGw"));
    CHECK(got[1].payload == 201 && got[1].complete && !strcmp(got[1].stack, "rKuFvGwHh"));
    struct stitch_counts c = stitch__counts(st);
    CHECK(c.from_earlier == 0 && c.from_later == 2 && c.truncated == 2);
    stitch__delete(st);
}

/* A truncated sample completed from earlier also settles those that
 * wait: P (call 32) waits, then one through call 31 is completed from the
 * last complete stack, and holds 32. */
static void completed_from_earlier_settles_the_waiting(void)
{
    struct stitch *st = fresh();
    struct sample s = make("rLa", (uint64_t[]){30});
    CHECK(offer(st, 5, &s, 1, 0) == STITCH_COMPLETE);
    s = make("MbNc", (uint64_t[]){31, 32});
    CHECK(offer(st, 5, &s, 0, 301) == STITCH_WAITING);   /* 31 is not in "rLa" */
    s = make("LaMbNdd", (uint64_t[]){30, 31, 32});
    CHECK(offer(st, 5, &s, 0, 302) == STITCH_STITCHED);
    CHECK(!strcmp(as_text(&s), "rLaMbNdd"));
    CHECK(n_got == 1 && got[0].payload == 301 && got[0].complete && !strcmp(got[0].stack, "rLaMbNc"));
    stitch__delete(st);
}

/* A waiting sample that grows past its buffers when completed (twenty
 * activations outward of its own two). */
static void completed_sample_grows_past_its_buffers(void)
{
    struct stitch *st = fresh();
    struct sample s = make("AzAw", (uint64_t[]){60, 61});
    CHECK(offer(st, 9, &s, 0, 501) == STITCH_WAITING);
    uint64_t twenty[20];
    for (int i = 0; i < 20; i++)
        twenty[i] = 41 + (uint64_t)i;
    s = make("rAAAAAAAAAAAAAAAAAAAA", twenty);
    CHECK(offer(st, 9, &s, 1, 0) == STITCH_COMPLETE);
    CHECK(n_got == 1 && got[0].complete && !strcmp(got[0].stack, "rAAAAAAAAAAAAAAAAAAAAzAw"));
    stitch__delete(st);
}

/* Giving up: a complete stack without the waiting sample's activation
 * means that call returned; the sample stays as it was (without a path to
 * follow, it is not kept for the end); and so does one that would be
 * longer than max_frames. */
static void gives_up_when_the_call_returned_or_too_long(void)
{
    struct stitch *st = fresh();
    struct sample s = make("xPy", (uint64_t[]){40});
    CHECK(offer(st, 6, &s, 0, 401) == STITCH_WAITING);
    s = make("rQz", (uint64_t[]){41});
    CHECK(offer(st, 6, &s, 1, 0) == STITCH_COMPLETE);
    CHECK(n_got == 1 && got[0].payload == 401 && !got[0].complete && !strcmp(got[0].stack, "xPy"));
    n_got = 0;
    char longer[MAXF + 1];
    memset(longer, 'r', MAXF - 2);
    strcpy(longer + MAXF - 2, "Qz");
    s = make(longer, (uint64_t[]){42});
    CHECK(offer(st, 7, &s, 1, 0) == STITCH_COMPLETE);
    s = make("zQyy", (uint64_t[]){42});
    CHECK(offer(st, 7, &s, 0, 0) == STITCH_TRUNCATED && s.n == 4);
    stitch__delete(st);
}

/* The bound: the oldest waiting sample gives up when one more comes.  The
 * end: all that still wait are given as they are. */
static void pending_bound_then_the_end_gives_all(void)
{
    struct stitch *st = fresh();
    struct sample s;
    for (int i = 0; i < STITCH_MAX_PENDING + 1; i++) {
        s = make("xSy", (uint64_t[]){100 + (uint64_t)i});
        CHECK(offer(st, 8, &s, 0, 1000 + i) == STITCH_WAITING);
    }
    CHECK(n_got == 1 && got[0].payload == 1000 && !got[0].complete);
    stitch__finish(st);
    CHECK(n_got == 1 + STITCH_MAX_PENDING);
    for (int i = 1; i < n_got; i++)
        CHECK(!got[i].complete && got[i].payload > 1000);
    stitch__delete(st);
}

/* Paths: another thread, another call (no activation in common), the same
 * path: completed from what the complete stack showed; and by links
 * learned from truncated stacks too, chained: "CpDqEs" teaches E->D->C,
 * and then "EsFt" is completed through all of them.  Threads 1 to 5. */
static void offer_path_chain(struct stitch *st)
{
    teach(st, 1, "rmAxByCz", 1);
    CHECK(try_cut(st, 2, "rmAxByCpDq", 4, 100) == STITCH_STITCHED);        /* "ByCpDq" */
    CHECK(!strcmp(text, "rmAxByCpDq"));
    CHECK(try_cut(st, 3, "rmAxByCpDqEs", 6, 200) == STITCH_STITCHED);
    CHECK(try_cut(st, 5, "rmAxByCpDqEsFt", 10, 300) == STITCH_STITCHED);   /* "EsFt" */
    CHECK(!strcmp(text, "rmAxByCpDqEsFt"));
}

static void completed_through_paths_in_a_chain(void)
{
    struct stitch *st = fresh();
    offer_path_chain(st);
    struct stitch_counts c = stitch__counts(st);
    CHECK(c.from_path == 3 && c.from_earlier == 0 && c.path_conflicts == 0 && c.with_gap == 0);
    stitch__delete(st);
}

/* A path continued two ways (G's caller B, with y or with w between them)
 * is disputed: its frames are not followed.  The call of G from B is
 * disputed with it, so the gap frame stands for them.  A caller never
 * seen with its callee (K called from B): B's path is known, so K's caller
 * is, but not the frames between (a gap frame).  But a caller whose path
 * no stack showed (N), with no call of K from anything seen to guess
 * from, leaves it truncated. */
static void offer_disputed(struct stitch *st)
{
    struct sample s = make_path("rmAxByGz", 0, 400);
    CHECK(offer(st, 6, &s, 1, 0) == STITCH_COMPLETE);
    s = make_path("rmAxBwGz", 0, 500);
    CHECK(offer(st, 6, &s, 1, 0) == STITCH_COMPLETE);
    s = make_path("rmAxByGzHu", 6, 600);        /* "GzHu" */
    CHECK(offer(st, 7, &s, 0, 0) == STITCH_STITCHED && !strcmp(as_text(&s), "rmAxB?GzHu"));
    CHECK(stitch__counts(st).path_conflicts == 1 && stitch__counts(st).with_gap == 1);
    s = make_path("rmAxByKkHu", 6, 650);        /* "KkHu" */
    CHECK(offer(st, 7, &s, 0, 0) == STITCH_STITCHED && !strcmp(as_text(&s), "rmAxB?KkHu"));
    CHECK(stitch__counts(st).with_gap == 2);
    s = make_path("rmAxNnKkHu", 6, 660);        /* "KkHu" */
    CHECK(offer(st, 7, &s, 0, 0) == STITCH_TRUNCATED);
}

/* A caller that is not the next trampoline out (a greenlet switched
 * stacks under the hook) teaches nothing: here K claims Z's path as its
 * caller's while J is out of it.  Had it taught, the sample below, truly
 * called from Z, would come out as "rJpKqLv". */
static void offer_off_path_caller(struct stitch *st)
{
    struct sample z = make_path("rZpKq", 0, 700);
    struct sample s = make_path("rJpKq", 0, 710);
    s.acts[0].parent = z.acts[0].parent;
    CHECK(offer(st, 8, &s, 1, 0) == STITCH_COMPLETE);
    s = make_path("rZpKqLv", 3, 800);           /* "KqLv" */
    CHECK(offer(st, 9, &s, 0, 0) == STITCH_TRUNCATED);
    s = make_path("rZpKq", 0, 900);             /* Z's own path completes it */
    CHECK(offer(st, 8, &s, 1, 0) == STITCH_COMPLETE);
    s = make_path("rZpKqLv", 3, 800);
    CHECK(offer(st, 9, &s, 0, 0) == STITCH_STITCHED && !strcmp(as_text(&s), "rZpKqLv"));
}

/* A table that learned the paths above, in their order: the chain, then
 * (stage 2) the disputed and unseen calls, then (stage 3) the caller off
 * the path. */
static struct stitch *paths_learned(int stage)
{
    struct stitch *st = fresh();
    offer_path_chain(st);
    if (stage >= 2)
        offer_disputed(st);
    if (stage >= 3)
        offer_off_path_caller(st);
    n_got = 0;
    return st;
}

/* Each of the two above, on the table as it was when it ran. */
static void disputed_or_unseen_call_leaves_a_gap(void)
{
    struct stitch *st = paths_learned(1);
    offer_disputed(st);
    stitch__delete(st);
}

static void caller_off_the_path_teaches_nothing(void)
{
    struct stitch *st = paths_learned(2);
    offer_off_path_caller(st);
    stitch__delete(st);
}

/* A thread's exit settles what waits (through a path here: "KkHu" under N
 * has none yet, "DqEs" has) and frees its state, which a new thread of
 * the same id starts afresh.  The end: what the input showed after a
 * sample's thread went on completes it (another process shows N's path,
 * and K's caller), as it does the one its thread left waiting. */
static void thread_exit_and_the_end_complete_through_later_paths(void)
{
    struct stitch *st = paths_learned(3);
    struct sample s = make_path("rmAxByCpDqEsFt", 8, 1100);   /* "DqEsFt", but from a new call: */
    s.acts[0].id = s.acts[1].id = 7777;                       /* no activation matches */
    CHECK(offer(st, 12, &s, 0, 1201) == STITCH_STITCHED);
    s = make_path("rmAxNnKkHu", 6, 1200);       /* "KkHu": waits */
    CHECK(offer(st, 12, &s, 0, 1202) == STITCH_WAITING);
    stitch__thread_exit(st, 12);
    CHECK(n_got == 0);                          /* kept for the end */
    stitch__thread_exit(st, 12);                /* nothing left */
    stitch__thread_exit(st, 99);                /* never seen */
    s = make_path("rmAxByCpDqEsFt", 10, 1300);  /* "EsFt" */
    CHECK(offer(st, 12, &s, 0, 1203) == STITCH_STITCHED && !strcmp(as_text(&s), "rmAxByCpDqEsFt"));
    s = make_path("rmAxNnKkHu", 6, 1400);
    CHECK(offer(st, 12, &s, 0, 1204) == STITCH_WAITING);
    teach(st, 13, "rmAxNnKk", 1250);
    struct stitch_counts c = stitch__counts(st);
    stitch__finish(st);
    CHECK(n_got == 2 && got[0].payload == 1204 && got[1].payload == 1202);
    CHECK(got[0].complete && got[1].complete && !strcmp(got[1].stack, "rmAxNnKkHu"));
    CHECK(stitch__counts(st).at_end == c.at_end + 1);
    CHECK(stitch__counts(st).from_path == c.from_path + 2);
    stitch__delete(st);
}

/* Paths fold names, not addresses: the same one in another process
 * (another run of the program, its trampolines elsewhere) completes too,
 * but not in another program (offer: the thread's top 16 bits).  A
 * trampoline without a name (its map lost) has no key, and follows
 * nothing. */
static void paths_fold_names_not_addresses(void)
{
    struct stitch *st = paths_learned(3);
    struct sample s = make_path("rmAxByCpDq", 4, 1500);       /* "ByCpDq", as on thread 2 */
    for (size_t i = 0; i < s.n_acts; i++)
        s.acts[i].addr += 0x7f0000000000ull;
    CHECK(offer(st, (uint64_t)77 << 32 | 2, &s, 0, 0) == STITCH_STITCHED);
    CHECK(!strcmp(as_text(&s), "rmAxByCpDq"));
    s = make_path("rmAxByCpDq", 4, 1540);
    CHECK(offer(st, (uint64_t)1 << 48 | (uint64_t)77 << 32 | 3, &s, 0, 0) == STITCH_TRUNCATED);
    s = make_path("rmAxByCpDq", 4, 1550);
    s.acts[s.n_acts - 1].key = 0;
    CHECK(offer(st, (uint64_t)78 << 32 | 2, &s, 0, 0) == STITCH_TRUNCATED);
    stitch__delete(st);
}

/* A path hook switched on inside a plain-hook frame: Q's caller P kept no
 * path, and Q's own starts at the root as if it were outermost.  Another
 * thread where Q really is outermost taught "rQ"; once the mixed stack is
 * seen, that path is disputed and "Qb" stays truncated (it would have
 * become "rQb", dropping P). */
static void path_hook_inside_plain_hook_disputes_the_path(void)
{
    struct stitch *st = paths_learned(3);
    struct sample s = make_path("rQb", 0, 1600);
    CHECK(offer(st, 14, &s, 1, 0) == STITCH_COMPLETE);
    s = make_path("rPaQb", 0, 1700);
    s.acts[1].parent = 0;                       /* P: the plain hook's */
    s.acts[0].parent = PYPERFMAP_PATH_ROOT;     /* Q: the thread's path was still the root */
    uint64_t disputes = stitch__counts(st).path_conflicts;
    CHECK(offer(st, 15, &s, 1, 0) == STITCH_COMPLETE);
    CHECK(stitch__counts(st).path_conflicts == disputes + 1);
    s = make_path("rQb", 1, 1800);              /* "Qb" */
    CHECK(offer(st, 16, &s, 0, 0) == STITCH_TRUNCATED);
    stitch__delete(st);
}

/* Callers no copy showed (stitch.h, CALLERS): Y, called from W from V from
 * G, where G was called from B, a path seen only up to G.  The copy holds
 * Y alone; W's and V's paths were never seen, so the names are tried: W as
 * Y's caller (the only one seen), then V as W's, whose implied caller path
 * is G's under B.  The frames between are those of the same calls under
 * A.  Without G's path under B: no guess.  A call two stacks disagree on
 * (W called from V with x between, where the first had v): the gap frame
 * stands for what lies between. */
static void callers_guessed_by_name(void)
{
    struct stitch *st = fresh();
    teach(st, 17, "rAaGgVvWwYy", 2000);
    /* "YyLl": J's path never seen */
    CHECK(try_cut(st, 18, "rAaBbJjVvWwYyLl", 11, 2100) == STITCH_TRUNCATED);
    teach(st, 19, "rAaBbGg", 2200);
    struct stitch_counts c = stitch__counts(st);
    /* "YyLl" */
    CHECK(try_cut(st, 20, "rAaBbGgVvWwYyLl", 11, 2300) == STITCH_STITCHED);
    CHECK(!strcmp(text, "rAaBbGgVvWwYyLl"));
    CHECK(stitch__counts(st).through_calls == c.through_calls + 1);
    CHECK(stitch__counts(st).from_path == c.from_path + 1);
    teach(st, 21, "rAaGgVxWwYy", 2400);
    CHECK(try_cut(st, 22, "rAaBbGgVvWwYyLl", 11, 2500) == STITCH_STITCHED);
    CHECK(!strcmp(text, "rAaBbGgV?WwYyLl"));
    CHECK(stitch__counts(st).with_gap == 1);
    stitch__delete(st);
}

/* ...unless the caller gave no gap frame: then it stays truncated, and so
 * does a call no stack showed (G's callee W). */
static void no_gap_frame_leaves_a_disputed_call_truncated(void)
{
    struct stitch *st = stitch__new(sizeof(int), MAXF, STITCH_NO_GAP, emit, NULL);
    teach(st, 17, "rAaGgVvWwYy", 2000);
    teach(st, 21, "rAaGgVxWwYy", 2400);
    teach(st, 19, "rAaBbGg", 2200);
    CHECK(try_cut(st, 22, "rAaBbGgVvWwYyLl", 11, 2500) == STITCH_TRUNCATED);
    CHECK(try_cut(st, 23, "rAaBbGgWwLl", 7, 2600) == STITCH_TRUNCATED);
    stitch__delete(st);
}

/* Guesses, fewest first: Y was also seen called from X (tried first, the
 * newest), which leads nowhere and is taken back; eight callers in a
 * row never seen with their paths (STITCH_GUESS_DEPTH) are found, nine
 * are not; a trampoline called from the root has no frames to guess. */
static void offer_guesses(struct stitch *st)
{
    teach(st, 17, "rAaGgVvWwYy", 2000);
    teach(st, 19, "rAaBbGg", 2200);
    teach(st, 19, "rAaXxYy", 2250);
    CHECK(try_cut(st, 20, "rAaBbGgVvWwYyLl", 11, 2300) == STITCH_STITCHED);
    CHECK(!strcmp(text, "rAaBbGgVvWwYyLl"));
    /* calls of D..U, under A */
    teach(st, 30, "rAaCcDdEeFfHhJjMmSsTtUu", 2600);
    /* C's path under B */
    teach(st, 31, "rAaBbCc", 2700);
    /* "UuKk": T S M J H F E D unseen */
    CHECK(try_cut(st, 32, "rAaBbCcDdEeFfHhJjMmSsTtUuKk", 23, 2800) == STITCH_STITCHED);
    CHECK(!strcmp(text, "rAaBbCcDdEeFfHhJjMmSsTtUuKk"));
    /* C called from N */
    teach(st, 33, "rAaNnCc", 2900);
    /* N's path under B */
    teach(st, 33, "rAaBbNn", 3000);
    /* "UuKk": T S M J H F E D C unseen */
    CHECK(try_cut(st, 34, "rAaBbNnCcDdEeFfHhJjMmSsTtUuKk", 25, 3100) == STITCH_TRUNCATED);
    /* O called from A */
    teach(st, 35, "rAaOo", 3200);
    /* "OoKk": O called from the root */
    CHECK(try_cut(st, 36, "rOoKk", 1, 3300) == STITCH_TRUNCATED);
}

static void guesses_fewest_first_up_to_eight(void)
{
    struct stitch *st = fresh();
    offer_guesses(st);
    stitch__delete(st);
}

/* A full ring settles its oldest through the paths known by then: "QqKk"
 * waits while Q's caller P is unknown, then another thread shows Q's path
 * under P under A. */
static void offer_full_ring(struct stitch *st)
{
    n_got = 0;
    struct sample s = make_path("rAaPpQqKk", 5, 3400);
    CHECK(offer(st, 37, &s, 0, 3400) == STITCH_WAITING);
    for (int i = 1; i < STITCH_MAX_PENDING; i++) {
        s = make_path("rOoKk", 1, 3500 + 10 * (uint64_t)i);
        CHECK(offer(st, 37, &s, 0, 3500 + i) == STITCH_WAITING);
    }
    teach(st, 38, "rAaPpQq", 4200);
    CHECK(n_got == 0);
    s = make_path("rOoKk", 1, 4300);
    CHECK(offer(st, 37, &s, 0, 4300) == STITCH_WAITING);
    CHECK(n_got == 1 && got[0].payload == 3400 && got[0].complete && !strcmp(got[0].stack, "rAaPpQqKk"));
}

static void full_ring_settles_its_oldest_through_paths(void)
{
    struct stitch *st = fresh();
    offer_guesses(st);
    offer_full_ring(st);
    stitch__delete(st);
}

/* Stacks of builds without paths (parent 0) neither teach nor follow,
 * among the paths learned above. */
static void stacks_without_paths_neither_teach_nor_follow(void)
{
    struct stitch *st = fresh();
    offer_guesses(st);
    offer_full_ring(st);
    struct sample s = make("rMpNq", (uint64_t[]){1000, 1001});
    CHECK(offer(st, 10, &s, 1, 0) == STITCH_COMPLETE);
    s = make("NqOv", (uint64_t[]){1050, 1051});
    CHECK(offer(st, 11, &s, 0, 0) == STITCH_TRUNCATED);
    stitch__delete(st);
}

/* The bound on what is kept for the end: samples of 4 frames whose path
 * nothing shows fill STITCH_MAX_LATE_BYTES at 16 bytes of frames, 40 of
 * their activation and the kept sample's own (under 200 in all), and the
 * next one is given at once; the end gives all, once. */
static void late_bound_then_the_end_gives_all_once(void)
{
    struct stitch *st = stitch__new(sizeof(int), MAXF, (uint32_t)'?', count, NULL);
    struct sample s;
    size_t kept = 0;
    for (; counted == 0 && kept <= STITCH_MAX_LATE_BYTES / 56; kept++) {
        s = make_path("rmAxNnKkHu", 6, 10 * (uint64_t)kept);   /* "KkHu" */
        CHECK(offer(st, 50, &s, 0, 1) == STITCH_WAITING);
        stitch__thread_exit(st, 50);
    }
    kept--;             /* the last one was given at once */
    CHECK(counted == 1 && kept >= STITCH_MAX_LATE_BYTES / 200);
    stitch__finish(st);
    CHECK(counted == kept + 1 && stitch__counts(st).at_end == 0);
    stitch__finish(st);
    CHECK(counted == kept + 1);
    stitch__delete(st);
}

int main(void)
{
    completed_from_earlier_in_a_chain();
    activation_matches_exactly();
    waiting_completed_from_later_in_a_chain();
    completed_from_earlier_settles_the_waiting();
    completed_sample_grows_past_its_buffers();
    gives_up_when_the_call_returned_or_too_long();
    pending_bound_then_the_end_gives_all();
    completed_through_paths_in_a_chain();
    disputed_or_unseen_call_leaves_a_gap();
    caller_off_the_path_teaches_nothing();
    thread_exit_and_the_end_complete_through_later_paths();
    paths_fold_names_not_addresses();
    path_hook_inside_plain_hook_disputes_the_path();
    callers_guessed_by_name();
    no_gap_frame_leaves_a_disputed_call_truncated();
    guesses_fewest_first_up_to_eight();
    full_ring_settles_its_oldest_through_paths();
    stacks_without_paths_neither_teach_nor_follow();
    late_bound_then_the_end_gives_all_once();
    return 0;
}
