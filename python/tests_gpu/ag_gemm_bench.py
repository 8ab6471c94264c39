# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The fused all-gather + GEMM (python/examples/ag_gemm.py) against PyTorch,
in one run, on every GPU of the node (bf16).

Per shape (rows of A per rank, K, N), each the median of REPS timed series
with min and max, the slower rank's figure:

- ``tle-fused``: TLE's kernels, push + signals overlapped with the GEMM;
- ``torch-unfused``: ``all_gather_into_tensor`` (NCCL) then ``torch.matmul``;
- ``torch-async-tp``: ``torch.ops.symm_mem.fused_all_gather_matmul``
  (PyTorch's async tensor parallelism), or SKIPPED with the reason;
- ``gemm-only``: the fused call's own Triton GEMM over an already gathered
  A, no communication: the lower bound overlap can reach;
- ``cublas-only``: ``torch.matmul`` alone over the gathered A (what the
  unfused sequence's GEMM costs);
- ``allgather-only``: ``all_gather_into_tensor`` alone.

Every call's result is checked against the unfused sequence (relative
Frobenius error below 1e-2). Rank 0 prints RESULT lines
(section ``aggemm``, x = ``MxKxN``) and a table with the targets: fused
<= 1.10x gemm-only, < torch-unfused, <= torch-async-tp, and the share of
the all-gather that was hidden.

    torchrun --nproc-per-node 2 python/tests_gpu/ag_gemm_bench.py [--shapes 1024x8192x1024,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

from ag_gemm import AgGemm, Config, signal_words  # noqa: E402
from common import distributed, fail, log  # noqa: E402

SHAPES = ((1024, 8192, 1024), (4096, 8192, 2048), (4096, 8192, 8192), (8192, 8192, 28672))
REPS = 7


def slowest(value: float) -> float:
    got = [None] * dist.get_world_size()
    dist.all_gather_object(got, value)
    return max(got)


def timed(fn, iters: int) -> list[float]:
    """REPS series of `iters` calls, µs per call, the slower rank's."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(REPS):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(slowest(start.elapsed_time(end) * 1e3 / iters))
    return out


def rel_error(c: torch.Tensor, ref: torch.Tensor) -> float:
    return ((c.float() - ref.float()).norm() / ref.float().norm()).item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SHAPES))
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rows, failures = [], []
    with distributed(n_signals=signal_words(world)) as comm:
        import torch.distributed._symmetric_memory as symm_mem
        group = dist.group.WORLD.group_name
        try:
            symm_mem.enable_symm_mem_for_group(group)
        except Exception:  # deprecated or on by default in newer releases
            pass
        fused_tp = getattr(getattr(torch.ops, "symm_mem", None), "fused_all_gather_matmul", None)
        side = torch.cuda.Stream()
        for m, k, n in shapes:
            x = f"{m}x{k}x{n}"
            torch.manual_seed(99 + comm.rank)
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / k ** 0.5
            dist.broadcast(b, 0)
            gathered = torch.empty(world * m, k, device="cuda", dtype=torch.bfloat16)
            ref = torch.empty(world * m, n, device="cuda", dtype=torch.bfloat16)

            def unfused():
                dist.all_gather_into_tensor(gathered, a)
                torch.matmul(gathered, b, out=ref)
            unfused()
            torch.cuda.synchronize()
            op = AgGemm(comm, m, k, torch.bfloat16, Config.for_shape(m, n))
            c = torch.empty(world * m, n, device="cuda", dtype=torch.bfloat16)

            def fused():
                op(a, b, c, side_stream=side)
            fused()
            torch.cuda.synchronize()
            err = rel_error(c, ref)
            bad = slowest(err) >= 1e-2
            results = {"tle-fused": timed(fused, args.iters)}
            err = max(err, rel_error(c, ref))
            bad |= slowest(err) >= 1e-2
            results["torch-unfused"] = timed(unfused, args.iters)
            results["allgather-only"] = timed(lambda: dist.all_gather_into_tensor(gathered, a), args.iters)
            results["cublas-only"] = timed(lambda: torch.matmul(gathered, b, out=ref), args.iters)
            op.ag.tensor.copy_(gathered)  # the lower bound multiplies the real gathered A
            results["gemm-only"] = timed(lambda: op.gemm_only(b, c), args.iters)
            tp_note = ""
            if fused_tp is None:
                tp_note = "torch.ops.symm_mem.fused_all_gather_matmul not found"
            else:
                try:
                    _, outs = fused_tp(a, [b], 0, group)
                    torch.cuda.synchronize()
                    tp_err = slowest(rel_error(outs[0], ref))
                    if tp_err >= 1e-2:
                        tp_note = f"wrong result (relative error {tp_err:.2e})"
                    else:
                        results["torch-async-tp"] = timed(lambda: fused_tp(a, [b], 0, group), args.iters)
                except Exception as e:  # noqa: BLE001 - reported, the rest still runs
                    tp_note = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
            if comm.rank == 0:
                for impl, figures in results.items():
                    note = f"n={len(figures)};min={min(figures):.2f};max={max(figures):.2f}"
                    if impl == "tle-fused":
                        note += f";relative error {err:.1e}" + ("; WRONG RESULT" if bad else "")
                    print(f"RESULT,aggemm,{impl},{x},{statistics.median(figures):.2f},{note}", flush=True)
                if tp_note:
                    log(f"SKIPPED torch-async-tp at {x}: {tp_note}")
            rows.append((x, {i: statistics.median(f) for i, f in results.items()}))
            if bad:
                failures.append(f"{x}: relative error {err:.2e}")
            op.close()
            del a, b, gathered, ref, c
            torch.cuda.empty_cache()
        dist.barrier()
    if int(os.environ.get("RANK", "0")) == 0:
        log("| shape | fused | gemm-only | unfused | async-TP | AG share | AG hidden | "
            "fused/gemm (<=1.10) | fused/unfused (<1) | fused/async-TP (<=1) |")
        for x, r in rows:
            f, g, u = r["tle-fused"], r["gemm-only"], r["torch-unfused"]
            ag, tp = r["allgather-only"], r.get("torch-async-tp")
            share = ag / u
            hidden = 1 - max(0.0, f - g) / ag
            tp_cell = f"{tp:.0f}" if tp else "n/a"
            tp_ratio = f"{f / tp:.3f}" if tp else "n/a"
            log(f"| {x} | {f:.0f} | {g:.0f} | {u:.0f} | {tp_cell} | {100 * share:.0f}% | {100 * hidden:.0f}% | "
                f"{f / g:.3f} | {f / u:.3f} | {tp_ratio} |")
    if failures:
        fail("wrong results: " + "; ".join(failures))
    log("PASS ag_gemm_bench: results checked")


if __name__ == "__main__":
    main()
