#!/usr/bin/env python3
"""The length of every C function in a tree: the long ones, and a histogram.

    tests/funclen.py [--over N] [DIR ...]      (default: merge libpyperfmap, 80)

prints each function longer than N lines (longest first) as
"LINES  FILE:LINE  NAME", then, per directory and in all, how many
functions fall in each length bucket.  A report, not a gate: it always
exits 0 (1 for a directory that does not exist, 2 for bad usage).

A function's length is the number of lines from the line with its name to
the line with its closing brace, both included: what a reader holds in
mind, signature and all.

How it reads C: a simple scanner, not a parser.  It blanks comments,
string and character literals and preprocessor lines (with their
continuations), then matches braces; a "{" at file level whose preceding
text ends in ")" (after attributes such as __attribute__((...))) opens a
function, named by the identifier before the matching "(".  Limits:
  - a "{" at file level after something else (struct, enum, union, an
    initializer "= {") is skipped with its block, as it should be;
  - a function defined by a macro (#define F(x) ... { }) is not seen, and
    a function whose name comes from a macro is listed under the macro's
    name;
  - #if branches are both read: a function whose braces differ between
    branches (unbalanced per branch) would throw the count off; none does
    here, and the scanner says so if braces do not balance in a file.
On merge/ and libpyperfmap/ its names, lines and lengths agree with the
start and end lines Universal Ctags gives (ctags --fields=+ne) for every
function of the .c files; ctags leaves out the static inline ones of the
headers, which this counts.
"""
import argparse
import os
import re
import sys

BUCKETS = [(1, 20), (21, 40), (41, 60), (61, 80), (81, 100), (101, 150), (151, 200),
           (201, None)]
IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*$")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined"}


def blank(text):
    """text with comments, literals and preprocessor lines replaced by
    spaces, newlines kept, so offsets and line numbers stay."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and
                                       text[i:].lstrip(" \t").startswith("#")):
            j = i
            while j < n and text[j] != "\n":   # the directive and its continuations
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                if text.startswith("/*", j):
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                j += 1
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            j = n if end < 0 else end + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            line_start = c == "\n" or (line_start and c in " \t")
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def open_paren(head):
    """Index of the "(" that matches head's final ")", or -1."""
    depth = 0
    for k in range(len(head) - 1, -1, -1):
        if head[k] == ")":
            depth += 1
        elif head[k] == "(":
            depth -= 1
            if depth == 0:
                return k
    return -1


def strip_attributes(head):
    """head without the __attribute__((...)) or asm(...) at its end."""
    head = head.rstrip()
    while head.endswith(")"):
        before = head[:open_paren(head)].rstrip()
        word = re.search(r"(__attribute__|__asm__|asm)$", before)
        if not word:
            break
        head = before[:word.start()].rstrip()
    return head


def functions(path):
    """[(name, first line, lines)] of the functions defined in path, and
    whether its braces balance."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    depth = 0
    last = 0            # where the text since the last file-level item starts
    start = None        # (name, line) of the function being read
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                head = strip_attributes(text[last:i])
                start = None
                if head.endswith(")"):
                    m = IDENT.search(head[:open_paren(head)].rstrip())
                    if m and m.group(0) not in KEYWORDS:
                        pos = last + m.start()
                        start = (m.group(0), text.count("\n", 0, pos) + 1)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if start:
                    end_line = text.count("\n", 0, i) + 1
                    found.append((start[0], start[1], end_line - start[1] + 1))
                start = None
                last = i + 1
        elif c == ";" and depth == 0:
            last = i + 1
    return found, depth == 0


def c_files(top):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("build", ".")))
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(root, name)


def bucket_of(lines):
    for i, (lo, hi) in enumerate(BUCKETS):
        if lines >= lo and (hi is None or lines <= hi):
            return i
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="funclen.py",
                                 description="C function lengths: the long ones, a histogram")
    ap.add_argument("--over", type=int, default=80, metavar="N",
                    help="list the functions longer than N lines (default 80)")
    ap.add_argument("dirs", nargs="*", default=["merge", "libpyperfmap"], metavar="DIR")
    args = ap.parse_args(argv)
    over, dirs = args.over, args.dirs
    long_ones, counts = [], {}
    for d in dirs:
        if not os.path.isdir(d):
            sys.stderr.write("funclen.py: %s: not a directory\n" % d)
            return 1
        counts[d] = [0] * len(BUCKETS)
        for path in c_files(d):
            found, balanced = functions(path)
            if not balanced:
                sys.stderr.write("funclen.py: %s: braces do not balance; counts may be off\n"
                                 % path)
            for name, line, lines in found:
                counts[d][bucket_of(lines)] += 1
                if lines > over:
                    long_ones.append((lines, "%s:%d" % (path, line), name))
    print("functions over %d lines: %d" % (over, len(long_ones)))
    for lines, where, name in sorted(long_ones, key=lambda x: (-x[0], x[1])):
        print("%5d  %-36s %s" % (lines, where, name))
    labels = ["%d-%s" % (lo, hi if hi else "") if hi else "%d+" % lo for lo, hi in BUCKETS]
    print()
    print("%-14s" % "lines" + "".join("%9s" % l for l in labels) + "%9s" % "all")
    total = [0] * len(BUCKETS)
    for d in dirs:
        total = [a + b for a, b in zip(total, counts[d])]
        print("%-14s" % d + "".join("%9d" % k for k in counts[d]) + "%9d" % sum(counts[d]))
    if len(dirs) > 1:
        print("%-14s" % "all" + "".join("%9d" % k for k in total) + "%9d" % sum(total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
