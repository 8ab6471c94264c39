#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The timed loop of each tle-bench-lab kernel in a SASS listing.

Every lab kernel reads %clock64 right before and right after its timed loop
(BarrierLab.cu, loopStart/loopEnd), so the loop is what lies between the two
`CS2R ..., SR_CLOCKLO` reads. The outer loop is the backward branch with the
widest span there; this prints, per kernel, how many instructions of each
kind of interest the outer loop body holds (communicator loads through the
read-only path are LDG.E.64.CONSTANT; the flag accesses are the STRONG.SYS
ones) and how many of them come before the first signal (the hot path;
in layout order, so it includes code the hot path branches around, such as
the cache-miss path of stateless-smemcache); with --head the instructions up
to the signal, with --list the whole body.

  cuobjdump --dump-sass BarrierLab.cubin > lab.sass
  sass_loop.py lab.sass [KERNEL-SUBSTRING] [--head] [--list]
"""

import re
import sys

KINDS = [
    ("comm loads (LDG.E.64.CONSTANT)", r"LDG\.E\.64\.CONSTANT"),
    ("shared loads (LDS)", r"\bLDS"),
    ("constant bank (LDC/ULDC)", r"\bU?LDC"),
    ("epoch load (LDG.E.STRONG.GPU)", r"LDG\.E\.STRONG\.GPU"),
    ("polls (LD[G].E.STRONG.SYS)", r"\bLDG?\.E\.STRONG\.SYS"),
    ("signals (RED/ST .STRONG.SYS)", r"(REDG?\.E\.ADD|\bSTG?\.E)\.STRONG\.SYS"),
    ("fences (MEMBAR)", r"MEMBAR"),
    ("L1 invalidations (CCTL.IVALL)", r"CCTL\.IVALL"),
    ("block syncs (BAR.SYNC)", r"BAR\.SYNC"),
    ("clock reads (GLOBALTIMER)", r"GLOBALTIMER"),
]


def kernels(text):
    for m in re.finditer(r"Function : (\S+)(.*?)(?=Function : |\Z)", text, re.S):
        ins = re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*;)", m.group(2))
        yield m.group(1), [(int(a, 16), s.strip()) for a, s in ins]


def outer_loop(ins):
    marks = [i for i, (_, s) in enumerate(ins) if "SR_CLOCKLO" in s]
    if len(marks) < 2:
        return None
    lo, hi = marks[0], marks[-1]
    best = None
    for i in range(lo, hi):
        a, s = ins[i]
        t = re.search(r"\bBRA (?:!?U?P\d, )?(0x[0-9a-f]+)", s)
        if t and int(t.group(1), 16) <= a:
            start = int(t.group(1), 16)
            if best is None or a - start > best[1] - best[0]:
                best = (start, a)
    if best is None:
        return None
    return [(a, s) for a, s in ins if best[0] <= a <= best[1]]


def main():
    args = [a for a in sys.argv[1:] if a not in ("--list", "--head")]
    if not args:
        print(__doc__)
        return 2
    want = args[1] if len(args) > 1 else ""
    for name, ins in kernels(open(args[0]).read()):
        if want not in name:
            continue
        body = outer_loop(ins)
        if body is None:
            continue
        print("== %s: outer loop %#x-%#x, %d instructions" %
              (name, body[0][0], body[-1][0], len(body)))
        for label, rx in KINDS:
            n = sum(1 for _, s in body if re.search(rx, s))
            if n:
                print("   %-34s %d" % (label, n))
        # The hot path runs from the loop head to the signal; the paths for
        # more than two ranks come after it (or are branched around).
        sig = next((i for i, (_, s) in enumerate(body)
                    if re.search(KINDS[5][1], s)), len(body))
        head = body[:sig + 1]
        print("   head to first signal: %d instructions, %d comm loads, "
              "%d LDS" % (len(head),
                          sum(1 for _, s in head if "CONSTANT" in s),
                          sum(1 for _, s in head if re.search(r"\bLDS", s))))
        if "--head" in sys.argv:
            for a, s in head:
                print("   %05x  %s" % (a, s))
        if "--list" in sys.argv:
            for a, s in body:
                print("   %05x  %s" % (a, s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
