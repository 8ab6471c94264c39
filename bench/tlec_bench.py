# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmark's tlec row: bench/kernels/barrier_loop.mlir, compiled by
tlec into a bundle, run by `tlerun --target cuda` on --ranks GPUs (2;
bench/run.sh passes the machine's count, like the other rows).

For each CTA count, one tlerun process makes REPS launches (`--repeat`);
the kernel keeps every launch's time per block in its `times` buffer (see
the kernel's comment), and `--dump times` returns them all. Each launch's
figure is the slowest block of all ranks over the loop's rounds, like
tle-bench-barrier's rows; the RESULT line carries the median and, in its
note, the number of launches, min and max.

    python3 bench/tlec_bench.py TLERUN BUNDLE [--ctas 1,8,32,132] [--reps 7] [--ranks 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

#: Rounds per launch: the kernel's %iters.
ITERS = 20000
THREADS = 128
#: Ranks when --ranks is not given.
RANKS = 2


def launch_times_us(dump_lines: list[str], ctas: int, reps: int, ranks: int = RANKS) -> list[float]:
    """Per launch, µs per round of the slowest block of any rank, from
    tlerun's --dump output (one JSON object per rank)."""
    per_rank = {}
    for line in dump_lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        obj = json.loads(line)
        if obj.get("buffer") == "times":
            per_rank[obj["rank"]] = [int(v) for v in obj["values"]]
    if len(per_rank) != ranks:
        raise ValueError(f"expected the times of {ranks} ranks, got {sorted(per_rank)}")
    out = []
    for k in range(reps):
        worst = 0
        for values in per_rank.values():
            counts = values[:ctas]
            if any(c != reps for c in counts):
                raise ValueError(f"launch counters {counts}, expected {reps} in every block")
            row = values[ctas + k * ctas: ctas + (k + 1) * ctas]
            if len(row) != ctas or min(row) <= 0:
                raise ValueError(f"launch {k}: times {row}")
            worst = max(worst, max(row))
        out.append(worst / ITERS / 1000.0)
    return out


def result_line(ctas: int, times: list[float]) -> str:
    note = f"n={len(times)};min={min(times):.4f};max={max(times):.4f}"
    return f"RESULT,latency,tle-tlec,{ctas},{statistics.median(times):.4f},{note}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tlerun")
    parser.add_argument("bundle")
    parser.add_argument("--ctas", default="1,8,32,132")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--ranks", type=int, default=RANKS)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per tlerun call")
    args = parser.parse_args()
    failed = 0
    for ctas in (int(c) for c in args.ctas.split(",")):
        cmd = [args.tlerun, args.bundle, "--target", "cuda", "--kernel", "barrier_loop",
               "--ranks", str(args.ranks), "--grid", str(ctas), "--block", str(THREADS),
               "--repeat", str(args.reps), "--buffer", f"times:i64:{ctas * (args.reps + 1)}",
               "--dump", "times"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"tlec row, {ctas} CTAs: tlerun timed out after {args.timeout:.0f} s", flush=True)
            failed += 1
            continue
        if p.returncode != 0:
            print(f"tlec row, {ctas} CTAs: tlerun exit {p.returncode}: {p.stderr.strip()}", flush=True)
            failed += 1
            continue
        try:
            times = launch_times_us(p.stdout.splitlines(), ctas, args.reps, args.ranks)
        except (ValueError, KeyError, json.JSONDecodeError) as e:
            print(f"tlec row, {ctas} CTAs: unreadable output ({e})", flush=True)
            failed += 1
            continue
        print(result_line(ctas, times), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
