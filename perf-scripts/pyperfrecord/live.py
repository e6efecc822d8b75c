"""pyperf-top's view: pymerge --format live's snapshots (merge/output/live.h)
summed per function, for the last interval and the whole run, in any of
the three views and for one thread or all; shown as a plain table or
full-screen with curses."""
import collections
import time

VIEWS = ("python", "mixed", "native")
# Where each view's frames sit in an s line (live.h: native | mixed | python).
VIEW_PART = {"native": 0, "mixed": 1, "python": 2}
KIND_MARK = {"p": "", "n": "", "k": "[k] ", "j": "[j] ", "u": "", "r": ""}


class Snapshots:
    """What pymerge said so far: frames, threads, stacks, and the weight of
    each (thread, stack) over the run and over the last interval."""

    def __init__(self):
        self.weight = "weight"
        self.names = {}          # frame id -> shown name
        self.threads = {}        # thread id -> (pid, tid, comm)
        self.stacks = {}         # stack id -> three tuples of names, root first
        self.run = collections.Counter()        # (thread, stack) -> weight
        self.pending = []        # (thread, stack, weight) of the snapshot being read
        self.last = []           # of the last complete snapshot
        self.intervals = 0
        self.ended = False

    def feed(self, line):
        """Takes one line; returns True when it completed a snapshot."""
        kind, _, rest = line.partition(" ")
        if kind == "w":
            t, s, w = rest.split()
            self.pending.append((int(t), int(s), int(w)))
        elif kind == "s":
            sid, _, frames = rest.partition(" ")
            parts = frames.split("|")
            self.stacks[int(sid)] = tuple(tuple(self.names.get(int(f), "?") for f in p.split())
                                          for p in parts)
        elif kind == "f":
            fid, k, name = (rest.split(" ", 2) + [""])[:3]
            self.names[int(fid)] = KIND_MARK.get(k, "") + name
        elif kind == "t":
            tid, pid, ttid, comm = (rest.split(" ", 3) + [""])[:4]
            self.threads[int(tid)] = (int(pid), int(ttid), comm)
        elif kind == "h":
            self.weight = rest.strip()
        elif kind in ("i", "x"):
            for t, s, w in self.pending:
                self.run[(t, s)] += w
            self.last, self.pending = self.pending, []
            self.intervals += 1
            self.ended = kind == "x"
            return True
        return False

    def frames(self, stack, view):
        parts = self.stacks.get(stack)
        if not parts or len(parts) != 3:
            return ()
        return parts[VIEW_PART[view]]

    def tids(self):
        """The threads seen, by TID, in order."""
        return sorted({v[1] for v in self.threads.values()})

    def thread_name(self, tid):
        """comm TID, by the thread's last comm (after an exec)."""
        comms = [comm for _, t, comm in self.threads.values() if t == tid]
        return "%s %d" % (comms[-1], tid) if comms else str(tid)


def sums(snap, items, view, tid):
    """function -> [self, total], and the weight summed, over items
    ((thread, stack, weight)...), for view and one TID (None: all)."""
    out = collections.defaultdict(lambda: [0, 0])
    whole = 0
    for t, s, w in items:
        if tid is not None and snap.threads.get(t, (0, None))[1] != tid:
            continue
        frames = snap.frames(s, view)
        if not frames:
            continue
        whole += w
        out[frames[-1]][0] += w
        for f in set(frames):
            out[f][1] += w
    return out, whole


class Model:
    """The table the user looks at: rows of (function, interval self%,
    interval total%, run self%, run total%), sorted, for the chosen view,
    thread and sort key.  Run sums are kept up to date with each snapshot
    for the current choice only, and recomputed when it changes."""

    def __init__(self, snap, view="python"):
        self.snap = snap
        self.view, self.tid, self.sort = view, None, "self"
        self.paused = False
        self.rows = []
        self._run = None

    def choose(self, view=None, tid=-1, sort=None):
        if view:
            self.view = view
        if tid != -1:
            self.tid = tid
        if sort:
            self.sort = sort
        self._run = None
        self.update()

    def update(self, new=None):
        """Recomputes the rows; new: the snapshot just read, added to the
        run sums (which otherwise are summed afresh)."""
        snap = self.snap
        if self._run is None:
            self._run = sums(snap, ((t, s, w) for (t, s), w in snap.run.items()), self.view, self.tid)
        elif new:
            add, whole = sums(snap, new, self.view, self.tid)
            run, _ = self._run
            for f, (a, b) in add.items():
                run[f][0] += a
                run[f][1] += b
            self._run = (run, self._run[1] + whole)
        last, lw = sums(snap, snap.last, self.view, self.tid)
        run, rw = self._run
        pct = lambda v, w: 100.0 * v / w if w else 0.0  # noqa: E731
        rows = []
        for f, (rs, rt) in run.items():
            ls, lt = last.get(f, (0, 0))
            rows.append((f, pct(ls, lw), pct(lt, lw), pct(rs, rw), pct(rt, rw)))
        col = 1 if self.sort == "self" else 2
        rows.sort(key=lambda r: (-r[col], -r[col + 2], r[0]))
        self.rows = rows
        self.interval_weight, self.run_weight = lw, rw

    def hottest_stacks(self, function, n):
        """The n heaviest whole-run stacks (this view and thread) through
        function: (share of the run %, frames root first)."""
        snap = self.snap
        by = collections.Counter()
        for (t, s), w in snap.run.items():
            if self.tid is not None and snap.threads.get(t, (0, None))[1] != self.tid:
                continue
            frames = snap.frames(s, self.view)
            if function in frames:
                by[frames] += w
        whole = self.run_weight or 1
        return [(100.0 * w / whole, frames) for frames, w in by.most_common(n)]


