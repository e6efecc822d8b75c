"""Function calls made inside another process on x86-64, through ptrace
from here: what attaching needs (mmap, Py_AddPendingCall) without gdb,
whose inferior calls fail on CPUs with a large XSAVE area (AMX: the kernel
takes NT_X86_XSTATE only at its full size, and gdb 13 writes less).

Only the main thread stops, for a few milliseconds; every call runs on a
copy of its registers below its stack's red zone, returns to address 0
(a SIGSEGV the tracer catches and never delivers), and the thread gets
its registers, vector state and any interrupted system call back as they
were.  Signals that arrive meanwhile are sent again before it goes on.
"""
import ctypes
import os
import re
import signal
import struct
import time

from pyperfrecord.probes import function_offsets

PTRACE_POKEDATA, PTRACE_CONT, PTRACE_GETREGS, PTRACE_SETREGS = 5, 7, 12, 13
PTRACE_GETFPREGS, PTRACE_SETFPREGS, PTRACE_DETACH = 14, 15, 17
PTRACE_GETREGSET, PTRACE_SETREGSET, PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4204, 0x4205, 0x4206, 0x4207
NT_X86_XSTATE = 0x202
PTRACE_EVENT_STOP = 128
WALL = 0x40000000
# struct user_regs_struct: 27 unsigned longs; the ones a call sets.
R9, R8, RAX, RCX, RDX, RSI, RDI, ORIG_RAX, RIP, EFLAGS, RSP = 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19
ARGS = (RDI, RSI, RDX, RCX, R8, R9)
RED_ZONE = 128
DF = 1 << 10
CALL_TIMEOUT = 10   # seconds for one stop or call, on a loaded machine

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = (ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class Failed(Exception):
    """The call could not be made; the process goes on as it was."""


class Regs(ctypes.Structure):
    _fields_ = [("r", ctypes.c_ulong * 27)]


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def ptrace(request, tid, addr=None, data=None):
    if _libc.ptrace(request, tid, addr, data) == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def symbols(pid, wanted):
    """{name: address in PID} of the functions wanted: {name: regex of the
    mapped files to look in, first match first}; from each file's .dynsym
    and where /proc/PID/maps puts that part of the file (PIE or not)."""
    with open("/proc/%d/maps" % pid) as f:
        maps = [line.split(None, 5) for line in f.read().splitlines()]
    maps = [m for m in maps if len(m) == 6 and m[5].startswith("/")]
    exe = os.readlink("/proc/%d/exe" % pid)
    found, read = {}, {}
    for name, where in wanted.items():
        for path in sorted({m[5] for m in maps if re.search(where, m[5]) or m[5] == exe},
                           key=lambda p: p == exe):
            if path not in read:
                read[path] = function_offsets("/proc/%d/root%s" % (pid, path), set(wanted))
            off = read[path].get(name)
            for m in maps if off is not None else ():
                start, end = (int(x, 16) for x in m[0].split("-"))
                if m[5] == path and int(m[2], 16) <= off < int(m[2], 16) + end - start:
                    found[name] = start + off - int(m[2], 16)
            if name in found:
                break
    return found


class Stopped:
    """PID's main thread, seized and stopped; calls in it; detach() puts
    everything back and lets it go."""

    def __init__(self, pid):
        self.pid, self.signals, self.stopped = pid, [], False
        ptrace(PTRACE_SEIZE, pid)
        self.saved, self.xstate = Regs(), None
        try:
            ptrace(PTRACE_INTERRUPT, pid)
            self.wait(lambda status: status >> 8 == (PTRACE_EVENT_STOP << 8 | signal.SIGTRAP))
            ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(self.saved))
            self.save_vector_state()
        except BaseException:
            self.detach()
            raise

    def save_vector_state(self):
        buf = ctypes.create_string_buffer(65536)
        iov = IoVec(ctypes.cast(buf, ctypes.c_void_p), len(buf))
        try:
            ptrace(PTRACE_GETREGSET, self.pid, NT_X86_XSTATE, ctypes.byref(iov))
            self.xstate = (buf, iov)    # iov.len: the size the kernel wants back
        except OSError:
            ptrace(PTRACE_GETFPREGS, self.pid, None, buf)
            self.xstate = (buf, None)

    def wait(self, done):
        """Waits for a stop that done(status) accepts; signals on the way
        are kept for later (sent again by detach()); Failed after
        CALL_TIMEOUT s or at any other stop."""
        end = time.monotonic() + CALL_TIMEOUT
        delay = 0.0005
        while True:
            got, status = os.waitpid(self.pid, WALL | os.WNOHANG)
            if got == 0:
                if time.monotonic() > end:
                    raise Failed("PID %d's main thread did not stop within %d s" % (self.pid, CALL_TIMEOUT))
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
                continue
            if not os.WIFSTOPPED(status):
                raise ProcessLookupError("PID %d exited" % self.pid)
            self.stopped = True
            if done(status):
                return
            sig = os.WSTOPSIG(status)
            if status >> 16:
                raise Failed("PID %d stopped unexpectedly (%s)" % (self.pid, signal.Signals(sig).name))
            self.signals.append(sig)
            self.cont()

    def cont(self):
        self.stopped = False
        ptrace(PTRACE_CONT, self.pid, None, None)

    def call(self, function, *args):
        """function(*args) in the stopped thread; its return value (rax)."""
        regs = Regs()
        ctypes.memmove(ctypes.byref(regs), ctypes.byref(self.saved), ctypes.sizeof(regs))
        r = regs.r
        r[ORIG_RAX] = 2**64 - 1     # no system call restarts into the call
        r[RSP] = ((r[RSP] - RED_ZONE - 256) & ~15) - 8
        r[RIP], r[RAX] = function, 0
        r[EFLAGS] &= ~DF
        for reg, value in zip(ARGS, args):
            r[reg] = value & (2**64 - 1)
        self.write(r[RSP], struct.pack("<Q", 0))   # returns to 0: a SIGSEGV
        ptrace(PTRACE_SETREGS, self.pid, None, ctypes.byref(regs))
        self.cont()
        self.wait(lambda status: status >> 8 == signal.SIGSEGV and self.at_zero(regs))
        return regs.r[RAX]

    def at_zero(self, regs):
        ptrace(PTRACE_GETREGS, self.pid, None, ctypes.byref(regs))
        if regs.r[RIP] != 0:
            raise Failed("a call in PID %d faulted at 0x%x" % (self.pid, regs.r[RIP]))
        return True

    def write(self, address, data):
        fd = os.open("/proc/%d/mem" % self.pid, os.O_WRONLY)
        try:
            if os.pwrite(fd, data, address) != len(data):
                raise Failed("short write to PID %d's memory" % self.pid)
        finally:
            os.close(fd)

    def detach(self):
        """The saved registers and vector state back (an interrupted system
        call restarts), the signals that came meanwhile sent again, and the
        thread let go; one still in a call that did not return is stopped
        first, and the call abandoned.  A process that exited needs none
        of it."""
        try:
            if not self.stopped:
                ptrace(PTRACE_INTERRUPT, self.pid)
                self.wait(lambda status: status >> 16 == PTRACE_EVENT_STOP or status >> 8 == signal.SIGSEGV)
            if self.xstate is not None:
                ptrace(PTRACE_SETREGS, self.pid, None, ctypes.byref(self.saved))
                buf, iov = self.xstate
                if iov is not None:
                    ptrace(PTRACE_SETREGSET, self.pid, NT_X86_XSTATE, ctypes.byref(iov))
                else:
                    ptrace(PTRACE_SETFPREGS, self.pid, None, buf)
            for sig in dict.fromkeys(self.signals):
                _libc.tgkill(self.pid, self.pid, sig)
            ptrace(PTRACE_DETACH, self.pid, None, None)
        except ProcessLookupError:
            pass


