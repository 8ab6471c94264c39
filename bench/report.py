"""Turns bench.csv into the markdown table and the PNG plots.

Usage: report.py BENCH_CSV OUT_DIR [INFO_FILE]

BENCH_CSV has the columns section,impl,x,us,note (bench/run.sh collects the
RESULT lines of every benchmark program into it). Writes OUT_DIR/bench.md
(tables, the issue's targets as measured ratios, machine and date) and, when
matplotlib is importable, OUT_DIR/latency.png (barrier latency vs CTAs) and
OUT_DIR/allreduce.png (all-reduce latency vs message size). Prints the
targets block last, for the run script's summary.

How the targets are judged:
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
            rows.append(r)
    return rows


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


def md_table(t, xs, xname, fmt="{:.2f}", xlabel=str):
    lines = ["| " + xname + " | " + " | ".join(xlabel(x) for x in xs) + " |",
             "| --- |" + " --- |" * len(xs)]
    for impl, vals in t.items():
        cells = [fmt.format(vals[x]) if x in vals else "" for x in xs]
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


def targets(lat, ar, costs, wrong):
    """The latency targets as (text, measured, ok) with ok None if unknown."""
    out = []
    r = ratio(get(lat, "tle", "1"), get(lat, "nccl-lsa", "1"))
    out.append(("1 CTA: TLE <= 0.95x NCCL LSA", r, r is not None and r <= 0.95))
    r = ratio(get(lat, "tle", "1"), get(lat, "flag-oneway", "1"))
    out.append(("1 CTA: TLE <= 1.15x one-way flag latency", r,
                r is not None and r <= 1.15))
    r = ratio(get(lat, "tle", "132"), get(lat, "nccl-lsa", "132"))
    out.append(("132 CTAs: TLE <= 0.8x NCCL LSA", r, r is not None and r <= 0.8))
    if costs:
        x, (med, lo, hi, n) = max(costs.items(), key=lambda kv: kv[1][0])
        out.append((f"timeout checks cost <= 2% (worst CTA count: {x}; "
                    f"median of {n} interleaved pairs, spread "
                    f"{100 * lo:+.1f}%..{100 * hi:+.1f}%)", med, med <= 0.02))
    else:
        out.append(("timeout checks cost <= 2%", None, False))
    return out


# The all-reduce targets: (text, TLE's row, the reference's row, the test).
AR_TARGETS = [
    ("TLE < ncclAllReduce", "nccl", lambda r: r < 1),
    ("TLE <= torch one-shot", "torch-oneshot", lambda r: r <= 1),
]
AR_SIZES = ("8192", "16384", "32768", "65536")


def allreduce_targets(ar, wrong):
    """[(text, [(ratio, verdict) for eager, graph])]: verdict "yes", "NO",
    "WRONG RESULT" or "not measured"."""
    out = []
    for x in AR_SIZES:
        for text, ref, test in AR_TARGETS:
            cells = []
            for suffix in ("", "-graph"):
                a, b = "tle-oneshot" + suffix, ref + suffix
                if ("allreduce", a, x) in wrong or ("allreduce", b, x) in wrong:
                    bad = a if ("allreduce", a, x) in wrong else b
                    cells.append((ratio(get(ar, a, x), get(ar, b, x)),
                                  f"NO: WRONG RESULT ({bad})"))
                    continue
                r = ratio(get(ar, a, x), get(ar, b, x))
                cells.append((r, "not measured" if r is None
                              else "yes" if test(r) else "NO"))
            out.append((f"all-reduce {size_label(x)}: {text}", cells))
    return out


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
    lat = table(rows, "latency")
    for impl, vals in table(rows, "flag").items():
        lat[impl] = vals
    ar = table(rows, "allreduce")
    md = ["# TLE benchmarks", ""]
    md += ["Machine and date:", ""] + [f"- {line}" for line in info] + [""]
    md += ["All figures in microseconds, measured side by side in one run "
           f"(bench/run.sh) on {gpus}. In-kernel figures: slowest CTA over all GPUs, "
           "median of 3 repetitions (timeouts on and off: of the interleaved "
           "pairs below the latency table); host-launched figures: CUDA "
           "events, slower rank.", ""]

    md += ["## Barrier sync latency in a kernel loop (group block, acq_rel, "
           "128 threads) vs CTAs", "",
           md_table(lat, xs_of(lat), "impl \\ CTAs", "{:.3f}"), ""]
    costs = timeout_cost(rows, lat)
    if costs:
        md += ["Timeout checks (timeouts on / off - 1, per interleaved pair: "
               "median, min..max, pairs): " + ", ".join(
                   f"{x} CTAs {100 * med:+.1f}% ({100 * lo:+.1f}..{100 * hi:+.1f}%, "
                   f"{n})" for x, (med, lo, hi, n) in costs.items()), ""]
    alloc = table(rows, "alloc")
    if alloc:
        md += ["## Barrier latency by the inboxes' allocation type (same run, measured alternately)", "",
               "TLE's `sync(acq_rel)` loop as in the latency table, median of at least 5 "
               "repetitions that alternate between the types.", "",
               md_table(alloc, xs_of(alloc), "impl \\ CTAs", "{:.3f}"), ""]
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
            md += [f"## {title}", "", md_table(t, xs, xname, "{:.3f}"), ""]
    if ar:
        md += [f"## One-shot all-reduce, float32 sum, {gpus} (per call)", "",
               md_table(ar, xs_of(ar), "impl \\ size", "{:.2f}",
                        size_label), ""]
        bad = sorted(f"{i} {size_label(x)}" for s, i, x in wrong
                     if s == "allreduce")
        if bad:
            md += ["**Wrong results** (the program checked the sum; these "
                   "rows fail their targets): " + ", ".join(bad), ""]
    tg = targets(lat, ar, costs, wrong)
    block = ["## Targets (ratios from this run)", "",
             "| target | measured | met |", "| --- | --- | --- |"]
    for text, val, ok in tg:
        if val is None:
            block.append(f"| {text} | n/a | not measured |")
        elif "cost" in text:
            block.append(f"| {text} | {100 * val:+.1f}% | "
                         f"{'yes' if ok else 'NO'} |")
        else:
            block.append(f"| {text} | {val:.3f}x | {'yes' if ok else 'NO'} |")
    block += ["", "All-reduce, eager launches and CUDA-graph replays side by "
              "side (TLE's time / the reference's):", "",
              "| target | eager | met | graph | met |",
              "| --- | --- | --- | --- | --- |"]
    for text, cells in allreduce_targets(ar, wrong):
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
                ax.plot([float(x) for x in xs], [vals[x] for x in xs],
                        marker="o", label=impl)
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
                xs = sorted(vals, key=float)
                ax.plot([float(x) for x in xs], [vals[x] for x in xs],
                        marker="o", label=impl)
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