HEADER2 = " -- last interval --  ---- whole run ----"
HEADER = "%9s %9s %9s %9s  %s" % ("SELF%", "TOTAL%", "SELF%", "TOTAL%", "FUNCTION")


def row_text(r, width):
    line = "%9.2f %9.2f %9.2f %9.2f  %s" % (r[1], r[2], r[3], r[4], r[0])
    return line[:width]


def plain_table(model, title, top=20):
    """The table as text: for a pipe (stdout not a terminal)."""
    lines = [title, HEADER2, HEADER]
    lines += [row_text(r, 1000) for r in model.rows[:top]]
    return "\n".join(lines) + "\n\n"


FOOTER = ("s/t sort self/total  v view  f thread  p pause  "
          "\u2191\u2193 select  Enter stacks  q quit")


class Screen:
    """The full-screen view (curses): a title line, the table, a footer
    with the keys; Enter shows the hottest stacks of the selected row."""

    MIN_COLS, MIN_ROWS = 60, 10

    def __init__(self, curses, stdscr, model, title):
        self.c, self.w, self.m, self.title = curses, stdscr, model, title
        self.sel = 0
        self.detail = None      # the function whose stacks are shown
        self.status = ""
        curses.curs_set(0)
        stdscr.nodelay(True)
        stdscr.keypad(True)
        curses.use_default_colors()

    def key(self, k):
        """Acts on a key; returns False to quit."""
        c, m = self.c, self.m
        if k in (ord("q"), ord("Q")):
            return False
        if self.detail is not None and k in (27, 10, 13, c.KEY_ENTER, c.KEY_LEFT, ord("b")):
            self.detail = None
        elif k in (10, 13, c.KEY_ENTER) and m.rows:
            self.detail = m.rows[min(self.sel, len(m.rows) - 1)][0]
        elif k == ord("s"):
            m.choose(sort="self")
        elif k == ord("t"):
            m.choose(sort="total")
        elif k == ord("v"):
            m.choose(view=VIEWS[(VIEWS.index(m.view) + 1) % len(VIEWS)])
            self.sel = 0
        elif k == ord("f"):
            tids = [None] + m.snap.tids()
            m.choose(tid=tids[(tids.index(m.tid) + 1) % len(tids) if m.tid in tids else 0])
            self.sel = 0
        elif k in (ord("p"), ord(" ")):
            m.paused = not m.paused
            if not m.paused:
                m.choose()      # the run's sums missed the snapshots read meanwhile
        elif k == c.KEY_DOWN:
            self.sel += 1
        elif k == c.KEY_UP:
            self.sel = max(0, self.sel - 1)
        self.draw()
        return True

    def put(self, y, text, attr=0):
        h, w = self.w.getmaxyx()
        if 0 <= y < h:
            try:
                self.w.addnstr(y, 0, text.ljust(w), w - (y == h - 1), attr)
            except self.c.error:
                pass

    def draw(self):
        c, m = self.c, self.m
        h, w = self.w.getmaxyx()
        self.w.erase()
        if w < self.MIN_COLS or h < self.MIN_ROWS:
            self.put(0, "terminal too small: %dx%d, needs %dx%d" % (w, h, self.MIN_COLS, self.MIN_ROWS))
            self.w.refresh()
            return
        thread = "all" if m.tid is None else m.snap.thread_name(m.tid)
        state = "PAUSED" if m.paused else time.strftime("%H:%M:%S")
        self.put(0, "%s  %s" % (self.title, state), c.A_BOLD)
        self.put(1, "view %s  thread %s  sort %s  %s  %s" % (
            m.view, thread, m.sort, m.snap.weight, self.status))
        if self.detail is not None:
            self.draw_detail(h, w)
        else:
            self.put(2, HEADER2)
            self.put(3, HEADER, c.A_REVERSE)
            rows = m.rows[:h - 5]
            self.sel = min(self.sel, max(0, len(rows) - 1))
            for i, r in enumerate(rows):
                self.put(4 + i, row_text(r, w), c.A_STANDOUT if i == self.sel else 0)
        self.put(h - 1, FOOTER, c.A_REVERSE)
        self.w.refresh()

    def draw_detail(self, h, w):
        self.put(2, "hottest stacks through %s, whole run, root first (Enter or Esc: back)"
                 % self.detail, self.c.A_REVERSE)
        y = 3
        for share, frames in self.m.hottest_stacks(self.detail, 10):
            text = "%6.2f%%  %s" % (share, " ; ".join(frames))
            while text and y < h - 1:
                self.put(y, text[:w], self.c.A_BOLD if text[6:7] == "%" else 0)
                text = text[w:] and "         " + text[w:]
                y += 1
