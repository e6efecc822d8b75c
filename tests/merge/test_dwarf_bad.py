#!/usr/bin/env python3
"""Bad input for DWARF unwinding: pymerge must stop a sample's walk with the
frames found so far, mark it [truncated], count it in -v, and never crash,
hang or drop the sample.  All recordings are made here with real perf:
  - CFI that loops (tests/merge/dwarf/badcfi.S: a frame that is its own
    caller, a CFA expression that jumps to itself);
  - garbage registers and stack copies (seeded corruption of a real file,
    record framing kept intact);
  - stack copies too small to reach the root (--call-graph dwarf,1024);
  - a recording from another machine, unwound through its cached vdso.
"""
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_dwarf_c import PYMERGE, SRC, build_dwprog, output, parse_folded, record_dwarf  # noqa: E402

PERF_RECORD_SAMPLE = 9
# sample_type bits before CALLCHAIN that add one u64 each, in record order
ONE_WORD = (16, 0, 1, 2, 3, 6, 9, 7, 8)   # IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD


def samples(buf):
    """Offsets of the regs and stack of each sample of a file-mode perf.data:
    [(abi offset, regs start, regs end, stack start, stack end, dyn_size offset)]."""
    _, _, _, attrs, _, data, data_size = struct.unpack_from('<8sQQQQQQ', buf)
    sample_type, = struct.unpack_from('<Q', buf, attrs + 24)
    regs_mask, = struct.unpack_from('<Q', buf, attrs + 80)
    nregs = bin(regs_mask).count('1')
    out, p = [], data
    while p < data + data_size:
        rtype, _, size = struct.unpack_from('<IHH', buf, p)
        if rtype == PERF_RECORD_SAMPLE:
            q = p + 8 + 8 * sum(1 for bit in ONE_WORD if sample_type >> bit & 1)
            nr, = struct.unpack_from('<Q', buf, q)
            q += 8 + 8 * nr                                 # CALLCHAIN
            abi, = struct.unpack_from('<Q', buf, q)
            regs = q + 8
            q = regs + (8 * nregs if abi else 0)
            ssize, = struct.unpack_from('<Q', buf, q)
            out.append((regs - 8, regs, q, q + 8, q + 8 + ssize, q + 8 + ssize))
        p += size
    return out