def pending_call(pid, page, text):
    """Queues PyRun_SimpleString(page) in PID by Py_AddPendingCall, first
    writing text to a fresh mmap'd page when page is 0; returns the page.
    Raises PermissionError (ptrace denied), ProcessLookupError (exited),
    LookupError (no CPython in it) or Failed."""
    found = symbols(pid, {"mmap": r"/libc[.-]", "Py_AddPendingCall": r"/libpython[^/]*\.so",
                          "PyRun_SimpleString": r"/libpython[^/]*\.so"})
    if "Py_AddPendingCall" not in found or "PyRun_SimpleString" not in found:
        raise LookupError("no Py_AddPendingCall in it")
    if "mmap" not in found:
        raise Failed("no mmap found in PID %d" % pid)
    try:
        thread = Stopped(pid)
    except OSError as e:
        if isinstance(e, (PermissionError, ProcessLookupError)):
            raise
        raise Failed("ptrace: %s" % e.strerror)
    try:
        if page == 0:
            page = thread.call(found["mmap"], 0, len(text), 3, 0x22, -1, 0)  # RW, private|anonymous
            if page >= 2**64 - 4096 or page % 4096:
                raise Failed("mmap in the process failed (%d)" % (page - 2**64))
            thread.write(page, text)
        if thread.call(found["Py_AddPendingCall"], found["PyRun_SimpleString"], page) & 0xffffffff:
            raise Failed("Py_AddPendingCall failed (its queue is full)")
        return page
    except OSError as e:
        if isinstance(e, ProcessLookupError):
            raise
        raise Failed("ptrace: %s" % e.strerror)
    finally:
        thread.detach()
