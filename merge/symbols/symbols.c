/*
 * symbols.c - resolve addresses to interned frames, with caches.
 *
 * Names follow perf: the symbol perf would pick (symtab.c), or for an
 * address without a symbol the DSO's basename in brackets, as
 * stackcollapse-perf.pl writes it.  Then stackcollapse-perf.pl's tidying:
 * ';' becomes ':', argument lists are cut, quotes dropped.
 */
#include "symbols.h"

#include "container.h"
#include "contract.h"
#include "elfsyms.h"
#include "idmap.h"
#include "interpreter.h"
#include "intern.h"
#include "kallsyms.h"
#include "linefile.h"
#include "perfmap.h"
#include "util.h"
#include "waits.h"
#include "../../libpyperfmap/trampoline.h"
#include "ownframes.h"

#include <errno.h>
#include <fcntl.h>
#include <libiberty/demangle.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { UNLOADED, LOADED, FAILED };

/* What tells that a perf map changed since it was read: the file and its
 * first bytes (a stale map of an earlier process with the same PID is
 * emptied and rewritten), and what follows its last line taken. */
struct map_look {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    ssize_t head_len;
    char head[32];
    struct perfmap_tail tail;
};

struct dso_syms {               /* per session dso id */
    int state;
    struct elf_image img;       /* DSO_FILE, DSO_VDSO */
    struct symtab map;          /* DSO_PERFMAP */
    char *map_path;             /* where map came from */
    struct map_look map_seen;   /* live: the file as it was read */
    int map_warned;             /* a refused map was said, once */
    int interpreter;            /* 0: not known yet, 1: CPython's own code, -1: not */
    struct linefile lines;      /* DSO_PERFMAP: the map's line file (--lines) */
    int lines_state;
};

struct cache_slot {             /* (dso, address) -> frame */
    uint64_t addr;
    uint32_t dso_plus1;         /* 0: empty slot */
    uint32_t frame;
};

struct symbols {
    struct symbols_opts opts;
    struct intern *names;
    struct frame *frames;
    size_t n_frames, cap_frames;
    struct idmap frame_by_key;  /* name id << 5 | own << 3 | kind -> frame id + 1 */
    struct idmap lined;         /* frame id << 32 | line -> its lined frame id + 1 */
    struct dso_syms *dsos;
    size_t n_dsos;
    struct symtab kernel;       /* loaded by a thread: see kernel_loader */
    char kernel_path[4200];     /* the kallsyms file read */
    int kernel_state, kernel_hidden, kernel_errno;
    uint64_t kernel_text;       /* _text in the kallsyms read */
    uint64_t recorded_text;     /* _text in the recording, 0: unknown */
    uint64_t kernel_shift;      /* recorded address - kallsyms address */
    pthread_t kernel_loader;
    int kernel_loading;         /* the loader thread runs and must be joined */
    struct cache_slot *cache;
    size_t n_cache, cache_slots;
    uint32_t unknown_user;      /* "[unknown]": an address outside every mapping */
    uint32_t gil_wait;          /* "[GIL wait]", for the views */
    uint32_t own_work;          /* "[pyperfmap]", for the views */
    uint32_t wait_leaf[WAIT_KINDS];     /* "[off-cpu: lock]"..., for the python view */
};

static void *kernel_loader(void *arg);
static uint32_t add_frame(struct symbols *sy, const char *name, const char *display,
                          enum frame_kind kind, int unknown, enum own_role own);

/*
 * --kallsyms FILE; else the copy perf's build-id cache keeps of the
 * recorded kernel's kallsyms (~/.debug/[kernel.kallsyms]/ID/kallsyms),
 * which is what perf reads too and is a plain file, not 50 ms of kernel
 * formatting; else /proc/kallsyms.
 */
