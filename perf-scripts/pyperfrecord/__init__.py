"""pyperf-record's parts, one job each (the command itself is
perf-scripts/pyperf-record):

  command     the program to run: its interpreter, namespaces, environment
  probes      tracefs, and the uprobes of the alloc, leaks and calls modes
  procs       facts about processes: their perf maps, start times, children
  containers  perf maps of processes in namespaces of their own
  attach      pyperfmap switched on and off in a running process
  archive     kallsyms and the sampled DSOs, copied into the folder
"""
import os
import sys

# The command its messages are from: pyperf-record or pyperf-top.
PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "pyperf-record"


def warn(msg):
    sys.stderr.write("%s: warning: %s\n" % (PROG, msg))


def die(msg, code=2):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.exit(code)
