"""pyperf-record's parts, one job each (the command itself is
perf-scripts/pyperf-record):

  command     the program to run: its interpreter, namespaces, environment
  probes      tracefs, and the uprobes of the alloc, leaks and calls modes
  procs       facts about processes: their perf maps, start times, children
  containers  perf maps of processes in namespaces of their own
  attach      pyperfmap switched on and off in a running process
  archive     kallsyms and the sampled DSOs, copied into the folder

A part that cannot go on raises RecordError; only the commands' main()
turns it into a line and an exit status (run_command), so that what a
recording set up on the way is torn down by whoever set it up.
"""
import os
import sys

# The command its messages are from: pyperf-record or pyperf-top.
PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "pyperf-record"


class RecordError(Exception):
    """What stops a recording, as the user reads it: one line (without the
    command's name) and the exit status the command ends with."""

    def __init__(self, msg, status=2):
        Exception.__init__(self, msg)
        self.status = status


def warn(msg):
    sys.stderr.write("%s: warning: %s\n" % (PROG, msg))


def run_command(main):
    """main()'s exit status; a RecordError becomes "PROG: message" on
    stderr and its status."""
    try:
        return main()
    except RecordError as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return e.status
