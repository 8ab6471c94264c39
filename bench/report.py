# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns bench.csv into the markdown table and the PNG plots.

Usage: report.py BENCH_CSV OUT_DIR [INFO_FILE]

BENCH_CSV has the columns section,impl,x,us,note (bench/run.sh collects the
RESULT lines of every benchmark program into it). Writes OUT_DIR/bench.md
(tables, the issue's targets as measured ratios, machine and date) and, when
matplotlib is importable, OUT_DIR/latency.png (barrier latency vs CTAs) and
OUT_DIR/allreduce.png (all-reduce latency vs message size). Prints the
targets block last, for the run script's summary.

How the targets are judged (docs/benchmarks.md, "Targets"):
- every ratio is of two figures of this run, each the median of its
  repetitions; where a row's note carries `n=;min=;max=` the verdict also
  gives the ratio's range over the spread (the test's min over the
  reference's max up to the test's max over the reference's min), and a
  missed target whose range reaches it is marked "within noise";
- the all-reduce targets on eager launches and on CUDA-graph replays, side
  by side (the two can disagree: launch overhead dominates small messages
  eagerly, not in a graph);
- the cost of the timeout checks from the `timeout` rows, measurements
  with timeouts on and off interleaved (BarrierBench.cu): the cost of each
  pair, and their median, min and max, so that a cost within the spread is
  seen as such;
- a row whose note says "WRONG RESULT" (its program checked the sum and
  found it wrong) is shown as wrong and fails every target it takes part in.
"""

import csv
import os
import re
import statistics
import sys
from collections import OrderedDict


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get(None):  # a note with commas spilled into extra fields
                r["note"] = ",".join([r.get("note") or ""] + r.pop(None))
            try:
                r["us"] = float(r["us"])
            except (TypeError, ValueError):
                continue
            r.update(spread_of(r.get("note") or ""))
            rows.append(r)
    return rows


def spread_of(note):
    """{"n", "min", "max"} from a note's "n=7;min=1.2;max=1.4" part (the
    benchmarks' printStats), or {} when the row has no spread."""
    out = {}
    for key, conv in (("n", int), ("min", float), ("max", float)):
        m = re.search(rf"(?:^|;)\s*{key}=([-+0-9.eE]+)", note)
        if m:
            try:
                out[key] = conv(m.group(1))
            except ValueError:
                return {}
    return out if len(out) == 3 else {}


def spreads(rows, section):
    """{impl: {x: (min, max, n)}} of the rows of `section` with a spread."""
    t = OrderedDict()
    for r in rows:
        if r["section"] == section and "min" in r:
            t.setdefault(r["impl"], OrderedDict())[r["x"]] = (
                r["min"], r["max"], r["n"])
    return t


def table(rows, section):
    """{impl: {x: us}} in first-seen order."""
    t = OrderedDict()
    for r in rows:
        if r["section"] == section:
            t.setdefault(r["impl"], OrderedDict())[r["x"]] = r["us"]
    return t


def xs_of(t, key=float):
    xs = []
    for vals in t.values():
        for x in vals:
            if x not in xs:
                xs.append(x)
    try:
        return sorted(xs, key=key)
    except ValueError:
        return xs


def md_table(t, xs, xname, fmt="{:.2f}", xlabel=str, spr=None):
    """A markdown table of t; with `spr` (spreads()), each cell with a
    spread reads "median [min-max]"."""
    spr = spr or {}
    lines = ["| " + xname + " | " + " | ".join(xlabel(x) for x in xs) + " |",
             "| --- |" + " --- |" * len(xs)]

    def cell(impl, vals, x):
        if x not in vals:
            return ""
        text = fmt.format(vals[x])
        sp = get(spr, impl, x)
        if sp:
            text += " [" + fmt.format(sp[0]) + "-" + fmt.format(sp[1]) + "]"
        return text
    for impl, vals in t.items():
        cells = [cell(impl, vals, x) for x in xs]
        lines.append("| " + impl + " | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def size_label(x):
    b = int(float(x))
    return f"{b >> 20} MB" if b >= 1 << 20 else f"{b >> 10} KB"


def get(t, impl, x):
    return t.get(impl, {}).get(x)


def wrong_rows(rows):
    """{(section, impl, x)} of the rows whose program found a wrong result."""
    return {(r["section"], r["impl"], r["x"]) for r in rows
            if "WRONG RESULT" in (r.get("note") or "")}


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def trace_cost(lat):
    """{x: (us, relative)}: what the barrier's trace ring costs per sync,
    the tle-trace row over the tle row (trace off) of the latency table."""
    on, off = lat.get("tle-trace", {}), lat.get("tle", {})
    return OrderedDict((x, (v - off[x], v / off[x] - 1)) for x, v in on.items() if x in off)


def timeout_cost(rows, lat):
    """{ctas: (median, min, max, pairs)} of the cost of the timeout checks,
    on/off - 1 per interleaved pair (section `timeout`, note rep=<i>). A CSV
    without them (an older run) falls back to the medians of the latency
    table, one pair, no spread."""
    reps = {}
    for r in rows:
        if r["section"] != "timeout":
            continue
        m = re.search(r"rep=(\d+)", r.get("note") or "")
        if m:
            reps.setdefault(r["x"], {}).setdefault(m.group(1), {})[r["impl"]] = r["us"]
    out = {}
    for x, by_rep in reps.items():
        costs = [p["on"] / p["off"] - 1 for p in by_rep.values()
                 if "on" in p and p.get("off")]
        if costs:
            out[x] = (statistics.median(costs), min(costs), max(costs), len(costs))
    if not out:
        for x, on in lat.get("tle", {}).items():
            off = get(lat, "tle-notimeout", x)
            if off:
                c = on / off - 1
                out[x] = (c, c, c, 1)
    return out


LATENCY_CTAS = ("1", "8", "32", "132")
# The compiled barriers (what tlec and Triton emit) and the C++ stateless
# call they lower to: each against NCCL's LSA barrier.
COMPILED = (("triton", "Triton distributed_barrier"),
            ("tle-tlec", "tlec-compiled MLIR kernel"),
            ("tle", "stateless ABI call (CUDA C++)"))


class Target:
    """One target: `value` the measured ratio (or cost), `ok` True, False or
    None (not measured), `lo`..`hi` the ratio's range over the spreads of
    the two rows (None without spreads)."""

    def __init__(self, text, value, ok, lo=None, hi=None, limit=None):
        self.text, self.value, self.ok = text, value, ok
        self.lo, self.hi, self.limit = lo, hi, limit

    def verdict(self):
        if self.ok is None:
            return "not measured"
        if self.ok:
            return "yes"
        if self.lo is not None and self.limit is not None and self.lo <= self.limit:
            return "NO (within noise)"
        return "NO"


def ratio_target(text, t, spr, a, xa, b, xb, limit):
    """Target `t[a][xa] / t[b][xb] <= limit`, with its range over spreads."""
    r = ratio(get(t, a, xa), get(t, b, xb))
    sa, sb = get(spr, a, xa), get(spr, b, xb)
    lo = hi = None
    if r is not None and sa and sb:
        lo, hi = sa[0] / sb[1], sa[1] / sb[0]
    return Target(text, r, None if r is None else r <= limit, lo, hi, limit)


def targets(lat, ar, costs, wrong, spr=None, sig=None, sig_spr=None):
    """Issue 10's latency targets and issue 17's signal ping-pong, as a list
    of Target."""
    spr = spr or {}
    out = []
    for impl, what in COMPILED:
        if impl not in lat:
            out.append(Target(f"{what} ({impl}) <= 1.00x NCCL LSA", None, None))
            continue
        for x in LATENCY_CTAS:
            out.append(ratio_target(
                f"{x} CTA{'s' if x != '1' else ''}: {what} ({impl}) "
                "<= 1.00x NCCL LSA", lat, spr, impl, x, "nccl-lsa", x, 1.00))
        out.append(ratio_target(
            f"1 CTA: {what} ({impl}) <= 1.10x one-way flag latency",
            lat, spr, impl, "1", "flag-oneway", "1", 1.10))
    for x in LATENCY_CTAS:
        out.append(ratio_target(
            f"{x} CTA{'s' if x != '1' else ''}: tle::BarrierSession "
            "(tle-session) <= 0.95x NCCL LSA",
            lat, spr, "tle-session", x, "nccl-lsa", x, 0.95))
    if costs:
        for x, (med, lo, hi, n) in costs.items():
            out.append(Target(
                f"{x} CTA{'s' if x != '1' else ''}: timeout checks cost <= 2% "
                f"(median of {n} interleaved pairs)", med, med <= 0.02,
                lo, hi, 0.02))
    else:
        out.append(Target("timeout checks cost <= 2%", None, None))
    # NVSHMEM's ping-pong is one thread: the thread group is judged, the
    # block group only shown.
    out.append(ratio_target(
        "signal ping-pong, one-way (tle-signal, thread) <= 1.00x NVSHMEM "
        "signal_op/signal_wait_until", sig or {}, sig_spr or {}, "tle-signal",
        "thread", "nvshmem-signal", "thread", 1.00))
    return out


# The one-GPU targets (issue 36; tle-bench-shared, section `shared`): two
# ranks sharing one GPU, each row's median at each CTA count per rank.
SHARED_TARGETS = [
    ("tlec", "session", 1.05, "the tlec-compiled loop"),
    ("triton", "session", 1.05, "the Triton-compiled loop"),
    ("session", "bare", 1.05, "tle::BarrierSession"),
]


def shared_targets(rows):
    """The one-GPU targets as Targets; [] when the run has no shared rows."""
    t, spr = table(rows, "shared"), spreads(rows, "shared")
    if not t:
        return []
    out = []
    for a, b, limit, what in SHARED_TARGETS:
        for x in xs_of(t, int):
            out.append(ratio_target(
                f"one GPU, {x} CTAs per rank: {what} ({a}) <= {limit:.2f}x {b}",
                t, spr, a, x, b, x, limit))
    return out


def shared_sections(rows):
    """The markdown of the shared and shared-diag sections."""
    md = []
    t = table(rows, "shared")
    if t:
        md += ["## One GPU, two ranks sharing it (tle-bench-shared)", "",
               "sync(acq_rel) rounds of a block-group barrier, 128 threads, one "
               "slot per CTA; two TLE ranks on device 0 (tleCommInitAll with "
               "devices {0, 0}), one stream each; slowest CTA of either rank, "
               "median [min-max] of the launches; x: CTAs per rank.", "",
               md_table(t, xs_of(t, int), "impl \\ CTAs per rank", "{:.3f}",
                        spr=spreads(rows, "shared")), ""]
    diag = [r for r in rows if r["section"] == "shared-diag"]
    if diag:
        md += ["## One GPU: the slow-session hypotheses (shared-diag)", "",
               "| row | pass | CTAs per rank | us per round | min | max | SMs with >1 CTA | SMs with both ranks |",
               "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in diag:
            note = r.get("note") or ""
            def field(key):
                m = re.search(rf"(?:^|;){key}=([^;]*)", note)
                return m.group(1) if m else ""
            md.append(f"| {r['impl']} | {field('pass')} | {r['x']} | {r['us']:.3f} | "
                      f"{r.get('min', '')} | {r.get('max', '')} | {field('multi')} | {field('both')} |")
        md.append("")
    return md


# The all-reduce targets: (text, the reference's row, the limit of TLE's
# time over the reference's). Judged on graph replays (how inference
# engines call small all-reduces); the eager ratio is shown beside it.
AR_TARGETS = [
    ("TLE <= 0.9x ncclAllReduce", "nccl", 0.9),
    ("TLE <= 1.0x torch one-shot", "torch-oneshot", 1.0),
]
AR_SIZES = ("8192", "16384", "32768", "65536", "131072", "262144")


def allreduce_targets(ar, wrong, spr=None):
    """[(text, [(ratio, verdict) for eager, graph])]: verdict "yes", "NO",
    "NO (within noise)", "NO: WRONG RESULT (row)" or "not measured". The
    graph column is the target; eager is shown for comparison."""
    spr = spr or {}
    out = []
    for x in AR_SIZES:
        for text, ref, limit in AR_TARGETS:
            cells = []
            for suffix in ("", "-graph"):
                a, b = "tle-oneshot" + suffix, ref + suffix
                if ("allreduce", a, x) in wrong or ("allreduce", b, x) in wrong:
                    bad = a if ("allreduce", a, x) in wrong else b
                    cells.append((ratio(get(ar, a, x), get(ar, b, x)),
                                  f"NO: WRONG RESULT ({bad})"))
                    continue
                t = ratio_target(text, ar, spr, a, x, b, x, limit)
                cells.append((t.value, t.verdict()))
            out.append((f"all-reduce {size_label(x)}: {text}", cells))
    return out


def latency_tables(rows):
    """The latency table with the one-way flag row in it, and its spreads."""
    lat, spr = table(rows, "latency"), spreads(rows, "latency")
    lat.update(table(rows, "flag"))
    spr.update(spreads(rows, "flag"))
    return lat, spr


def errorbars(ax, impl, vals, xs, spr):
    """The row's medians, with min..max as error bars where known."""
    ys = [vals[x] for x in xs]
    lo = [ys[i] - (get(spr, impl, x) or (ys[i], ys[i]))[0]
          for i, x in enumerate(xs)]
    hi = [(get(spr, impl, x) or (ys[i], ys[i]))[1] - ys[i]
          for i, x in enumerate(xs)]
    ax.errorbar([float(x) for x in xs], ys, yerr=[lo, hi], marker="o",
                capsize=3, label=impl)


def main():
    csv_path, out_dir = sys.argv[1], sys.argv[2]
    info = []
    if len(sys.argv) > 3 and os.path.exists(sys.argv[3]):
        with open(sys.argv[3]) as f:
            info = [line.strip() for line in f if line.strip()]
    rows = load(csv_path)
    wrong = wrong_rows(rows)
    # "ranks,<n> GPUs" from tle-bench-barrier's INFO line.
    gpus = next((line.split(",", 1)[1] for line in info if line.startswith("ranks,")), "the GPUs")
    lat, lat_spr = latency_tables(rows)
    ar = table(rows, "allreduce")
    ar_spr = spreads(rows, "allreduce")
    sig, sig_spr = table(rows, "signal"), spreads(rows, "signal")
    md = ["# TLE benchmarks", ""]
    md += ["Machine and date:", ""] + [f"- {line}" for line in info] + [""]
    md += ["All figures in microseconds, measured side by side in one run "
           f"(bench/run.sh) on {gpus}. In-kernel figures: slowest CTA over all GPUs, "
           "the median of the repetitions with [min-max] after it where the "
           "row has them (timeouts on and off: of the interleaved pairs below "
           "the latency table); host-launched figures: CUDA events, slower "
           "rank.", ""]

    md += ["## Barrier sync latency in a kernel loop (group block, acq_rel, "
           "128 threads) vs CTAs", "",
           md_table(lat, xs_of(lat), "impl \\ CTAs", "{:.3f}", spr=lat_spr), ""]
    costs = timeout_cost(rows, lat)
    if costs:
        md += ["Timeout checks (timeouts on / off - 1, per interleaved pair: "
               "median, min..max, pairs): " + ", ".join(
                   f"{x} CTAs {100 * med:+.1f}% ({100 * lo:+.1f}..{100 * hi:+.1f}%, "
                   f"{n})" for x, (med, lo, hi, n) in costs.items()), ""]
    traced = trace_cost(lat)
    if traced:
        md += ["Trace on (tleCommTraceStart), cost per sync: " + ", ".join(
            f"{x} CTAs {us:+.3f} us ({100 * rel:+.1f}%)" for x, (us, rel) in traced.items()), ""]
    alloc = table(rows, "alloc")
    if alloc:
        md += ["## Barrier latency by the inboxes' allocation type (same run, measured alternately)", "",
               "TLE's `sync(acq_rel)` loop as in the latency table, median of at least 5 "
               "repetitions that alternate between the types.", "",
               md_table(alloc, xs_of(alloc), "impl \\ CTAs", "{:.3f}",
                        spr=spreads(rows, "alloc")), ""]
        for new, old in (("cumem-peer", "cudamalloc-peer"), ("cumem-fd", "cudamalloc-ipc")):
            if new in alloc and old in alloc:
                md += [f"{new} vs {old}: " + ", ".join(
                    f"{x} CTAs {alloc[new][x] - v:+.3f} us ({100 * (alloc[new][x] / v - 1):+.1f}%)"
                    for x, v in alloc[old].items() if x in alloc[new]), ""]
    for section, title, xname in (
            ("hostbar", "Host-launched barrier (one kernel per barrier)",
             "impl \\ mode"),
            ("grid", "Grid barrier (all CTAs of all GPUs) vs kernel "
             "boundaries, per round", "impl \\ CTAs per GPU"),
            ("overlap", "Overlap: arrive, W us of work, wait (per iteration)",
             "impl \\ W (us)")):
        t = table(rows, section)
        if t:
            xs = xs_of(t) if section != "hostbar" else ["eager", "graph"]
            md += [f"## {title}", "", md_table(t, xs, xname, "{:.3f}",
                                              spr=spreads(rows, section)), ""]
    if sig:
        md += ["## Signal ping-pong, one-way latency (round trip / 2)", "",
               md_table(sig, ["thread", "block"], "impl \\ group", "{:.3f}",
                        spr=sig_spr), ""]
    if ar:
        md += [f"## One-shot all-reduce, float32 sum, {gpus} (per call)", "",
               md_table(ar, xs_of(ar), "impl \\ size", "{:.2f}",
                        size_label, spr=ar_spr), ""]
        bad = sorted(f"{i} {size_label(x)}" for s, i, x in wrong
                     if s == "allreduce")
        if bad:
            md += ["**Wrong results** (the program checked the sum; these "
                   "rows fail their targets): " + ", ".join(bad), ""]
    md += shared_sections(rows)
    tg = targets(lat, ar, costs, wrong, lat_spr, sig, sig_spr) + shared_targets(rows)
    block = ["## Targets (ratios from this run)", "",
             "| target | measured | range over the spreads | met |",
             "| --- | --- | --- | --- |"]
    for t in tg:
        rng = ""
        if t.value is None:
            block.append(f"| {t.text} | n/a | | not measured |")
            continue
        if "cost" in t.text:
            val = f"{100 * t.value:+.1f}%"
            if t.lo is not None:
                rng = f"{100 * t.lo:+.1f}%..{100 * t.hi:+.1f}%"
        else:
            val = f"{t.value:.3f}x"
            if t.lo is not None:
                rng = f"{t.lo:.3f}..{t.hi:.3f}x"
        block.append(f"| {t.text} | {val} | {rng} | {t.verdict()} |")
    block += ["", "All-reduce: the target is on CUDA-graph replays (how "
              "inference engines call small all-reduces); eager launches "
              "beside it for comparison (TLE's time / the reference's):", "",
              "| target | eager | | graph | met |",
              "| --- | --- | --- | --- | --- |"]
    for text, cells in allreduce_targets(ar, wrong, ar_spr):
        block.append(f"| {text} | " + " | ".join(
            f"{'n/a' if r is None else f'{r:.3f}x'} | {v}" for r, v in cells)
            + " |")
    md += block + [""]
    notes = sorted({(r["section"], r["impl"], r["note"]) for r in rows
                    if r.get("note") and r["section"] != "timeout"})
    if notes:
        md += ["## What each row measures", ""]
        md += [f"- {s}/{i}: {n}" for s, i, n in notes] + [""]
    with open(os.path.join(out_dir, "bench.md"), "w") as f:
        f.write("\n".join(md))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib missing, no plots")
    else:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for impl, vals in lat.items():
            xs = sorted(vals, key=float)
            if len(xs) == 1:
                ax.axhline(vals[xs[0]], linestyle=":", color="gray",
                           label=impl)
            else:
                errorbars(ax, impl, vals, xs, lat_spr)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("CTAs per GPU (one barrier slot each)")
        ax.set_ylabel("sync latency, slowest CTA (us)")
        ax.set_title(f"In-kernel barrier latency, {gpus}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "latency.png"), dpi=120)
        if ar:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for impl, vals in ar.items():
                errorbars(ax, impl, vals, sorted(vals, key=float), ar_spr)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("latency per call (us)")
            ax.set_title(f"All-reduce float32 sum, {gpus}")
            ax.grid(True, alpha=0.3, which="both")
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(os.path.join(out_dir, "allreduce.png"), dpi=120)
    print("\n".join(block))


if __name__ == "__main__":
    main()
