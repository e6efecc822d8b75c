#!/usr/bin/env python3
"""Cut the seed corpora of tests/fuzz/corpus/ from real recordings.

Usage: make_corpus.py OUTDIR   (needs perf, root, python3.12 with -X perf)

Each seed is a few KB: small recordings whole, single records with their
event's attributes, register/stack snapshots of DWARF samples in
libpython, the heads of pymerge's folded output, /proc/kallsyms and a perf
map.  Rerun it to refresh the seeds after the formats change.
"""
import glob
import gzip
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import python  # noqa: E402

OUT = sys.argv[1]
PY = python('3.12')
LOOP = 'import time\nt=time.time()\nwhile time.time()-t<0.05: sum(range(1000))'
LIMIT = 8192


def put(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), 'wb') as f:
        f.write(data)


def perf(tmp, name, *args, pipe=False):
    path = os.path.join(tmp, name)
    cmd = ['perf', 'record', '-q', '-o', '-' if pipe else path] + list(args)
    with open(path, 'wb') if pipe else open(os.devnull, 'wb') as out:
        subprocess.run(cmd, stdout=out, stderr=subprocess.DEVNULL, check=True)
    return open(path, 'rb').read()


def records(data):
    """(attrs, [(type, misc, bytes)]) of a file-mode perf.data."""
    attr_size, aoff, asize, doff, dsize = struct.unpack_from('<QQQQQ', data, 16)
    attrs = [data[o:o + attr_size - 16] for o in range(aoff, aoff + asize, attr_size)]
    recs, at = [], doff
    while at + 8 <= doff + dsize:
        typ, misc, size = struct.unpack_from('<IHH', data, at)
        if size < 8:
            break
        recs.append((typ, misc, data[at:at + size]))
        at += size
    return attrs, recs


