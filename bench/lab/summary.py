#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Short summary of a tle-bench-lab CSV (exp,impl,ctas,iters,rep,us,mhz):
median [min-max] per configuration, the SM clocks, the differences that
answer the run-5 questions (docs/gpu-notes.md, "Run 5 plan"), and the
all-reduce table. Standard library only; works on a partial CSV (a run that
was cut short) and prints what it has.

Usage: summary.py lab.csv
"""

import csv
import sys
from collections import defaultdict


def stats(values):
    v = sorted(values)
    return v[len(v) // 2], v[0], v[-1]


def load(path):
    """{(exp, impl, iters): {ctas: ([us...], [mhz...])}} in first-seen order."""
    rows = defaultdict(lambda: defaultdict(lambda: ([], [])))
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                key = (r["exp"], r["impl"], int(r["iters"]))
                ctas, us = int(r["ctas"]), float(r["us"])
                mhz = float(r["mhz"]) if r.get("mhz") else None
            except (KeyError, TypeError, ValueError):
                continue  # a line cut off by the end of the run
            cell = rows[key][ctas]
            cell[0].append(us)
            if mhz is not None:
                cell[1].append(mhz)
    return rows


def latency(rows):
    lat = {k: v for k, v in rows.items() if k[0] in ("1", "2")}
    if not lat:
        print("experiments 1-2: no rows")
        return
    ctas = sorted({c for v in lat.values() for c in v})
    width = 19
    print("Experiments 1-2: sync acq_rel, block group, 128 threads, one slot "
          "per CTA; us per round, slowest CTA of both ranks;")
    print("median [min-max] over the interleaved repetitions (n = reps)")
    print("%-24s %6s" % ("impl", "iters")
          + "".join(("%d CTA%s" % (c, "" if c == 1 else "s")).rjust(width)
                    for c in ctas))
    for (exp, impl, iters), per in lat.items():
        cells = []
        for c in ctas:
            if c in per:
                med, lo, hi = stats(per[c][0])
                cells.append(("%.3f [%.2f-%.2f]" % (med, lo, hi)).rjust(width))
            else:
                cells.append("-".rjust(width))
        print("%-24s %6d" % (impl, iters) + "".join(cells))
    reps = sorted({len(v[0]) for per in lat.values() for v in per.values()})
    print("(n = %s)" % ",".join(map(str, reps)))
    print()
    print("SM clock of CTA 0 (MHz, the lower GPU), over every row: "
          "median [min-max]")
    for c in ctas:
        allm = [m for per in lat.values() if c in per for m in per[c][1]]
        if not allm:
            continue
        mid, lo, hi = stats(allm)
        odd = []
        for (exp, impl, iters), per in lat.items():
            if c in per and per[c][1]:
                m = stats(per[c][1])[0]
                if abs(m - mid) > 0.02 * mid:
                    odd.append("%s@%d %.0f" % (impl, iters, m))
        print("  %3d CTAs: %.0f [%.0f-%.0f]%s" % (
            c, mid, lo, hi,
            "; medians off by >2%: " + ", ".join(odd) if odd else ""))
    print()
    med = {}
    for (exp, impl, iters), per in lat.items():
        for c, (us, _) in per.items():
            med[(impl, iters, c)] = stats(us)[0]
    iters = max(k[1] for k in med)
    short = sorted({k[1] for k in med if k[1] != iters})
    pairs = [
        ("code, NCCL's memory", "ref-on-nccl-mem", "nccl-lsa"),
        ("memory NCCL words-cudaMalloc", "ref-on-nccl-mem", "ref-cudamalloc-thr"),
        ("memory NCCL res-cudaMalloc", "ref-on-nccl-res", "ref-cudamalloc-thr"),
        ("memory cuMem-cudaMalloc", "ref-cumem", "ref-cudamalloc"),
        ("generic-global", "ref-generic", "ref-cudamalloc"),
        ("launch seq-thr, NCCL", "nccl-lsa-seq", "nccl-lsa"),
        ("launch seq-thr, ref", "ref-cudamalloc", "ref-cudamalloc-thr"),
        ("devcomm per CTA count", "nccl-lsa-nb", "nccl-lsa"),
        ("TLE session-ref", "tle-session", "ref-cudamalloc"),
        ("stateless-session", "tle-stateless", "tle-session"),
        ("timeout off-on", "tle-stateless-notimeout", "tle-stateless"),
        ("lab control-library", "lab-stateless", "tle-stateless"),
        ("smemcache-session", "stateless-smemcache", "tle-session"),
        ("hoistable-session", "stateless-hoistable", "tle-session"),
        ("poll none-library", "poll-none", "lab-stateless"),
        ("poll twophase-library", "poll-twophase", "lab-stateless"),
        ("smemcache+2phase-session", "smemcache-twophase", "tle-session"),
    ]
    print("Differences of medians, us (a - b); positive: a is slower")
    print("%-30s %-44s" % ("question", "a - b")
          + "".join(("%d" % c).rjust(8) for c in ctas))

    def line(label, a, ia, b, ib):
        cells = []
        for c in ctas:
            if (a, ia, c) in med and (b, ib, c) in med:
                cells.append(("%+.3f" % (med[(a, ia, c)] - med[(b, ib, c)]))
                             .rjust(8))
            else:
                cells.append("-".rjust(8))
        if any(x.strip() != "-" for x in cells):
            print("%-30s %-44s" % (label, "%s - %s" % (a, b)) + "".join(cells))

    for label, a, b in pairs:
        line(label, a, iters, b, iters)
    for s in short:
        for impl in ("nccl-lsa", "ref-cudamalloc"):
            line("%d - %d rounds" % (s, iters), impl, s, impl, iters)
    print()


def allreduce(rows):
    ar = defaultdict(dict)  # bytes -> {(impl, ctas): [us]}
    for (exp, impl, iters), per in rows.items():
        if exp.startswith("3-"):
            for c, (us, _) in per.items():
                ar[int(exp[2:])][(impl, c)] = us
    if not ar:
        print("experiment 3: no rows")
        return
    print("Experiment 3: one-shot all-reduce (float sum, 2 GPUs) replayed "
          "from CUDA graphs; us per kernel, median [min-max]")
    print("%-7s %-18s %-26s %-14s %-14s %-14s %-18s" %
          ("size", "ncclAllReduce", "best one-shot (CTAs x thr)", "empty",
           "rw only", "entry barrier", "bench cfg (x512)"))
    sweep_cols = sorted({(int(i.rsplit("-t", 1)[1]), c)
                         for cfgs in ar.values() for (i, c) in cfgs
                         if i.startswith("oneshot-t")})
    for size in sorted(ar):
        cfgs = ar[size]

        def cell(key):
            if key not in cfgs:
                return "-"
            med, lo, hi = stats(cfgs[key])
            return "%.2f [%.2f-%.2f]" % (med, lo, hi)

        best = None
        for (impl, c), us in cfgs.items():
            if impl.startswith("oneshot-t"):
                m = stats(us)[0]
                if best is None or m < best[0]:
                    best = (m, impl, c)
        if best is None:
            continue
        t = best[1].rsplit("-t", 1)[1]
        bench = max(1, min(64, -(-(size // 16) // 1024)))
        print("%-7s %-18s %-26s %-14s %-14s %-14s %-18s" % (
            "%dK" % (size >> 10), cell(("nccl", 0)),
            "%s (%d x %s)" % (cell((best[1], best[2])).split(" ")[0],
                              best[2], t),
            cell(("empty-t" + t, best[2])).split(" ")[0],
            cell(("rw-t" + t, best[2])).split(" ")[0],
            cell(("entry-t" + t, best[2])).split(" ")[0],
            "%s (%d)" % (cell(("oneshot-t512", bench)).split(" ")[0], bench)))
    print("(empty / rw only / entry barrier: the same launch configuration "
          "as the best one-shot)")
    print()
    print("One-shot sweep, median us per kernel (columns: CTAs x threads):")
    print("%-7s" % "size" + "".join(("%dx%d" % (c, t)).rjust(8)
                                     for t, c in sweep_cols))
    for size in sorted(ar):
        cfgs = ar[size]
        print("%-7s" % ("%dK" % (size >> 10)) + "".join(
            ("%.2f" % stats(cfgs[("oneshot-t%d" % t, c)])[0]
             if ("oneshot-t%d" % t, c) in cfgs else "-").rjust(8)
            for t, c in sweep_cols))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    rows = load(sys.argv[1])
    n = sum(len(us) for per in rows.values() for us, _ in per.values())
    print("=================== barrier lab summary (%s, %d figures) "
          "===================" % (sys.argv[1], n))
    latency(rows)
    allreduce(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