static void kallsyms_path(struct symbols *sy)
{
    const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
    char hex[41];
    if (sy->opts.kallsyms) {
        snprintf(sy->kernel_path, sizeof(sy->kernel_path), "%s", sy->opts.kallsyms);
        return;
    }
    for (int i = 0; i < sy->opts.kernel_build_id_size && i < 20; i++)
        sprintf(hex + 2 * i, "%02x", sy->opts.kernel_build_id[i]);
    if (sy->opts.kernel_build_id_size) {
        hex[2 * sy->opts.kernel_build_id_size] = 0;
        if (dir)
            snprintf(sy->kernel_path, sizeof(sy->kernel_path), "%s/[kernel.kallsyms]/%s/kallsyms",
                     dir, hex);
        else
            snprintf(sy->kernel_path, sizeof(sy->kernel_path),
                     "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home ? home : "", hex);
        if (access(sy->kernel_path, R_OK) == 0)
            return;
    }
    snprintf(sy->kernel_path, sizeof(sy->kernel_path), "/proc/kallsyms");
}

struct symbols *symbols__new(const struct symbols_opts *opts)
{
    struct symbols *sy = xcalloc(1, sizeof(*sy));
    sy->opts = *opts;
    sy->names = intern__new();
    kallsyms_path(sy);
    /* Reading /proc/kallsyms costs the kernel ~50 ms of formatting: do it
     * on the other core while the data is being read. */
    if (opts->preload_kernel &&
        pthread_create(&sy->kernel_loader, NULL, kernel_loader, sy) == 0)
        sy->kernel_loading = 1;
    sy->cache_slots = 1 << 14;
    sy->cache = xcalloc(sy->cache_slots, sizeof(*sy->cache));
    sy->unknown_user = symbols__named(sy, "[unknown]", FRAME_USER);
    sy->gil_wait = symbols__named(sy, "[GIL wait]", FRAME_ROOT);
    sy->own_work = add_frame(sy, "[pyperfmap]", NULL, FRAME_USER, 0, OWN_WORK);
    for (unsigned k = WAIT_LOCK; k < WAIT_KINDS; k++)
        sy->wait_leaf[k] = symbols__named(sy, waits__leaf(k), FRAME_ROOT);
    sy->frames[sy->unknown_user].unknown = 1;
    return sy;
}

void symbols__delete(struct symbols *sy)
{
    if (!sy)
        return;
    if (sy->kernel_loading)
        pthread_join(sy->kernel_loader, NULL);
    for (size_t i = 0; i < sy->n_dsos; i++) {
        elf_image__exit(&sy->dsos[i].img);
        symtab__exit(&sy->dsos[i].map);
        free(sy->dsos[i].map_path);
        linefile__exit(&sy->dsos[i].lines);
    }
    free(sy->dsos);
    symtab__exit(&sy->kernel);
    free(sy->cache);
    free(sy->frames);
    idmap__exit(&sy->frame_by_key);
    idmap__exit(&sy->lined);
    intern__delete(sy->names);
    free(sy);
}

static const char *intern(struct symbols *sy, const char *s, size_t len)
{
    return intern__str(sy->names, intern__id(sy->names, s, len));
}

/* ---- names ------------------------------------------------------------- */

/* stackcollapse-perf.pl's tidy_generic, applied to one frame name; with
 * cut 0, only what would break the folded format is replaced. */
static const char *tidy(struct symbols *sy, const char *in, int cut)
{
    size_t len = strlen(in);
    char stack_buf[512];
    char *buf = len < sizeof(stack_buf) ? stack_buf : xmalloc(len + 1);
    size_t n = 0;

    /* Go method names look like "net/http.(*Client).Do": keep those whole. */
    const char *go = strstr(in, ".(");
    int is_go = go && strstr(go + 2, ").") != NULL;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if (cut && c == '(' && !is_go && strncmp(in + i + 1, "anonymous namespace)", 20) != 0)
            break;              /* the argument list is noise */
        if (cut && (c == '"' || c == '\''))
            continue;
        /* ';' separates frames and a newline ends the line: neither may
         * appear in a name (a corrupt file can put both in a path). */
        buf[n++] = c == ';' ? ':' : (unsigned char)c < ' ' ? '?' : c;
    }
    const char *out = intern(sy, buf, n);
    if (buf != stack_buf)
        free(buf);
    return out;
}

/* CPython's GIL: take_gil blocks until the GIL is free (GIL_TAKE); the
 * functions that call it on the way back into Python (GIL_ENTRY) say
 * nothing more than that (interpreter.h names both); it blocks in a
 * condition variable, a futex, or off the CPU (GIL_BLOCK). */