def corrupt(src, dst, seed):
    """A copy of src with garbage in every sample's registers and stack."""
    rnd = random.Random(seed)
    buf = bytearray(open(src, 'rb').read())
    for abi_at, regs, regs_end, stack, stack_end, dyn_at in samples(buf):
        spots = [(regs, regs_end)] * 3 + [(stack, stack + 4096)] * 40
        for lo, hi in spots:
            if hi - lo >= 8:
                at = lo + rnd.randrange((hi - lo) // 8) * 8
                old, = struct.unpack_from('<Q', buf, at)
                new = rnd.choice([0, rnd.getrandbits(64), old + rnd.randrange(-256, 256),
                                  old ^ (1 << rnd.randrange(64)), old & ~0xfff])
                struct.pack_into('<Q', buf, at, new % (1 << 64))
        what = rnd.randrange(20)
        if what == 0:   # an ABI other than 64-bit (0 would change the layout)
            struct.pack_into('<Q', buf, abi_at, rnd.choice([1, 3, 1 << 40]))
        elif what == 1 and stack_end > stack:
            struct.pack_into('<Q', buf, dyn_at, rnd.choice([0, 8, 13]))          # dyn_size
    with open(dst, 'wb') as f:
        f.write(buf)
    return len(samples(buf))


def vdso_image():
    with open('/proc/self/maps') as f:
        line = next(line for line in f if line.rstrip().endswith('[vdso]'))
    lo, hi = (int(a, 16) for a in line.split()[0].split('-'))
    with open('/proc/self/mem', 'rb') as f:
        f.seek(lo)
        img = bytearray(f.read(hi - lo))
    shoff, = struct.unpack_from('<Q', img, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', img, 0x3a)
    return bytes(img[:shoff + shentsize * shnum])


def zero_sections(img, names):
    """img with the contents of the named sections zeroed."""
    img = bytearray(img)
    shoff, = struct.unpack_from('<Q', img, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', img, 0x3a)
    strtab = struct.unpack_from('<Q', img, shoff + shentsize * shstrndx + 24)[0]
    for i in range(shnum):
        sh = shoff + shentsize * i
        name, = struct.unpack_from('<I', img, sh)
        off, size = struct.unpack_from('<QQ', img, sh + 24)
        n = bytes(img[strtab + name:img.index(0, strtab + name)]).decode()
        if n in names:
            img[off:off + size] = bytes(size)
    return bytes(img)


def pymerge(*args):
    p = subprocess.run([PYMERGE, '-v', '--weight', 'samples'] + list(args), timeout=120,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, parse_folded(p.stdout), p.stderr


class BadDwarf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='test_dwarf_bad.')
        cls.addClassCleanup(shutil.rmtree, cls.tmp)  # also if setUpClass fails

    def test_looping_cfi(self):
        prog = os.path.join(self.tmp, 'badcfi')
        output(['gcc', '-O2', '-g', '-o', prog, os.path.join(SRC, 'badcfi.c'),
             os.path.join(SRC, 'badcfi.S')])
        data = os.path.join(self.tmp, 'badcfi.data')
        record_dwarf(data, [prog])
        rc, folded, err = pymerge(data)
        self.assertEqual(rc, 0, err)
        loops = {s: c for s, c in folded.items() if 'cfi_loop_' in s}
        self.assertEqual({s.split(';')[1:3][0] for s in loops}, {'[truncated]'})
        self.assertEqual({s.split(';')[2] for s in loops}, {'cfi_loop_frame', 'cfi_loop_expr'})
        bad = int(re.search(r'bad-frame (\d+)', err).group(1))
        self.assertGreaterEqual(bad, sum(loops.values()))

    def test_garbage_registers_and_stacks(self):
        prog = build_dwprog(self.tmp)
        data = os.path.join(self.tmp, 'dwprog.data')
        record_dwarf(data, [prog, '0.5'])
        for seed in range(4):
            bad = os.path.join(self.tmp, 'garbage%d.data' % seed)
            n = corrupt(data, bad, seed)
            rc, folded, err = pymerge(bad)
            self.assertEqual(rc, 0, err)
            # (a [lost] stack stands for records perf lost, not samples)
            kept = sum(c for s, c in folded.items() if not s.startswith('[lost];'))
            self.assertEqual(kept, n, 'samples were dropped')
            self.assertRegex(err, r'DWARF unwinding: .* [1-9]\d* unwinding errors \(')
            self.assertTrue(any('[truncated]' in s for s in folded))

    def test_stack_copy_too_small(self):
        prog = build_dwprog(self.tmp)
        data = os.path.join(self.tmp, 'small.data')
        record_dwarf(data, [prog, '0.5'], stack=1024)
        rc, folded, err = pymerge(data)
        self.assertEqual(rc, 0, err)
        truncated = sum(c for s, c in folded.items() if '[truncated]' in s)
        self.assertGreater(truncated, 0)
        self.assertRegex(err, r'[1-9][\d.]*% truncated \(stack copy too small\)')
        for stack in folded:
            root = stack.split(';')[1]
            # _dl_start_user: ld.so running the constructors, before the
            # program's _start (a page fault in __init_misc can be sampled)
            self.assertIn(root, ('[truncated]', '_start', '_dl_start_user', 'clone3'), stack)
            if root == '[truncated]':
                self.assertNotIn('_start', stack.split(';'))


    def test_vdso_of_the_recording_machine(self):
        """A recording from another machine (its vdso's build id is not
        this kernel's) is unwound through the vdso with the CFI of perf's
        cached copy of that vdso, where its symbols come from too.  The
        copy here is this machine's vdso under another build id; without
        its .eh_frame the walks through it must stop there."""
        prog = os.path.join(self.tmp, 'vdsoloop')
        src = os.path.join(self.tmp, 'vdsoloop.c')
        with open(src, 'w') as f:
            f.write('#include <time.h>\nint main(void) { struct timespec s, t;\n'
                    '  clock_gettime(CLOCK_MONOTONIC, &s);\n'
                    '  do clock_gettime(CLOCK_MONOTONIC, &t);\n'
                    '  while ((t.tv_sec - s.tv_sec) * 1000000000L + t.tv_nsec - s.tv_nsec'
                    ' < 500000000L);\n  return 0; }\n')
        output(['gcc', '-O2', '-g', '-o', prog, src])
        data = os.path.join(self.tmp, 'vdso.data')
        record_dwarf(data, [prog])
        img = vdso_image()
        note = struct.pack('<III', 4, 20, 3) + b'GNU\0'
        at = img.index(note) + len(note)
        bid = img[at:at + 20]
        other = bytes(b ^ 0x5a for b in bid)
        with open(data, 'rb') as f:
            rec = f.read()
        self.assertIn(bid, rec, 'perf recorded no build id for the vdso')
        moved = os.path.join(self.tmp, 'vdso-other.data')
        with open(moved, 'wb') as f:
            f.write(rec.replace(bid, other))
        cache = os.path.join(self.tmp, 'debug')
        copy = os.path.join(cache, '[vdso]', other.hex(), 'vdso')
        os.makedirs(os.path.dirname(copy))
        env = dict(os.environ, PERF_BUILDID_DIR=cache)

        def vdso_stacks(image):
            with open(copy, 'wb') as f:
                f.write(image.replace(bid, other))
            p = subprocess.run([PYMERGE, '--view', 'native', moved], env=env, timeout=120,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            return {s: c for s, c in parse_folded(p.stdout).items() if '__vdso_' in s}

        whole = vdso_stacks(img)
        self.assertGreater(sum(whole.values()), 50, whole)
        self.assertTrue(all(s.split(';')[1] == '_start' for s in whole), whole)
        no_cfi = vdso_stacks(zero_sections(img, ('.eh_frame', '.eh_frame_hdr')))
        self.assertGreater(sum(no_cfi.values()), 50, no_cfi)
        self.assertTrue(all(s.split(';')[1] == '[truncated]' for s in no_cfi), no_cfi)


if __name__ == '__main__':
    unittest.main()
