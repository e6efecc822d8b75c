"""A faithful Python port of FlameGraph's stackcollapse-perf.pl (default
options, plus --pid, --tid, --kernel and --jit), used as the golden
reference for pymerge's native view and as the folding step of the
benchmark.  stackcollapse-perf.pl itself is not packaged for Debian and
there is no network here, so the tests fold `perf script` output with this.

Rules kept from the Perl script (brendangregg/FlameGraph, master):
  * a sample header line "comm PID/TID ... PERIOD EVENT:" starts a stack;
    only the first event seen is folded (--event-filter default);
  * the value is the sample's period (or 1 when perf script prints none,
    or 0);
  * frame lines are "ADDR FUNC (MODULE)"; "+0x.." offsets are stripped,
    "[unknown]" becomes "[module basename]" when the module is known,
    ';' -> ':', everything from the first '(' is cut (except Go method
    names and "(anonymous namespace)"), quotes are dropped, "->"-joined
    inline chains are split;
  * comm spaces become '_'; --pid / --tid append -PID or -PID/TID;
  * output lines are sorted bytewise.
"""
import re
import sys

HEADER = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+')
EVENT = re.compile(r':\s*(\d+)*\s+(\S+):\s*$')
FRAME = re.compile(r'^\s*(\w+)\s*(.+) \((.*)\)')
GO = re.compile(r'\.\(.*\)\.')
ARGS = re.compile(r'\((?!anonymous namespace\)).*')


def collapse(lines, pid=False, tid=False, kernel=False, jit=False, event_filter=''):
    collapsed = {}
    stack = []
    pname = None
    period = 1
    for line in lines:
        if line.startswith('#'):
            continue
        line = line.rstrip('\n')
        if line == '':
            if pname is None:       # filtered sample
                stack = []
                continue
            stack.insert(0, pname)
            key = ';'.join(stack)
            collapsed[key] = collapsed.get(key, 0) + period
            stack = []
            pname = None
            continue
        m = HEADER.match(line)
        if m:
            comm, p, t = m.group(1), m.group(2), m.group(3)
            if not t:
                t, p = p, '?'
            per = ''
            e = EVENT.search(line)
            if e:
                per = e.group(1) or ''
                ev = e.group(2)
                if event_filter == '':
                    event_filter = ev
                elif ev != event_filter:
                    continue
            period = int(per) if per and int(per) else 1
            if tid:
                pname = '%s-%s/%s' % (comm, p, t)
            elif pid:
                pname = '%s-%s' % (comm, p)
            else:
                pname = comm
            pname = pname.replace(' ', '_')
            continue
        m = FRAME.match(line)
        if m:
            if pname is None:
                continue
            pc, rawfunc, mod = m.groups()
            rawfunc = re.sub(r'\+0x[\da-f]+$', '', rawfunc)
            if rawfunc.startswith('('):
                continue
            inline = []
            for func in rawfunc.split('->'):
                if func == '[unknown]':
                    func = '[%s]' % (re.sub(r'.*/', '', mod) if mod != '[unknown]' else 'unknown')
                func = func.replace(';', ':')
                if not GO.search(func):
                    func = ARGS.sub('', func)
                func = func.replace('"', '').replace("'", '')
                if inline:
                    if '_[i]' not in func:
                        func += '_[i]'
                elif kernel and re.search(r'(^\[|vmlinux$)', mod) and 'unknown' not in mod:
                    func += '_[k]'
                elif jit and re.search(r'/tmp/perf-\d+\.map', mod):
                    if '_[j]' not in func:
                        func += '_[j]'
                inline.append(func)
            stack[0:0] = inline
            continue
        print('Unrecognized line: %s' % line, file=sys.stderr)
    return ''.join('%s %d\n' % (k, collapsed[k])
                   for k in sorted(collapsed, key=lambda s: s.encode('utf-8', 'surrogateescape')))


def main():
    args = sys.argv[1:]
    opts = {'pid': '--pid' in args, 'tid': '--tid' in args,
            'kernel': '--kernel' in args, 'jit': '--jit' in args}
    files = [a for a in args if not a.startswith('--')]
    src = open(files[0], errors='surrogateescape') if files else \
        open(sys.stdin.fileno(), errors='surrogateescape', closefd=False)
    sys.stdout.write(collapse(src, **opts))


if __name__ == '__main__':
    main()