static int gil_role(const char *name, enum frame_kind kind)
{
    if (strstr(name, "cond_wait") || strstr(name, "cond_timedwait") || strstr(name, "futex_wait") ||
        strstr(name, "futex_abstimed_wait") || !strncmp(name, "[off-cpu", 8))
        return GIL_BLOCK;
    return kind == FRAME_USER ? interpreter__gil_role(name) : 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Python frames of the launcher that runs the program: `python -m
 * pyperfmap` and the runpy module it (or `python -m`) goes through. */
static int is_launcher(const char *perf_name)
{
    return ends_with(perf_name, "/pyperfmap/__main__.py") || ends_with(perf_name, ":<frozen runpy>")
           || ends_with(perf_name, "/runpy.py");
}

/* Functions that start a stack of their own, switched to by a coroutine
 * library: what lies above them in memory is another stack, or what was
 * left there, so a stack that reaches them is complete.  greenlet's
 * g_initialstub (UserGreenlet::g_initialstub in greenlet 2), and the
 * start of makecontext's contexts, which glibc's CFI does not end. */
static int is_stack_root(const char *name)
{
    return strstr(name, "g_initialstub") != NULL || strcmp(name, "__start_context") == 0;
}

/* "py::qualname:filename" -> "qualname (file.py)"; a package's __init__.py
 * keeps its directory so it still says which package.  "py::[task NAME]",
 * an asyncio task's frame (libpyperfmap/tasks.h), has no file: the name may
 * hold a colon. */
static const char *python_display(struct symbols *sy, const char *perf_name)
{
    const char *q = perf_name + 4, *colon = strchr(q, ':');
    char buf[1024];
    if (!colon || strncmp(q, "[task ", 6) == 0)
        return tidy(sy, q, 1);
    const char *file = colon + 1, *base = path_basename(file);
    if ((!strcmp(base, "__init__.py") || !strcmp(base, "__main__.py")) && base > file + 1) {
        const char *p = base - 1;
        while (p > file && p[-1] != '/')
            p--;
        base = p;
    }
    snprintf(buf, sizeof(buf), "%.*s (%s)", (int)(colon - q), q, base);
    for (char *c = buf; *c; c++)
        if (*c == ';')
            *c = ':';
        else if ((unsigned char)*c < ' ')
            *c = '?';
    return intern(sy, buf, strlen(buf));
}

/* own: pyperfmap's own code is a frame apart from a user's function of
 * the same name (the interposer's malloc is not libc's). */
static uint32_t add_frame(struct symbols *sy, const char *name, const char *display,
                          enum frame_kind kind, int unknown, enum own_role own)
{
    uint64_t key = (uint64_t)intern__id(sy->names, name, strlen(name)) << 5 | (uint64_t)own << 3 |
                   kind;
    uintptr_t id = (uintptr_t)idmap__get(&sy->frame_by_key, key);
    if (id)
        return (uint32_t)(id - 1);
    GROW(sy->frames, sy->cap_frames, sy->n_frames + 1);
    struct frame *f = &sy->frames[sy->n_frames];
    f->name = intern(sy, name, strlen(name));
    f->display = display ? display : f->name;
    f->kind = (uint8_t)kind;
    f->unknown = (uint8_t)unknown;
    f->dso = NULL;
    f->path_key = 0;
    f->line = f->unlined = 0;
    f->interp_unnamed = 0;
    f->plumbing = kind == FRAME_USER && interpreter__is_plumbing(name);
    f->gil = (uint8_t)gil_role(name, kind);
    f->launcher = kind == FRAME_PYTHON && is_launcher(name);
    f->own = (uint8_t)own;
    f->stack_root = kind == FRAME_USER && is_stack_root(name);
    f->wait = (uint8_t)waits__kind(name, kind == FRAME_USER || kind == FRAME_KERNEL);
    idmap__put(&sy->frame_by_key, key, (void *)(uintptr_t)(sy->n_frames + 1));
    return (uint32_t)sy->n_frames++;
}

uint32_t symbols__named(struct symbols *sy, const char *name, enum frame_kind kind)
{
    return add_frame(sy, name, NULL, kind, 0, OWN_NONE);
}

const struct frame *symbols__get(const struct symbols *sy, uint32_t id)
{
    return &sy->frames[id];
}

/* A user symbol as perf prints it: C++ names demangled (a PLT entry's
 * target too).  Returns name itself when there is nothing to demangle. */
static const char *demangled(struct symbols *sy, const char *name)
{
    char mangled[1024];
    size_t len = strlen(name);
    int plt = len > 4 && strcmp(name + len - 4, "@plt") == 0;
    if (strncmp(name, "_Z", 2) != 0 || len - 4 * plt >= sizeof(mangled))
        return name;
    memcpy(mangled, name, len - 4 * plt);
    mangled[len - 4 * plt] = 0;
    /* perf demangles with libiberty and no options: no parameters and no
     * return type, so "unsigned long f<T>(int)" is "f<T>".  libstdc++'s
     * __cxa_demangle always gives both, and the return type cannot be cut
     * off reliably afterwards. */
    char *d = cplus_demangle(mangled, DMGL_NO_OPTS);
    if (!d)
        return name;
    char buf[4200];
    snprintf(buf, sizeof(buf), "%s%s", d, plt ? "@plt" : "");
    free(d);
    return intern(sy, buf, strlen(buf));
}

/*
 * stackcollapse-perf.pl reads "ADDR NAME (DSO)" lines and takes the last
 * " (" as the start of the DSO: a path with " (" in it ("/memfd:x
 * (deleted)") leaves "NAME (/memfd:x" as the name, which its tidying cuts
 * to "NAME ".  The native view keeps even that.
 */
static int splits_badly(const char *dso_path)
{
    return dso_path && strstr(dso_path, " (") != NULL;
}

/* A symbol's frame: perf's name, tidied; Python trampolines also get their
 * readable name. */
static uint32_t symbol_frame(struct symbols *sy, const char *perf_name, enum frame_kind kind,
                             const char *dso_path, enum own_role own)
{
    const char *display = NULL;
    if (kind == FRAME_USER)
        perf_name = demangled(sy, perf_name);
    /* py:: in a perf map, or in the jitted-*.so of perf inject --jit (-X perf_jit) */
    if (kind != FRAME_KERNEL && strncmp(perf_name, "py::", 4) == 0) {
        kind = FRAME_PYTHON;
        display = python_display(sy, perf_name);
    }
    const char *native = tidy(sy, perf_name, 1);
    if (splits_badly(dso_path)) {
        char buf[4200];
        snprintf(buf, sizeof(buf), "%s (", perf_name);
        if (!display)
            display = native;
        native = tidy(sy, buf, 1);
    }
    uint32_t id = add_frame(sy, native, display, kind, 0, own);
    /* from the name as the map has it: tidying may change it */
    if (kind == FRAME_PYTHON && !sy->frames[id].path_key)
        sy->frames[id].path_key = pyperfmap_path__key(perf_name, strlen(perf_name));
    return id;
}

/* An address without a symbol: "[dso basename]" as stackcollapse-perf.pl
 * writes it (so "[vdso]" becomes "[[vdso]]" in the native view).
 * interp: the DSO is the interpreter's own code (see is_interpreter). */
static uint32_t unknown_frame(struct symbols *sy, const char *dso_path, enum frame_kind kind,
                              int interp, enum own_role own)
{
    char native[4200], display[4200];
    const char *base = path_basename(dso_path);
    size_t len = strlen(base);
    snprintf(native, sizeof(native), splits_badly(dso_path) ? "[unknown] (" : "[%s]", base);
    if (len >= 2 && base[0] == '[' && base[len - 1] == ']')
        snprintf(display, sizeof(display), "%s", base);
    else
        snprintf(display, sizeof(display), "[%s]", base);
    uint32_t id = add_frame(sy, tidy(sy, native, 1), tidy(sy, display, 0), kind, 1, own);
    sy->frames[id].interp_unnamed |= (uint8_t)(interp > 0);
    return id;
}

/* Is ds CPython's own code (python3.11 with libpython linked in, or
 * libpython3.x.so)?  Every version 3.8+ exports PyEval_EvalCode, so even a
 * stripped binary's .dynsym names it.  Looked up once per DSO, and only
 * when one of its addresses has no symbol. */
static int is_interpreter(struct dso_syms *ds)
{
    if (!ds->interpreter) {
        ds->interpreter = -1;
        for (size_t i = 0; i < ds->img.syms.n; i++)
            if (strcmp(ds->img.syms.syms[i].name, "PyEval_EvalCode") == 0) {
                ds->interpreter = 1;
                break;
            }
    }
    return ds->interpreter;
}

/* ---- loading ------------------------------------------------------------ */

static struct dso_syms *dso_syms(struct symbols *sy, const struct dso *d)
{
    if (d->id >= sy->n_dsos) {
        size_t n = d->id + 16;
        sy->dsos = xrealloc(sy->dsos, n * sizeof(*sy->dsos));
        memset(sy->dsos + sy->n_dsos, 0, (n - sy->n_dsos) * sizeof(*sy->dsos));
        sy->n_dsos = n;
    }
    return &sy->dsos[d->id];
}

/* The file at path now, and the bytes at offset. */
static int look(const char *path, off_t offset, struct map_look *l)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    memset(l, 0, sizeof(*l));
    l->tail.offset = offset;
    if (fstat(fd, &st) == 0) {
        l->dev = st.st_dev, l->ino = st.st_ino, l->size = st.st_size, l->mtime = st.st_mtim;
        l->head_len = pread(fd, l->head, sizeof(l->head), 0);
        ssize_t n = pread(fd, l->tail.next, sizeof(l->tail.next), offset);
        l->tail.len = n > 0 ? (size_t)n : 0;
    }
    close(fd);
    return 0;
}

