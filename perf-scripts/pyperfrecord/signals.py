"""Ctrl-C, SIGTERM and SIGHUP: the first one stops a recording, and none
interrupts what the command sets up or tears down (probes, mounts, perf
ending, the copy of the perf maps).

The three are blocked in the command's main thread from its start, so that
no KeyboardInterrupt can land half-way through a step, and children started
meanwhile (perf probe, perf report, umount...) inherit the mask: a second
Ctrl-C, which the terminal sends to the whole foreground process group, no
longer kills them.  They are unblocked only while the command waits for
perf (armed()), where the first one raises Interrupted; perf and the
recorded program start with them unblocked (child()).  first() tells which
one came, pending or handled, and the command exits 128 + its number.
"""
import contextlib
import os
import signal

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """The first stopping signal, raised where the command waits for perf."""


_received = []
_armed = [False]
# Whether a hangup stops the command: not under nohup, whose SIG_IGN the
# program inherits too.
_hangup = [True]
# Whether standard error is a terminal, which takes no more output after
# a hangup (EIO).
_tty = [False]


def _hung_up(sig):
    """After a hangup of its terminal, what the command says goes nowhere,
    rather than an EIO ending it before the folder is complete."""
    if sig == signal.SIGHUP and _tty[0]:
        _tty[0] = False
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)


def _handler(signum, _frame):
    # Python runs handlers in the main thread only; a signal that another
    # thread took (pyperf-top's copier) is counted here too.
    _received.append(signum)
    _hung_up(signum)
    if _armed[0] and len(_received) == 1:
        _armed[0] = False
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        raise Interrupted()


def _stops():
    """The signals that stop the command (under nohup, a hangup, though
    pending while blocked, does not)."""
    return STOPS if _hangup[0] else STOPS[:2]


def hold():
    """From now on the three signals are noted, not acted on, until armed()."""
    _hangup[0] = signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN
    _tty[0] = os.isatty(2)
    for s in _stops():
        signal.signal(s, _handler)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)


def child():
    """perf's start (preexec_fn): it takes Ctrl-C and SIGTERM as it would on
    its own, but ignores a hangup, which would kill it before it wrote its
    file (perf handles no SIGHUP); workload() gives the program SIGHUP's
    default back."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def workload(env):
    """env, for the program perf starts: the start hook (sitecustomize) of
    its first Python process gives SIGHUP its default back, which perf,
    ignoring it (child()), would not let it have; under nohup it stays
    ignored."""
    if _hangup[0]:
        env["PYPERFMAP_SIGHUP_DEFAULT"] = "1"
    return env


@contextlib.contextmanager
def armed():
    """While the command waits for perf: the first signal raises Interrupted
    (at once when one came before)."""
    if _received:
        raise Interrupted()
    _armed[0] = True
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        _armed[0] = False


def first():
    """The first stopping signal that came (handled or still pending), or None."""
    if _received:
        return _received[0]
    pending = signal.sigpending()
    sig = next((s for s in _stops() if s in pending), None)
    _hung_up(sig)
    return sig


def name(sig):
    return signal.Signals(sig).name


def exit_status(status, stopped, cmd):
    """What a command exits with: 128 + the signal that stopped it, else the
    recorded command's own status, as if it had run on its own (perf ends
    with the signal that killed the program, when one did); 0 when this
    process stopped perf (--duration, q) or recorded a running process."""
    sig = first()
    if sig:
        return 128 + sig
    if not cmd or stopped:
        return 0
    return 128 - status if status < 0 else status
