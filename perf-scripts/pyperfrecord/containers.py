"""The perf maps of processes in namespaces of their own, held open
while they run (see ContainerMaps)."""
import os
import shutil
import threading

from pyperfrecord import contract
from pyperfrecord.procs import file_key, nspid, started_at, stat_fields


class ContainerMaps:
    """The perf maps of a process tree's members that live in a PID or
    mount namespace of their own (unshare, a container).  Each names its map
    by its PID in its namespace, in its own /tmp, and both are gone when it
    exits: the namespace's init ends them all, and the last one takes the
    mounts with it, a private /tmp too, often before perf has finished.  So
    while perf records, a thread looks for new processes in the tree every
    POLL seconds, notes each one's namespace PID (NSpid), and holds its /tmp
    open (a directory descriptor keeps a tmpfs readable after its namespace
    is gone) once its map appears there.  A process whose map appears less
    than POLL before it exits is missed."""

    POLL = 0.02

    def __init__(self, root, itself=True):
        """Watches root's tree: root too unless itself is False (perf)."""
        self.host_tmp = file_key("/tmp")
        self.tree = set()  # the live processes of the tree (host PIDs)
        self.started = {}  # host PID -> when it started (s since the epoch)
        self.known = {root}  # every PID looked at, in or out of the tree
        self.adopt(root, root=True)
        self.settled = set() if itself else {root}  # PIDs with nothing more to learn
        self.dirs = {}   # (st_dev, st_ino) of a namespace's /tmp -> its open descriptor
        self.seen = {}   # host PID -> (PID in its namespace, the key of its /tmp in dirs)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def watch(self):
        while True:
            self.grow()
            for pid in self.tree - self.settled:
                self.observe(pid)
            if self.done.wait(self.POLL):
                return

    def grow(self):
        """Adds the processes started since the last look whose parent is
        in the tree: one listing of /proc, and the parent of each new PID
        (a parent's PID is most often the smaller)."""
        pids = {int(e) for e in os.listdir("/proc") if e.isdigit()}
        self.tree &= pids
        for pid in sorted(pids - self.known):
            self.known.add(pid)
            self.adopt(pid)

    def adopt(self, pid, root=False):
        """Adds pid to the tree when its parent is there (or root is set)."""
        fields = stat_fields(pid)
        if fields and (root or int(fields[1]) in self.tree):
            self.tree.add(pid)
            self.started[pid] = started_at(pid, fields)

    def observe(self, pid):
        """Notes where pid's map is, when that is not the host's /tmp."""
        tmp = "/proc/%d/root/tmp" % pid
        ns, key = nspid(pid), file_key(tmp)
        if ns is None or key is None:
            return  # gone meanwhile
        if ns == pid and key == self.host_tmp:
            self.seen.pop(pid, None)  # the host's: its map stays in /tmp
            return
        try:
            # Not yet, not Python, or an older process's map (a /tmp shared
            # with the host): look again next time.  btime has whole seconds.
            if os.stat("%s/perf-%d.map" % (tmp, ns)).st_mtime < self.started[pid] - 1:
                return
        except OSError:
            return
        if key not in self.dirs:
            try:
                fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return
            st = os.fstat(fd)  # a tmpfs mounted since the stat is the one meant
            key = (st.st_dev, st.st_ino)
            if key in self.dirs:
                os.close(fd)
            else:
                self.dirs[key] = fd
        self.seen[pid] = (ns, key)
        self.settled.add(pid)

    def stop(self):
        self.done.set()
        self.thread.join()

    def copy(self, pid, dst, suffix=contract.FILE_MAP_SUFFIX):
        """Copies pid's map (or the file beside it of that suffix: its
        line file) to dst; returns whether it had one here."""
        if pid not in self.seen:
            return False
        ns, key = self.seen[pid]
        try:
            fd = os.open(contract.FILE_MAP_PREFIX + str(ns) + suffix, os.O_RDONLY | os.O_CLOEXEC,
                         dir_fd=self.dirs[key])
        except OSError:
            return False
        with open(fd, "rb") as src, open(dst, "wb") as out:
            shutil.copyfileobj(src, out)
        return True

    def close(self):
        for fd in self.dirs.values():
            os.close(fd)
        self.dirs = {}