static int same_look(const struct map_look *a, const struct map_look *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->head_len == b->head_len && !memcmp(a->head, b->head, sizeof(a->head)) &&
           a->tail.len == b->tail.len && !memcmp(a->tail.next, b->tail.next, a->tail.len);
}

/* Loads path as ds's perf map; returns 0 or a negative errno (-EPERM: a
 * file owned by another user is refused, and said so once).  Live, the
 * file is looked at before the load (now: the caller just did), and the
 * loader's tail kept: a line added meanwhile shows as a change at the
 * next miss. */
static int try_perfmap(struct symbols *sy, struct dso_syms *ds, const char *path,
                       const struct map_look *now)
{
    struct map_look before;
    struct symtab fresh = {0};
    struct perfmap_tail tail;
    int live = sy->opts.live, err;
    if (live && !now) {
        if ((err = look(path, 0, &before)) != 0)
            return err;
        now = &before;
    }
    err = perfmap__load(&fresh, path, live ? &tail : NULL);
    if (err != 0) {
        if (err == -EPERM && !ds->map_warned) {
            ds->map_warned = 1;
            warnx_("%s: not a regular file owned by this user or root; ignored", path);
        }
        return err;
    }
    symtab__exit(&ds->map);
    ds->map = fresh;
    if (ds->map_path != path) {
        free(ds->map_path);
        ds->map_path = xstrdup(path);
    }
    if (live) {
        ds->map_seen = *now;
        ds->map_seen.tail = tail;
    }
    return 0;
}

