"""The names pyperf-record shares with pymerge and pyperfmap's interposer
(probe group, events, fields, environment, the recording folder's files),
read from contract.txt beside this file, which meson also makes the C
side's contract.h from: an attribute per KEY."""
import os


def read(path=os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract.txt")):
    """{KEY: VALUE} of a contract file."""
    names = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if len(words) != 2 or words[0] in names:
                raise ValueError("%s:%d: not a new KEY VALUE line: %r" % (path, n, line))
            names[words[0]] = words[1]
    return names


globals().update(read())
