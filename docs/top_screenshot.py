#!/usr/bin/env python3
"""docs/top.png: a screenshot of pyperf-top, as the terminal shows it.

Runs pyperf-top on demo/app.py in a 130x34 tmux terminal, waits until the
run has lasted SECONDS, captures the screen with its attributes
(tmux capture-pane -e), writes it as HTML (the screen's characters, bold
and reverse video as they were) and has headless Chromium take the
picture.  Nothing is drawn that the terminal did not show.

usage: PATH=build/merge:$PATH PYTHONPATH=build/libpyperfmap \\
       python3 docs/top_screenshot.py [PYTHON] [SECONDS]
"""
import html
import os
import re
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLS, ROWS = 130, 34
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def to_html(screen):
    """The captured text with its SGR attributes (bold, reverse) as spans."""
    out, bold, rev = [], False, False
    for i, part in enumerate(SGR.split(screen)):
        if i % 2:
            for code in (part or "0").split(";"):
                bold = {"0": False, "1": True, "22": False}.get(code, bold)
                rev = {"0": False, "7": True, "27": False}.get(code, rev)
            continue
        if part:
            cls = " ".join(c for c, on in (("b", bold), ("r", rev)) if on)
            out.append('<span class="%s">%s</span>' % (cls, html.escape(part)) if cls else html.escape(part))
    return ("<!doctype html><meta charset=utf-8><style>body{margin:0;background:#1d1f21}"
            "pre{margin:0;padding:8px;font:14px/1.25 'DejaVu Sans Mono',monospace;color:#d8d8d8}"
            ".b{font-weight:bold;color:#fff}.r{background:#d8d8d8;color:#1d1f21}</style><pre>"
            + "".join(out) + "</pre>")


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 8
    sock = "top-screenshot-%d" % os.getpid()
    tmp = tempfile.mkdtemp(prefix="top-shot-")
    cmd = "%s %s/perf-scripts/pyperf-top -o %s/rec -- %s %s/demo/app.py 100000" % (
        sys.executable, TOP, tmp, python, TOP)
    try:
        subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", str(COLS), "-y", str(ROWS),
                        "sh", "-c", cmd + "; sleep 600"], check=True)
        time.sleep(seconds)
        screen = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-e"], check=True,
                                stdout=subprocess.PIPE, universal_newlines=True).stdout
        subprocess.run(["tmux", "-L", sock, "send-keys", "q"])
        time.sleep(3)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], stderr=subprocess.DEVNULL)
        # the server leaves its socket behind
        subprocess.run(["rm", "-f", "/tmp/tmux-%d/%s" % (os.getuid(), sock)])
    page = os.path.join(tmp, "screen.html")
    with open(page, "w") as f:
        f.write(to_html(screen))
    with open(os.path.join(TOP, "docs", "top.txt"), "w") as f:
        f.write(SGR.sub("", screen))
    png = os.path.join(TOP, "docs", "top.png")
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--screenshot=" + png, "--window-size=%d,%d" % (COLS * 8 + 34, ROWS * 18 + 14),
                    "file://" + page], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("wrote %s (and the text, docs/top.txt)" % png)


if __name__ == "__main__":
    main()