/* perf-PID.map: next to perf.data first (a recording folder may carry its
 * maps), then --map-dir, then, for a live process in a container, its own
 * /tmp by its PID there, then /tmp (perf's order for the last two). */
static int load_perfmap(struct symbols *sy, struct dso_syms *ds, const struct dso *d)
{
    const char *dirs[] = {sy->opts.data_dir, sy->opts.map_dir};
    const uint32_t pids[] = {d->perfmap_pid, d->perfmap_fallback};
    char path[4200];
    for (size_t k = 0; k < 2 && pids[k]; k++) {
        for (size_t i = 0; i < 2; i++) {
            if (!dirs[i])
                continue;
            snprintf(path, sizeof(path), "%s/" CONTRACT_FILE_MAP_PREFIX "%u" CONTRACT_FILE_MAP_SUFFIX,
                     dirs[i], pids[k]);
            if (try_perfmap(sy, ds, path, NULL) == 0)
                return 0;
        }
        if (container__perfmap_path(pids[k], path, sizeof(path)) == 0 &&
            try_perfmap(sy, ds, path, NULL) == 0)
            return 0;
        snprintf(path, sizeof(path), "/tmp/perf-%u.map", pids[k]);
        if (try_perfmap(sy, ds, path, NULL) == 0)
            return 0;
    }
    return -ENOENT;
}

/* addr in a perf map.  Live (perf record -o - | pymerge -), a process adds
 * lines after pymerge read its map: in place, over the newlines that pad
 * libpyperfmap's file, or at the end of a file that grows; and it may empty
 * and rewrite a stale map of its PID that pymerge read first.  A miss then
 * reloads the map if the file changed.  (A recording read from a file was
 * made before: its maps already hold every entry its samples need.) */
