/*
 * symbols.h - addresses -> frames.
 *
 * A frame is one distinct function as the output shows it: its name in
 * the native view (exactly what `perf script | stackcollapse-perf.pl`
 * prints), its name in the mixed and python views, and what kind of code
 * it is.  Frames are interned: equal frames share one id, so stacks are
 * arrays of small integers.
 *
 * Each distinct (DSO, address) is resolved once and cached; each DSO's
 * symbols are loaded on first use.
 */
#ifndef PYMERGE_SYMBOLS_H
#define PYMERGE_SYMBOLS_H

#include "session.h"

#include <stdint.h>

enum frame_kind {
    FRAME_ROOT,         /* the process name at the bottom of a stack */
    FRAME_KERNEL,
    FRAME_USER,         /* native code in an ELF file (or unmapped) */
    FRAME_PYTHON,       /* a py:: trampoline: one Python function */
    FRAME_JIT,          /* other perf-map code */
};

struct frame {
    const char *name;       /* native view */
    const char *display;    /* mixed and python views */
    uint8_t kind;           /* enum frame_kind */
    uint8_t plumbing;       /* interpreter internals the mixed view drops */
    uint8_t unknown;        /* no symbol: named after its DSO */
    uint8_t interp_unnamed; /* no symbol, in the interpreter's own binary (a stripped
                             * python3.11): plumbing when between two Python frames */
    uint8_t launcher;       /* a frame of python -m pyperfmap or runpy, not of the program */
    uint8_t gil;            /* its part in a wait for the GIL, GIL_* */
    uint8_t own;            /* pyperfmap's own code: enum own_role (ownframes.h) */
    uint8_t stack_root;     /* the first frame of a stack of its own (a greenlet's) */
    uint8_t wait;           /* what a wait in it waits on, waits.h's WAIT_* */
    const struct dso *dso;  /* native code: the first file it was found in */
    uint64_t path_key;      /* FRAME_PYTHON: pyperfmap_path__key() of its map name */
    uint32_t line;          /* symbols__with_line's: the line, and the frame without it */
    uint32_t unlined;
};

enum { GIL_TAKE = 1, GIL_ENTRY, GIL_BLOCK };

struct symbols_opts {
    const char *kallsyms;       /* NULL: /proc/kallsyms */
    const char *data_dir;       /* directory of the perf.data file, or NULL */
    const char *map_dir;        /* --map-dir, or NULL */
    int preload_kernel;         /* start reading kallsyms at once, in a thread */
    const uint8_t *kernel_build_id;   /* recorded; selects perf's cached kallsyms */
    uint8_t kernel_build_id_size;
    int live;                   /* processes may still write their perf maps (pipe mode):
                                 * a miss rereads a map that changed, and looks again
                                 * for one not there yet */
};

struct symbols;

struct symbols *symbols__new(const struct symbols_opts *opts);
void symbols__delete(struct symbols *sy);   /* accepts NULL */

/*
 * The frame for addr in proc.  kernel: the address is kernel code.
 * is_return: addr is a return address, so the call is at addr - 1.
 */
uint32_t symbols__frame(struct symbols *sy, const struct process *proc, uint64_t addr,
                        int kernel, int is_return);
/* A frame that is only a name (process names, [guest]). */
uint32_t symbols__named(struct symbols *sy, const char *name, enum frame_kind kind);
const struct frame *symbols__get(const struct symbols *sy, uint32_t id);

/*
 * Is addr inside a trampoline, and whose?  For a DWARF unwinder: a
 * pyperfmap trampoline follows pyperfmap_trampoline__rule() (trampoline.h),
 * a CPython -X perf one its own fixed template.  *entry receives the
 * trampoline's start address.
 */
enum trampoline_kind { TRAMPOLINE_NONE, TRAMPOLINE_PYPERFMAP, TRAMPOLINE_CPYTHON };
enum trampoline_kind symbols__trampoline(struct symbols *sy, const struct process *proc,
                                         uint64_t addr, uint64_t *entry);

/*
 * --lines: the line that pos, a caller's position kept by the next
 * trampoline in (trampoline.h), names in the Python function of the
 * pyperfmap trampoline at addr, from the perf map's line file; 0 when none
 * does.  symbols__with_line is frame id named with that line.
 */
int symbols__line(struct symbols *sy, const struct process *proc, uint64_t addr, uint32_t pos);
uint32_t symbols__with_line(struct symbols *sy, uint32_t id, int line);

/*
 * The file holding a DSO_FILE dso's code as recorded (the file itself, or
 * perf's cached copy when it is gone or was rebuilt since), loading the
 * dso's symbols if needed; NULL when there is none.  For the DWARF
 * unwinder, so CFI and symbols come from the same file.
 */
const char *symbols__elf_file(struct symbols *sy, const struct dso *d);

int symbols__kernel_hidden(const struct symbols *sy);

/* The "[GIL wait]" frame the mixed and python views put where a thread
 * waits to take the GIL. */
uint32_t symbols__gil_wait(const struct symbols *sy);
/* The leaf "[off-cpu: lock]" and the like, for a waits.h WAIT_* kind. */
uint32_t symbols__wait_leaf(const struct symbols *sy, unsigned kind);

/* The "[pyperfmap]" frame the mixed view puts where pyperfmap itself
 * works (OWN_WORK frames and what they call). */
uint32_t symbols__own_work(const struct symbols *sy);

/* Where the recorded kernel's _text was (the pgoff of perf's
 * [kernel.kallsyms]_text MMAP record): kallsyms of another boot is
 * shifted by the difference (KASLR). */
void symbols__kernel_text(struct symbols *sy, uint64_t text);

#endif
