"""Turns bench.csv into the markdown table and the PNG plots.

Usage: report.py BENCH_CSV OUT_DIR [INFO_FILE]

BENCH_CSV has the columns section,impl,x,us,note (bench/run.sh collects the
RESULT lines of every benchmark program into it). Writes OUT_DIR/bench.md
(tables, the issue's targets as measured ratios, machine and date) and, when
matplotlib is importable, OUT_DIR/latency.png (barrier latency vs CTAs) and
OUT_DIR/allreduce.png (all-reduce latency vs message size). Prints the
targets block last, for the run script's summary.
"""

import csv
import os
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


def targets(lat, ar):
    """The issue's targets as (text, measured, ok) with ok None if unknown."""
    out = []

    def ratio(a, b):
        return a / b if a is not None and b not in (None, 0) else None

    r = ratio(get(lat, "tle", "1"), get(lat, "nccl-lsa", "1"))
    out.append(("1 CTA: TLE <= 0.95x NCCL LSA", r, r is not None and r <= 0.95))
    r = ratio(get(lat, "tle", "1"), get(lat, "flag-oneway", "1"))
    out.append(("1 CTA: TLE <= 1.15x one-way flag latency", r,
                r is not None and r <= 1.15))
    r = ratio(get(lat, "tle", "132"), get(lat, "nccl-lsa", "132"))
    out.append(("132 CTAs: TLE <= 0.8x NCCL LSA", r, r is not None and r <= 0.8))
    worst = None
    for x, on in lat.get("tle", {}).items():
        off = get(lat, "tle-notimeout", x)
        if off:
            c = on / off - 1
            worst = c if worst is None else max(worst, c)
    out.append(("timeout checks cost <= 2% (worst CTA count)", worst,
                worst is not None and worst <= 0.02))
    for x in ("8192", "16384", "32768", "65536"):
        tle = get(ar, "tle-oneshot", x)
        r = ratio(tle, get(ar, "nccl", x))
        out.append((f"all-reduce {size_label(x)}: TLE < ncclAllReduce", r,
                    r is not None and r < 1))
        r = ratio(tle, get(ar, "torch-oneshot", x))
        out.append((f"all-reduce {size_label(x)}: TLE <= torch one-shot", r,
                    r is not None and r <= 1))
    return out


def main():
    csv_path, out_dir = sys.argv[1], sys.argv[2]
    info = []
    if len(sys.argv) > 3 and os.path.exists(sys.argv[3]):
        with open(sys.argv[3]) as f:
            info = [line.strip() for line in f if line.strip()]
    rows = load(csv_path)
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
           "median of 3 repetitions; host-launched figures: CUDA events, "
           "slower rank.", ""]

    md += ["## Barrier sync latency in a kernel loop (group block, acq_rel, "
           "128 threads) vs CTAs", "",
           md_table(lat, xs_of(lat), "impl \\ CTAs", "{:.3f}"), ""]
    if "tle" in lat and "tle-notimeout" in lat:
        md += ["Timeout checks: " + ", ".join(
            f"{x} CTAs {100 * (v / lat['tle-notimeout'][x] - 1):+.1f}%"
            for x, v in lat["tle"].items() if x in lat["tle-notimeout"]), ""]
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
    tg = targets(lat, ar)
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
    md += block + [""]
    notes = sorted({(r["section"], r["impl"], r["note"]) for r in rows
                    if r.get("note")})
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