static const struct sym *perfmap_find(struct symbols *sy, struct dso_syms *ds, uint64_t addr)
{
    const struct sym *s = symtab__find(&ds->map, addr);
    struct map_look now;
    if (s || !sy->opts.live || look(ds->map_path, ds->map_seen.tail.offset, &now) != 0 ||
        same_look(&now, &ds->map_seen))
        return s;
    if (try_perfmap(sy, ds, ds->map_path, &now) != 0) {
        ds->map_seen = now;     /* not again before it changes again */
        return NULL;
    }
    return symtab__find(&ds->map, addr);
}

static void load_dso(struct symbols *sy, struct dso_syms *ds, const struct dso *d)
{
    int ok = -1;
    switch (d->kind) {
    case DSO_FILE:
        ok = elf_image__load(&ds->img, d->path, d->build_id, d->build_id_size,
                             sy->opts.data_dir);
        /* A rebuilt binary would be mis-symbolized: say so, once. */
        if (ok == -ESTALE)
            warnx_("%s: rebuilt since the recording (build id differs); its frames are shown"
                   " as [%s]", d->path, path_basename(d->path));
        break;
    case DSO_VDSO:
        ok = elf_image__load_vdso(&ds->img, d->build_id, d->build_id_size, sy->opts.data_dir);
        break;
    case DSO_PERFMAP:
        ok = load_perfmap(sy, ds, d);
        break;
    case DSO_OTHER:
        break;
    }
    /* Live, a process may write its perf map after its first sample. */
    ds->state = ok == 0 ? LOADED : d->kind == DSO_PERFMAP && sy->opts.live ? UNLOADED : FAILED;
}

/* Runs alone (in the loader thread, or before any kernel lookup): it
 * touches only the kernel_* fields. */
static void *kernel_loader(void *arg)
{
    struct symbols *sy = arg;
    sy->kernel_errno = 0;
    if (kallsyms__load(&sy->kernel, sy->kernel_path, &sy->kernel_hidden, &sy->kernel_text) < 0)
        sy->kernel_errno = errno ? errno : EIO;
    return NULL;
}

static void load_kernel(struct symbols *sy)
{
    const char *path = sy->kernel_path;
    if (sy->kernel_loading) {
        pthread_join(sy->kernel_loader, NULL);
        sy->kernel_loading = 0;
    } else {
        kernel_loader(sy);
    }
    sy->kernel_state = FAILED;
    if (sy->kernel_errno) {
        warnx_("%s: %s; kernel frames are shown as [kernel]", path, strerror(sy->kernel_errno));
        sy->kernel_hidden = 1;
    } else if (sy->kernel_hidden) {
        warnx_("note: %s hides kernel addresses (kernel.kptr_restrict); kernel frames "
               "are shown as [kernel] (try --kallsyms with a copy saved as root)", path);
    } else {
        sy->kernel_state = LOADED;
        if (sy->recorded_text && sy->kernel_text)
            sy->kernel_shift = sy->recorded_text - sy->kernel_text;
    }
}

void symbols__kernel_text(struct symbols *sy, uint64_t text)
{
    sy->recorded_text = text;
}

/* ---- the cache ---------------------------------------------------------- */

static struct cache_slot *cache_slot(struct symbols *sy, uint32_t dso_plus1, uint64_t addr)
{
    size_t mask = sy->cache_slots - 1;
    size_t i = hash_u64(addr * 31 + dso_plus1) & mask;
    while (sy->cache[i].dso_plus1 &&
           (sy->cache[i].dso_plus1 != dso_plus1 || sy->cache[i].addr != addr))
        i = (i + 1) & mask;
    return &sy->cache[i];
}

static void cache_grow(struct symbols *sy)
{
    struct cache_slot *old = sy->cache;
    size_t n = sy->cache_slots;
    sy->cache_slots *= 2;
    sy->cache = xcalloc(sy->cache_slots, sizeof(*sy->cache));
    for (size_t i = 0; i < n; i++)
        if (old[i].dso_plus1)
            *cache_slot(sy, old[i].dso_plus1, old[i].addr) = old[i];
    free(old);
}

/* ---- resolution ----------------------------------------------------------- */