def main():
    tmp = tempfile.mkdtemp()
    work = ['--', PY, '-X', 'perf', '-c', LOOP]
    small = ['-e', 'cpu-clock', '-F', '999', '--no-buildid-cache']
    # Whole small recordings, file and pipe mode, fp / zstd / dwarf.
    for name, args in (('fp', small + ['-g']), ('zstd', small + ['-g', '-z']),
                       ('dwarf', ['-e', 'cpu-clock', '-F', '199', '--no-buildid-cache', '--call-graph', 'dwarf,512'])):
        d = perf(tmp, name + '.data', *(args + work))
        put('perfdata_file', name, d[:LIMIT * 4] if len(d) > LIMIT * 4 else d)
        p = perf(tmp, name + '.pipe', *(args + work), pipe=True)
        put('perfdata_pipe', name, p[16:16 + LIMIT * 4])
    # Single records with their attributes, for pdrecord.
    attrs, recs = records(open(os.path.join(tmp, 'dwarf.data'), 'rb').read())
    attrs_fp, recs_fp = records(open(os.path.join(tmp, 'fp.data'), 'rb').read())
    seen = {}
    for attr, rs in ((attrs[0], recs), (attrs_fp[0], recs_fp)):
        st, rf, flags = struct.unpack_from('<QQQ', attr, 24)
        bst, regs = struct.unpack_from('<QQ', attr, 72)
        fixed = struct.pack('<QQQQB', st, rf, regs, bst, (flags >> 18 & 1) | (flags >> 10 & 1) << 1)
        for typ, misc, rec in rs:
            key = (st, typ)
            if seen.get(key, 0) < 1 and len(rec) <= LIMIT:
                seen[key] = seen.get(key, 0) + 1
                put('pdrecord', '%x-%d-%d' % (st, typ, seen[key]), fixed + rec)
    # DWARF samples inside libpython, for unwind: pc as a file offset,
    # library addresses on the stack tagged 0xaa, sp as recorded (flag 2).
    lib = None
    n = 0
    for typ, misc, rec in recs:
        if typ == 10 and b'libpython3.12' in rec:      # MMAP2
            start, length, pgoff = struct.unpack_from('<QQQ', rec, 16)
            if (struct.unpack_from('<I', rec, 64)[0] & 4):  # PROT_EXEC
                lib = (start, length, pgoff)
        if typ != 9 or not lib or n >= 6:
            continue
        body = rec[8:]
        ip = struct.unpack_from('<Q', body, 0)[0]
        if not lib[0] <= ip < lib[0] + lib[1]:
            continue
        st = struct.unpack_from('<Q', attrs[0], 24)[0]
        # The fixed u64 fields before the callchain, then the callchain.
        off = 8 * sum(1 for bit in (0x10000, 0x1, 0x2, 0x4, 0x8, 0x40, 0x200, 0x80, 0x100)
                      if st & bit)
        if st & 0x20:
            off += 8 + 8 * struct.unpack_from('<Q', body, off)[0]
        abi = struct.unpack_from('<Q', body, off)[0]
        regs = list(struct.unpack_from('<20Q', body, off + 8))
        size = struct.unpack_from('<Q', body, off + 8 + 160)[0]
        stack = bytearray(body[off + 176:off + 176 + size])
        for i in range(0, len(stack) - 7, 8):
            v = struct.unpack_from('<Q', stack, i)[0]
            if lib[0] <= v < lib[0] + lib[1]:
                struct.pack_into('<Q', stack, i, 0xaa << 56 | (v - lib[0] + lib[2]))
        if abi != 2:
            continue
        pick = ip - lib[0] + lib[2]
        put('unwind', 'sample%d' % n, struct.pack('<IB', pick, 2) + struct.pack('<20Q', *regs) +
            bytes(stack))
        n += 1
    # Folded text: pymerge's own output, and flamegraph.pl's annotations.
    pymerge = os.environ.get('PYMERGE', 'pymerge')
    folded = subprocess.run([pymerge, os.path.join(tmp, 'fp.data')], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL).stdout
    put('folded', 'pymerge', folded[:LIMIT].rsplit(b'\n', 1)[0] + b'\n')
    put('folded', 'annotated', b'python3;_start_[k];main;PyEval_[j];do_work_[i] 12\n'
        b'python3-12/12;[unknown];foo 3\n\nbad line\n')
    # pprof: pymerge's own, gzip'd and bare (the bare message lets the
    # fuzzer reach protobuf's fields; gzip'd, it mostly meets zlib), and a
    # wrong magic.  (corpus/pprof/go* come from test_pprof.py's Go program.)
    for view in ('mixed', 'python'):
        pb = subprocess.run([pymerge, '--view', view, '--format', 'pprof',
                             os.path.join(tmp, 'fp.data')], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL).stdout
        if len(pb) <= LIMIT:
            put('pprof', view + '.pb.gz', pb)
        put('pprof', view + '.pb', gzip.decompress(pb)[:LIMIT])
    put('pprof', 'wrong-magic', b'PK\x03\x04' + b'\0' * 60)
    # pymerge merge's: sample labels (host=...) and mappings with build ids
    merged = subprocess.run([pymerge, 'merge', '--view', 'python', '--no-kernel',
                             '--format', 'pprof', '--label', 'host=a', os.path.join(tmp, 'fp.data'),
                             '--label', 'host=b', os.path.join(tmp, 'fp.data')],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    put('pprof', 'merged.pb', gzip.decompress(merged)[:LIMIT])
    # kallsyms (first byte 1) and a perf map (first byte 0).
    ks = open('/proc/kallsyms', 'rb').read().split(b'\n')
    put('symfiles', 'kallsyms', b'\x01' + b'\n'.join(ks[:60] + ks[-40:]) + b'\n')
    maps = sorted(glob.glob('/tmp/perf-*.map'), key=os.path.getmtime)
    if maps:
        put('symfiles', 'perfmap', b'\x00' + open(maps[-1], 'rb').read()[:LIMIT])
    subprocess.run(['rm', '-rf', tmp])


main()
