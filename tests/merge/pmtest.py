"""Shared helpers for the pymerge test suites: run pymerge and perf, build
the frame-pointer test program, fold `perf script` output the way
stackcollapse-perf.pl does (stackcollapse.py)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import stackcollapse  # noqa: E402
from harness import PYMERGE, TIMEOUT, folded, run  # noqa: E402


def pymerge(*args, check=True, **kw):
    """Run pymerge (stdin, input... as subprocess.run takes them); returns
    the CompletedProcess (text), without the [lost] stack of a recording
    that lost records on a busy machine: perf script has no counterpart of
    it, and the tests comparing with perf script are about the others."""
    r = run([PYMERGE] + list(args), check=check, timeout=TIMEOUT, **kw)
    if r.stdout:
        r.stdout = ''.join(l for l in r.stdout.splitlines(True) if not l.startswith('[lost];'))
    return r


def perf_script(data, *fields):
    """`perf script` output of data (with -F fields if given)."""
    cmd = ['perf', 'script', '-i', str(data)]
    if fields:
        cmd += ['-F', ','.join(fields)]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          check=True, timeout=600, errors='surrogateescape').stdout


def golden(data, pid=False, tid=False, event_filter=''):
    """perf script | stackcollapse-perf.pl [--pid|--tid], in Python."""
    if pid or tid:
        # stackcollapse-perf.pl's documented way to get PIDs into perf script.
        text = perf_script(data, 'comm', 'pid', 'tid', 'time', 'period', 'event', 'ip',
                           'sym', 'dso')
    else:
        text = perf_script(data)
    return stackcollapse.collapse(text.splitlines(True), pid=pid, tid=tid,
                                  event_filter=event_filter)


def record(out, cmd, *perf_args, env=None, cwd=None):
    """perf record -o out [perf_args] -- cmd; returns out."""
    subprocess.run(['perf', 'record', '-q', '-o', str(out)] + list(perf_args) + ['--'] + cmd,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, cwd=cwd, timeout=600)
    return out


def parse_folded(text):
    """{stack: weight} from folded text; every line must be well formed."""
    out = {}
    for stack, w in folded(text):
        assert stack and w >= 0, 'bad folded line %r' % ('%s %d' % (stack, w))
        assert stack not in out, 'duplicate stack %r' % stack
        out[stack] = w
    return out


FP_FLAGS = ['-O0', '-fno-omit-frame-pointer']


def build_fp_program(dirname, tag=None):
    """Compile pmprog and libpmwork.so with frame pointers; returns the path.
    A tag makes the library's build id unique to this build."""
    src = os.path.join(HERE, 'fp')
    cc = os.environ.get('CC_TEST', 'cc')
    tag_flags = ['-DPMTAG="%s"' % tag] if tag else []
    subprocess.run([cc] + FP_FLAGS + tag_flags + ['-shared', '-fPIC', '-o',
                   os.path.join(dirname, 'libpmwork.so'), os.path.join(src, 'pmwork.c')],
                   check=True)
    prog = os.path.join(dirname, 'pmprog')
    subprocess.run([cc] + FP_FLAGS + ['-I', src, '-o', prog, os.path.join(src, 'pmprog.c'),
                    '-L', dirname, '-lpmwork', '-Wl,-rpath,$ORIGIN', '-pthread'], check=True)
    return prog


def tempdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def folded_diff(want, got, limit=10):
    """The lines that differ between two folded outputs, for a failure message."""
    w, g = parse_folded(want), parse_folded(got)
    diff = ['- %s %d' % (k, v) for k, v in sorted(w.items()) if g.get(k) != v][:limit]
    diff += ['+ %s %d' % (k, v) for k, v in sorted(g.items()) if w.get(k) != v][:limit]
    return '\n'.join(diff)


def perl_drops_parenthesised(text):
    """The Perl script skips every frame line whose name starts with '('
    (it takes them for perf script's process lines), so a C++ function of
    an anonymous namespace, "(anonymous namespace)::f", never reaches its
    output.  pymerge keeps it (a documented difference): drop such frames
    here and add up the stacks that then coincide."""
    out = {}
    for line in text.splitlines():
        stack, _, w = line.rpartition(' ')
        frames = stack.split(';')
        stack = ';'.join(frames[:1] + [f for f in frames[1:] if not f.startswith('(')])
        out[stack] = out.get(stack, 0) + int(w)
    return ''.join('%s %d\n' % (k, out[k])
                   for k in sorted(out, key=lambda s: s.encode('utf-8', 'surrogateescape')))


def check_native(test, data, *args, **golden_args):
    """Fail test unless pymerge --view native [args] on data prints what
    perf script | stackcollapse-perf.pl [golden_args] prints."""
    want = golden(data, **golden_args)
    got = pymerge('--view', 'native', *args, data).stdout
    # A dying task's samples can carry PID -1, which perf script prints as
    # "-1" and stackcollapse-perf.pl then mis-parses (the process name
    # swallows the timestamp): pymerge names the process ":-1", as perf
    # does (a documented difference).
    want = ''.join(l for l in want.splitlines(True) if not l.startswith(':-1'))
    got = ''.join(l for l in got.splitlines(True) if not l.startswith(':-1'))
    test.assertGreater(len(want.splitlines()), 3, 'too few stacks recorded')
    got = perl_drops_parenthesised(got)
    if got != want:
        test.fail('pymerge differs from perf script | stackcollapse-perf.pl:\n' +
                  folded_diff(want, got))