static uint32_t resolve_kernel(struct symbols *sy, uint64_t addr)
{
    if (sy->kernel_state == UNLOADED)
        load_kernel(sy);
    if (sy->kernel_hidden)
        return symbols__named(sy, "[kernel]", FRAME_KERNEL);
    /* perf's kernel map starts at _text, and below it no map is found: a
     * user stack's stray word equal to PERF_CONTEXT_KERNEL makes the next
     * one a "kernel" frame, and perf names it [unknown], not the kernel. */
    if (sy->kernel_text && addr - sy->kernel_shift < sy->kernel_text)
        return sy->unknown_user;
    const struct sym *s = symtab__find(&sy->kernel, addr - sy->kernel_shift);
    if (!s)
        return unknown_frame(sy, "[kernel.kallsyms]", FRAME_KERNEL, 0, OWN_NONE);
    return symbol_frame(sy, s->name, FRAME_KERNEL, NULL, OWN_NONE);
}

static uint32_t resolve_user(struct symbols *sy, const struct mapping *m, uint64_t addr)
{
    const struct dso *d = m->dso;
    struct dso_syms *ds = dso_syms(sy, d);
    enum frame_kind kind = d->kind == DSO_PERFMAP ? FRAME_JIT : FRAME_USER;
    const struct sym *s = NULL;
    uint64_t vaddr;

    if (ds->state == UNLOADED)
        load_dso(sy, ds, d);
    if (ds->state == LOADED) {
        if (d->kind == DSO_PERFMAP)
            s = perfmap_find(sy, ds, addr);
        else if (elf_image__vaddr(&ds->img, addr - m->start + m->pgoff, &vaddr))
            s = symtab__find(&ds->img.syms, vaddr);
    }
    int interp = !s && ds->state == LOADED && d->kind == DSO_FILE && is_interpreter(ds) > 0;
    enum own_role own = d->kind == DSO_FILE ? ownframes__role(d->path, s ? s->name : NULL)
                                            : OWN_NONE;
    uint32_t f = s ? symbol_frame(sy, s->name, kind, d->path, own)
                   : unknown_frame(sy, d->path, kind, interp, own);
    /* where it came from, for pprof's mappings; a name found in several
     * files is one frame, and keeps the first */
    if (!sy->frames[f].dso && d->kind != DSO_PERFMAP)
        sy->frames[f].dso = d;
    return f;
}

uint32_t symbols__frame(struct symbols *sy, const struct process *proc, uint64_t addr,
                        int kernel, int is_return)
{
    const struct mapping *m = NULL;
    uint32_t dso_plus1;
    uint64_t key;

    if (is_return)
        addr--;                         /* the call instruction, not the next one */
    if (kernel) {
        dso_plus1 = UINT32_MAX;
        key = addr;
    } else {
        m = process__find(proc, addr);
        if (!m)
            return sy->unknown_user;
        dso_plus1 = m->dso->id + 1;
        /* ELF code is cached by file offset, so every process mapping a
         * library shares its entries; perf maps are per process already. */
        key = m->dso->kind == DSO_PERFMAP ? addr : addr - m->start + m->pgoff;
    }
    struct cache_slot *slot = cache_slot(sy, dso_plus1, key);
    if (slot->dso_plus1)
        return slot->frame;
    uint32_t f = kernel ? resolve_kernel(sy, addr) : resolve_user(sy, m, addr);
    *slot = (struct cache_slot){key, dso_plus1, f};
    if (++sy->n_cache * 2 > sy->cache_slots)
        cache_grow(sy);
    return f;
}

enum trampoline_kind symbols__trampoline(struct symbols *sy, const struct process *proc,
                                         uint64_t addr, uint64_t *entry)
{
    const struct mapping *m = process__find(proc, addr);
    if (!m || m->dso->kind != DSO_PERFMAP)
        return TRAMPOLINE_NONE;
    struct dso_syms *ds = dso_syms(sy, m->dso);
    if (ds->state == UNLOADED)
        load_dso(sy, ds, m->dso);
    const struct sym *s = ds->state == LOADED ? perfmap_find(sy, ds, addr) : NULL;
    if (!s || strncmp(s->name, "py::", 4) != 0)
        return TRAMPOLINE_NONE;
    *entry = s->start;
    const struct sym *arena = symtab__find(&ds->map, addr & ~(uint64_t)(PYPERFMAP_ARENA_SIZE - 1));
    if (arena && arena->start == (addr & ~(uint64_t)(PYPERFMAP_ARENA_SIZE - 1)) &&
        strcmp(arena->name, PYPERFMAP_ARENA_SYMBOL) == 0)
        return TRAMPOLINE_PYPERFMAP;
    return TRAMPOLINE_CPYTHON;
}

const char *symbols__elf_file(struct symbols *sy, const struct dso *d)
{
    struct dso_syms *ds = dso_syms(sy, d);
    if (ds->state == UNLOADED)
        load_dso(sy, ds, d);
    return ds->state == LOADED ? ds->img.file : NULL;
}

uint32_t symbols__gil_wait(const struct symbols *sy)
{
    return sy->gil_wait;
}

uint32_t symbols__own_work(const struct symbols *sy)
{
    return sy->own_work;
}

uint32_t symbols__wait_leaf(const struct symbols *sy, unsigned kind)
{
    return sy->wait_leaf[kind];
}

int symbols__kernel_hidden(const struct symbols *sy)
{
    return sy->kernel_hidden;
}

/* ---- lines (--lines) ------------------------------------------------------ */

/* The perf map's line file, beside it: perf-PID.lines.  A missing or
 * damaged one costs its frames their lines, said once per file. */
static const struct linefile *dso_lines(struct dso_syms *ds)
{
    if (ds->lines_state != UNLOADED || !ds->map_path)
        return ds->lines_state == LOADED ? &ds->lines : NULL;
    size_t n = strlen(ds->map_path), suffix = strlen(CONTRACT_FILE_MAP_SUFFIX);
    char path[4200];
    ds->lines_state = FAILED;
    if (n < suffix || strcmp(ds->map_path + n - suffix, CONTRACT_FILE_MAP_SUFFIX) != 0 ||
        n - suffix + strlen(CONTRACT_FILE_LINES_SUFFIX) >= sizeof(path))
        return NULL;
    snprintf(path, sizeof(path), "%.*s" CONTRACT_FILE_LINES_SUFFIX, (int)(n - suffix), ds->map_path);
    int err = linefile__load(&ds->lines, path);
    if (err != 0) {
        warnx_("%s: %s; its Python frames are named without lines", path,
               err == -EPERM ? "not a regular file owned by this user or root" : strerror(-err));
        return NULL;
    }
    if (ds->lines.bad)
        warnx_("%s: %zu lines are not line tables (cut short or damaged); the frames they"
               " describe are named without lines", path, ds->lines.bad);
    ds->lines_state = LOADED;
    return &ds->lines;
}

int symbols__line(struct symbols *sy, const struct process *proc, uint64_t addr, uint32_t pos)
{
    const struct mapping *m = process__find(proc, addr);
    if (!m || m->dso->kind != DSO_PERFMAP)
        return 0;
    struct dso_syms *ds = dso_syms(sy, m->dso);
    const struct linefile *lf = ds->state == LOADED ? dso_lines(ds) : NULL;
    return lf ? linefile__line(lf, addr & ~(uint64_t)(PYPERFMAP_TRAMPOLINE_SIZE - 1), pos) : 0;
}

uint32_t symbols__with_line(struct symbols *sy, uint32_t id, int line)
{
    uint64_t key = (uint64_t)id << 32 | (uint32_t)line;
    uintptr_t got = (uintptr_t)idmap__get(&sy->lined, key);
    if (got)
        return (uint32_t)(got - 1);
    const struct frame f = sy->frames[id];
    char name[4200], display[4200];
    const char *close = strrchr(f.display, ')');
    /* "qualname (file.py)" -> "qualname (file.py:LINE)", py-spy's way */
    if (close && close[1] == 0)
        snprintf(display, sizeof(display), "%.*s:%d)", (int)(close - f.display), f.display, line);
    else
        snprintf(display, sizeof(display), "%s:%d", f.display, line);
    snprintf(name, sizeof(name), "%s:%d", f.name, line);
    GROW(sy->frames, sy->cap_frames, sy->n_frames + 1);
    struct frame *g = &sy->frames[sy->n_frames];
    *g = f;
    g->name = intern(sy, name, strlen(name));
    g->display = intern(sy, display, strlen(display));
    g->line = (uint32_t)line;
    g->unlined = id;
    idmap__put(&sy->lined, key, (void *)(uintptr_t)(sy->n_frames + 1));
    return (uint32_t)sy->n_frames++;
}
