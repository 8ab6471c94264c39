# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.ops against what PyTorch users call today, on every GPU of the node,
with the verdicts of issue 28's targets computed here.

Per operation, message size (8 KB .. 256 MB) and mode (eager: a loop of
calls; graph: the same calls captured in one CUDA graph and replayed),
the median of REPS timed series with min and max, each series' figure the
slower rank's µs per call:

- all_reduce: ``tle`` (variant by size), ``tle-ll``, ``tle-oneshot``,
  ``tle-twoshot``; ``nccl`` (``dist.all_reduce``); ``symm-oneshot`` /
  ``symm-twoshot`` (``torch.ops.symm_mem.one_shot_all_reduce`` /
  ``two_shot_all_reduce_``, on a symmetric-memory input);
- all_gather / reduce_scatter: ``tle-push``, ``tle-pull``; ``nccl``
  (``all_gather_into_tensor`` / ``reduce_scatter_tensor``); the size is the
  larger buffer (the gathered output, the scattered input);
- all_to_all: ``tle``; ``nccl`` (``all_to_all_single``);
- MoE at 128 tokens per rank, hidden 7168, top-8 of 256 experts:
  ``tle-moe`` (dispatch + combine) against ``torch-a2a`` (what a PyTorch
  user writes: the counts all-to-all, ``.tolist()``, the tokens'
  ``all_to_all_single`` there and back, the permutations), and
  ``symm-a2av`` (``all_to_all_vdev``, needs NVSHMEM) for the dispatch's
  all-to-all-v alone.

Every TLE result is first checked against NCCL's (or NumPy-equivalent torch
code for MoE); a wrong result fails the run. Rank 0 prints RESULT lines
(section ``ops``, x = ``op:mode:bytes``, with bus bandwidth) and a table,
then one VERDICT line per target. Targets (2 GPUs, bf16): all_reduce in
graphs, 8 KB-1 MB, <= 0.85x NCCL and <= 0.95x the best of symm_mem's
one-shot and two-shot at every size; all_gather and reduce_scatter <= 0.9x
NCCL up to 1 MB (graphs) and >= 0.95x NCCL's bus bandwidth at >= 64 MB
(eager); MoE dispatch + combine <= 0.6x the all_to_all_single pipeline
(eager: that pipeline reads counts on the host, so it cannot be captured).

On one GPU the collectives run on a world of one: every comparison and
verdict that needs two GPUs is printed as SKIPPED with that reason, and
what one GPU can measure is measured: each TLE kernel's local path (copy
in, reduce, copy out, the MoE scatter and gather) as bytes it moves per
second against the device's copy bandwidth (``torch`` ``copy_`` of the
same bytes, measured in the same run), printed as KERNEL lines. With
``--ops sweep`` (one GPU) the local paths run again at every launch shape
of ``--sweep-programs`` x ``--sweep-blocks`` (KERNEL lines ``@ PxB``): the
data for lifting ``Config``'s default of 32 programs of 2048 elements.

    torchrun --nproc-per-node N python/tests_gpu/ops_bench.py [--sizes 8K,1M,...] [--reps 7] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback

import torch
import torch.distributed as dist

from common import distributed, fail, log
from tle.ops import Collectives, Config

KB, MB = 1 << 10, 1 << 20
SIZES = [8 * KB, 16 * KB, 32 * KB, 64 * KB, 128 * KB, 256 * KB, 512 * KB, 1 * MB, 4 * MB, 16 * MB, 64 * MB,
         256 * MB]
QUICK_SIZES = [8 * KB, 64 * KB, 1 * MB, 16 * MB, 64 * MB]
DTYPE = torch.bfloat16
REPS = 7
#: Time one series aims at, and its bounds in calls.
SERIES_US, MIN_CALLS, MAX_CALLS = 3000.0, 5, 200


def size_arg(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": KB, "M": MB, "G": 1 << 30}.get(text[-1], 1)
    return int(float(text.rstrip("KMG")) * scale)


def slowest(value: float) -> float:
    got = [None] * dist.get_world_size()
    dist.all_gather_object(got, value)
    return max(got)


class Timer:
    """Series of calls of ``fn``, eager or replayed from a CUDA graph."""

    def __init__(self, reps: int):
        self.reps = reps

    def calls_for(self, fn) -> int:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        one = slowest((time.perf_counter() - start) * 1e6)
        return int(max(MIN_CALLS, min(MAX_CALLS, SERIES_US / max(one, 1.0))))

    def run(self, fn, graph: bool) -> list[float]:
        calls = self.calls_for(fn)
        if graph:
            g = torch.cuda.CUDAGraph()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                fn()  # warm the side stream, as CUDA graph capture wants
            torch.cuda.current_stream().wait_stream(stream)
            torch.cuda.synchronize()
            dist.barrier()
            with torch.cuda.graph(g):
                for _ in range(calls):
                    fn()
            torch.cuda.synchronize()
            body = g.replay
        else:
            def body():
                for _ in range(calls):
                    fn()
        out = []
        for _ in range(self.reps):
            dist.barrier()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            body()
            end.record()
            torch.cuda.synchronize()
            out.append(slowest(start.elapsed_time(end) * 1e3 / calls))
        if graph:
            del g
        return out


def bus_factor(op: str, world: int) -> float:
    """nccl-tests' bus bandwidth factor: bytes per rank over the links."""
    if world == 1:
        return 0.0
    return 2 * (world - 1) / world if op == "all_reduce" else (world - 1) / world


class Bench:
    def __init__(self, comm, args):
        self.comm, self.args = comm, args
        self.world, self.rank = comm.size, comm.rank
        self.timer = Timer(args.reps)
        self.rows: dict[tuple[str, str, int, str], list[float]] = {}
        self.skipped: list[str] = []
        self.wrong: list[str] = []
        self.group = dist.group.WORLD.group_name
        self.moe_label = ""
        self.coll = comm.collectives(Config(programs=args.programs, block=args.block, num_warps=args.warps,
                                            stage_bytes=max(args.sizes) + MB, ll_bytes=1 * MB,
                                            ll_max_bytes=args.ll_max))

    def skip(self, what: str, why: str) -> None:
        if what not in " ".join(self.skipped):
            self.skipped.append(f"{what}: {why}")

    def measure(self, op: str, impl: str, nbytes: int, fn, modes=("eager", "graph")) -> None:
        for mode in modes:
            try:
                figures = self.timer.run(fn, mode == "graph")
            except Exception as e:  # noqa: BLE001 - reported; the rest still runs
                self.skip(f"{impl} {op} {mode}", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
                torch.cuda.synchronize()
                continue
            self.rows[(op, mode, nbytes, impl)] = figures
            if self.rank == 0:
                med = statistics.median(figures)
                bw = nbytes / med / 1e3 * bus_factor(op, self.world)
                print(f"RESULT,ops,{impl},{op}:{mode}:{nbytes},{med:.2f},n={len(figures)};min={min(figures):.2f};"
                      f"max={max(figures):.2f};busbw_GBps={bw:.1f}", flush=True)

    def check(self, what: str, got: torch.Tensor, want: torch.Tensor, exact: bool) -> None:
        if exact:
            bad = not torch.equal(got, want)
        else:
            bad = not torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2)
        if slowest(float(bad)):
            self.wrong.append(what)
            if self.rank == 0:
                log(f"WRONG RESULT: {what}")

    # --- the collectives -------------------------------------------------

    def all_reduce(self, nbytes: int) -> None:
        n = nbytes // 2
        x = torch.randn(n, device="cuda", dtype=DTYPE)
        out = torch.empty_like(x)
        ref = x.clone()
        dist.all_reduce(ref)
        variants = [None, "oneshot", "twoshot"] + (["ll"] if n <= self.coll.ws.ll_words else [])
        for v in variants:
            self.coll.all_reduce(x, out=out, variant=v)
            self.check(f"all_reduce {v or 'auto'} {nbytes}", out, ref, exact=False)
            self.measure("all_reduce", f"tle-{v}" if v else "tle", nbytes,
                         lambda v=v: self.coll.all_reduce(x, out=out, variant=v))
        y = x.clone()
        self.measure("all_reduce", "nccl", nbytes, lambda: dist.all_reduce(y))
        self.symm_all_reduce(x, ref, nbytes)

    def symm_all_reduce(self, x: torch.Tensor, ref: torch.Tensor, nbytes: int) -> None:
        if self.world == 1:
            self.skip("symm_mem all_reduce", "needs 2 GPUs (world size 1)")
            return
        try:
            import torch.distributed._symmetric_memory as symm_mem
            if hasattr(symm_mem, "enable_symm_mem_for_group"):
                try:
                    symm_mem.enable_symm_mem_for_group(self.group)
                except Exception:  # noqa: BLE001 - deprecated / already on
                    pass
            t = symm_mem.empty(x.numel(), device="cuda", dtype=DTYPE)
            symm_mem.rendezvous(t, self.group)
            t.copy_(x)
            one = torch.ops.symm_mem.one_shot_all_reduce
            two = torch.ops.symm_mem.two_shot_all_reduce_
        except Exception as e:  # noqa: BLE001
            self.skip("symm_mem all_reduce", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
            return
        try:
            self.check(f"symm one_shot {nbytes}", one(t, "sum", self.group), ref, exact=False)
            self.measure("all_reduce", "symm-oneshot", nbytes, lambda: one(t, "sum", self.group))
        except Exception as e:  # noqa: BLE001
            self.skip(f"symm-oneshot {nbytes}", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
        try:
            self.measure("all_reduce", "symm-twoshot", nbytes, lambda: two(t, "sum", self.group))
        except Exception as e:  # noqa: BLE001
            self.skip(f"symm-twoshot {nbytes}", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
        torch.cuda.synchronize()

    def all_gather(self, nbytes: int) -> None:
        n = nbytes // 2 // self.world
        if n == 0:
            return
        x = torch.randn(n, device="cuda", dtype=DTYPE)
        out = torch.empty(self.world * n, device="cuda", dtype=DTYPE)
        ref = torch.empty_like(out)
        dist.all_gather_into_tensor(ref, x)
        for v in ("push", "pull"):
            self.coll.all_gather(x, out=out, variant=v)
            self.check(f"all_gather {v} {nbytes}", out, ref, exact=True)
            self.measure("all_gather", f"tle-{v}", nbytes, lambda v=v: self.coll.all_gather(x, out=out, variant=v))
        self.measure("all_gather", "nccl", nbytes, lambda: dist.all_gather_into_tensor(ref, x))

    def reduce_scatter(self, nbytes: int) -> None:
        n = nbytes // 2 // self.world
        if n == 0:
            return
        x = torch.randn(self.world * n, device="cuda", dtype=DTYPE)
        out = torch.empty(n, device="cuda", dtype=DTYPE)
        ref = torch.empty_like(out)
        dist.reduce_scatter_tensor(ref, x)
        for v in ("push", "pull"):
            self.coll.reduce_scatter(x, out=out, variant=v)
            self.check(f"reduce_scatter {v} {nbytes}", out, ref, exact=False)
            self.measure("reduce_scatter", f"tle-{v}", nbytes,
                         lambda v=v: self.coll.reduce_scatter(x, out=out, variant=v))
        self.measure("reduce_scatter", "nccl", nbytes, lambda: dist.reduce_scatter_tensor(ref, x))

    def all_to_all(self, nbytes: int) -> None:
        n = nbytes // 2 // self.world
        if n == 0:
            return
        x = torch.randn(self.world * n, device="cuda", dtype=DTYPE)
        out = torch.empty_like(x)
        ref = torch.empty_like(x)
        dist.all_to_all_single(ref, x)
        self.coll.all_to_all(x, out=out)
        self.check(f"all_to_all {nbytes}", out, ref, exact=True)
        self.measure("all_to_all", "tle", nbytes, lambda: self.coll.all_to_all(x, out=out))
        self.measure("all_to_all", "nccl", nbytes, lambda: dist.all_to_all_single(ref, x))

    # --- MoE ------------------------------------------------------------

    def moe(self, tokens: int = 128, hidden: int = 7168, experts: int = 256, topk: int = 8) -> None:
        world = self.world
        moe = self.coll.moe(experts, hidden, tokens, topk, DTYPE, programs=self.args.moe_programs)
        gen = torch.Generator(device="cuda").manual_seed(7 + self.rank)
        x = torch.randn(tokens, hidden, device="cuda", dtype=DTYPE, generator=gen)
        scores = torch.rand(tokens, experts, device="cuda", generator=gen)
        weights, idx = scores.topk(topk, dim=1)
        idx = idx.to(torch.int32).contiguous()
        weights = (weights / weights.sum(1, keepdim=True)).float().contiguous()
        eloc = experts // world
        out = torch.empty(tokens, hidden, device="cuda", dtype=DTYPE)

        def tle_moe():
            recv, _ = moe.dispatch(x, idx)
            moe.combine(recv, weights, out=out)

        # The pipeline a PyTorch user writes: sort pairs by expert, exchange
        # counts, read them on the host, all_to_all_single the tokens there
        # and back, un-permute, weighted sum.
        def torch_moe():
            flat = idx.reshape(-1).long()
            order = torch.argsort(flat, stable=True)
            send = x[order // topk]
            per_rank = torch.bincount(flat // eloc, minlength=world)
            recv_counts = torch.empty_like(per_rank)
            dist.all_to_all_single(recv_counts, per_rank)
            s, r = per_rank.tolist(), recv_counts.tolist()
            got = torch.empty(sum(r), hidden, device="cuda", dtype=DTYPE)
            dist.all_to_all_single(got, send, output_split_sizes=r, input_split_sizes=s)
            back = torch.empty_like(send)
            dist.all_to_all_single(back, got, output_split_sizes=s, input_split_sizes=r)
            pairs = torch.empty_like(back)
            pairs[order] = back
            return (pairs.view(tokens, topk, hidden).float() * weights[..., None]).sum(1).to(DTYPE)

        tle_moe()
        want = torch_moe()  # identity experts: the combine of the dispatch is sum_k w_k x = x
        self.check("moe dispatch+combine", out, want, exact=False)
        self.moe_label = f"moe {tokens}x{hidden} top{topk}/{experts}"
        nbytes = tokens * topk * hidden * 2
        self.measure("moe", "tle-moe", nbytes, tle_moe)
        self.measure("moe", "torch-a2a", nbytes, torch_moe, modes=("eager",))
        self.symm_a2av(x, idx, eloc, hidden, tokens, topk)

    def symm_a2av(self, x, idx, eloc, hidden, tokens, topk) -> None:
        if self.world == 1:
            self.skip("symm_mem all_to_all_vdev", "needs 2 GPUs (world size 1)")
            return
        try:
            import torch.distributed._symmetric_memory as symm_mem
            fn = torch.ops.symm_mem.all_to_all_vdev
            if hasattr(symm_mem, "set_backend"):
                symm_mem.set_backend("NVSHMEM")
            rows = tokens * topk
            inp = symm_mem.empty(rows, hidden, device="cuda", dtype=DTYPE)
            out = symm_mem.empty(self.world * rows, hidden, device="cuda", dtype=DTYPE)
            splits = symm_mem.empty(self.world, device="cuda", dtype=torch.int64)
            split_off = symm_mem.empty(2, self.world, device="cuda", dtype=torch.int64)
            symm_mem.rendezvous(inp, self.group)
            symm_mem.rendezvous(out, self.group)
            flat = idx.reshape(-1).long()
            inp.copy_(x[torch.argsort(flat, stable=True) // topk])
            splits.copy_(torch.bincount(flat // eloc, minlength=self.world))
            fn(inp, out, splits, split_off, self.group)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            self.skip("symm_mem all_to_all_vdev", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
            return
        self.measure("moe", "symm-a2av", tokens * topk * hidden * 2, lambda: fn(inp, out, splits, split_off,
                                                                                self.group))

    # --- one GPU: the kernels against the copy floor ----------------------

    def kernel_sweep(self) -> None:
        """The local paths (``kernel_floor``) at every ``--sweep-programs``
        x ``--sweep-blocks`` launch shape: which lifts them closest to
        ``copy_`` (issue 28 found 10-26% at 32 programs of 2048). Each shape
        has its own workspace; KERNEL lines carry it."""
        base = self.coll
        try:
            for programs in self.args.sweep_programs:
                for block in self.args.sweep_blocks:
                    self.coll = Collectives(self.comm, Config(programs=programs, block=block,
                                                              num_warps=self.args.warps,
                                                              stage_bytes=64 * MB + MB))
                    try:
                        self.kernel_floor(label=f"{programs}x{block}", sizes=(16 * MB, 64 * MB))
                    finally:
                        self.coll.close()
        finally:
            self.coll = base

    def kernel_floor(self, label: str = "", sizes=(1 * MB, 16 * MB, 64 * MB)) -> None:
        """Each TLE kernel on a world of one moves a known number of bytes
        through this GPU's memory; compared to ``copy_`` of as many bytes."""
        lines = []
        for nbytes in sizes:
            n = nbytes // 2
            x = torch.randn(n, device="cuda", dtype=DTYPE)
            out = torch.empty_like(x)
            big = torch.empty(4 * n, device="cuda", dtype=DTYPE)
            big2 = torch.empty_like(big)
            copy_us = statistics.median(self.timer.run(lambda: big2.copy_(big), graph=True))
            copy_bw = 2 * big.numel() * 2 / copy_us / 1e3  # GB/s, read + write
            cases = {
                # copy in (read x, write stage), reduce (read stage), write out
                "all_reduce oneshot": (lambda: self.coll.all_reduce(x, out=out, variant="oneshot"), 4 * nbytes),
                # + the second pass through B
                "all_reduce twoshot": (lambda: self.coll.all_reduce(x, out=out, variant="twoshot"), 6 * nbytes),
                "all_gather push": (lambda: self.coll.all_gather(x, out=out), 2 * nbytes),
                "all_gather pull": (lambda: self.coll.all_gather(x, out=out, variant="pull"), 3 * nbytes),
                "reduce_scatter push": (lambda: self.coll.reduce_scatter(x, out=out), 2 * nbytes),
                "all_to_all": (lambda: self.coll.all_to_all(x, out=out), 2 * nbytes),
            }
            for name, (fn, moved) in cases.items():
                us = statistics.median(self.timer.run(fn, graph=True))
                bw = moved / us / 1e3
                at = f" @ {label}" if label else ""
                lines.append(f"KERNEL | {name}{at} | {nbytes // KB} KB | {us:.1f} µs | {bw:.0f} GB/s | "
                             f"{100 * bw / copy_bw:.0f}% of copy_ ({copy_bw:.0f} GB/s) |")
        torch.cuda.empty_cache()
        if self.rank == 0:
            log(f"KERNEL | kernel (world of one){' @ programs x block' if label else ''} | size | median (graph) "
                "| bytes moved / time | vs copy_ |")
            for line in lines:
                log(line)

    # --- verdicts ---------------------------------------------------------

    def med(self, op, mode, nbytes, impl):
        f = self.rows.get((op, mode, nbytes, impl))
        return statistics.median(f) if f else None

    def verdicts(self) -> list[str]:
        out = []
        sizes = self.args.sizes
        if self.world < 2:
            for target in ("all_reduce in graphs 8 KB-1 MB <= 0.85x NCCL and <= 0.95x best symm_mem",
                           "all_gather <= 0.9x NCCL up to 1 MB", "all_gather >= 0.95x NCCL busbw at >= 64 MB",
                           "reduce_scatter <= 0.9x NCCL up to 1 MB",
                           "reduce_scatter >= 0.95x NCCL busbw at >= 64 MB",
                           "MoE dispatch+combine <= 0.6x the all_to_all_single pipeline"):
                out.append(f"VERDICT {target}: SKIPPED (needs 2 GPUs: world size {self.world})")
            return out
        small = [s for s in sizes if s <= MB]
        cells, ok, missing = [], True, []
        for s in small:
            t, n = self.med("all_reduce", "graph", s, "tle"), self.med("all_reduce", "graph", s, "nccl")
            symm = [v for v in (self.med("all_reduce", "graph", s, "symm-oneshot"),
                                self.med("all_reduce", "graph", s, "symm-twoshot")) if v]
            if t is None or n is None:
                missing.append(str(s))
                continue
            good = t <= 0.85 * n and (not symm or t <= 0.95 * min(symm))
            ok &= good
            cells.append(f"{s // KB}K {t / n:.2f}x NCCL" + (f", {t / min(symm):.2f}x symm" if symm else ""))
        note = "" if not missing else f"; not measured at {', '.join(missing)}"
        if not any(self.med("all_reduce", "graph", s, "symm-oneshot") for s in small):
            note += "; symm_mem not measured (see SKIPPED)"
        out.append(f"VERDICT all_reduce in graphs 8 KB-1 MB <= 0.85x NCCL and <= 0.95x best symm_mem: "
                   f"{'PASS' if ok and cells and not missing else 'FAIL'} ({'; '.join(cells)}{note})")
        for op in ("all_gather", "reduce_scatter"):
            cells, ok = [], bool(small)
            for s in small:
                best = min([v for v in (self.med(op, "graph", s, "tle-push"), self.med(op, "graph", s, "tle-pull"))
                            if v] or [float("inf")])
                n = self.med(op, "graph", s, "nccl")
                good = n is not None and best <= 0.9 * n
                ok &= good
                cells.append(f"{s // KB}K {best / n:.2f}x" if n else f"{s // KB}K n/a")
            out.append(f"VERDICT {op} <= 0.9x NCCL up to 1 MB (graphs): {'PASS' if ok else 'FAIL'} "
                       f"({'; '.join(cells)})")
            large = [s for s in sizes if s >= 64 * MB]
            cells, ok = [], bool(large)
            for s in large:
                best = min([v for v in (self.med(op, "eager", s, "tle-push"), self.med(op, "eager", s, "tle-pull"))
                            if v] or [float("inf")])
                n = self.med(op, "eager", s, "nccl")
                ratio = n / best if n else 0.0  # busbw ratio = inverse time ratio
                ok &= ratio >= 0.95
                cells.append(f"{s // MB}M {ratio:.2f}x NCCL busbw")
            out.append(f"VERDICT {op} >= 0.95x NCCL busbw at >= 64 MB (eager): "
                       f"{'PASS' if ok else 'FAIL' if large else 'SKIPPED (no size >= 64 MB asked)'} "
                       f"({'; '.join(cells)})")
        moe_bytes = [k[2] for k in self.rows if k[0] == "moe"]
        if moe_bytes:
            t = self.med("moe", "eager", moe_bytes[0], "tle-moe")
            p = self.med("moe", "eager", moe_bytes[0], "torch-a2a")
            good = t is not None and p is not None and t <= 0.6 * p
            out.append(f"VERDICT MoE dispatch+combine <= 0.6x the all_to_all_single pipeline (eager, "
                       f"{self.moe_label}): {'PASS' if good else 'FAIL'} "
                       f"({t and p and f'{t / p:.2f}x'}; tle {t and round(t, 1)} µs, torch {p and round(p, 1)} µs)")
        else:
            out.append("VERDICT MoE dispatch+combine <= 0.6x the all_to_all_single pipeline: SKIPPED (--no-moe)")
        return out

    def table(self) -> None:
        if self.rank != 0:
            return
        log("| op | mode | size | " + " | ".join(["impl: median [min-max] µs"]) + " |")
        for (op, mode, nbytes, impl), f in sorted(self.rows.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                                     kv[0][2], kv[0][3])):
            size = f"{nbytes // MB} MB" if nbytes >= MB else f"{nbytes // KB} KB"
            log(f"| {op} | {mode} | {size} | {impl}: {statistics.median(f):.2f} [{min(f):.2f}-{max(f):.2f}] |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None, help="comma-separated sizes such as 8K,1M (default 8K..256M)")
    parser.add_argument("--reps", type=int, default=REPS)
    parser.add_argument("--programs", type=int, default=0,
                        help="programs (CTAs) per launch at most (0: Config's, one per SM as far as the slots reach)")
    parser.add_argument("--block", type=int, default=0, help="elements per program and step (0: Config's 4096)")
    parser.add_argument("--warps", type=int, default=0, help="warps per program (0: Config's 8)")
    parser.add_argument("--moe-programs", type=int, default=32)
    parser.add_argument("--ll-max", type=int, default=64 * KB, help="largest all_reduce the auto variant runs LL")
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}, 5 repetitions")
    parser.add_argument("--ops", default="all_reduce,all_gather,reduce_scatter,all_to_all,moe,kernels")
    parser.add_argument("--sweep-programs", default="32,64,132,256",
                        help="with --ops sweep: programs per launch to try (at most n_barriers = 256)")
    parser.add_argument("--sweep-blocks", default="2048,4096,8192", help="with --ops sweep: elements per step")
    args = parser.parse_args()
    args.sizes = ([size_arg(s) for s in args.sizes.split(",")] if args.sizes else
                  QUICK_SIZES if args.quick else SIZES)
    args.sweep_programs = [int(v) for v in args.sweep_programs.split(",")]
    args.sweep_blocks = [int(v) for v in args.sweep_blocks.split(",")]
    if args.quick:
        args.reps = min(args.reps, 5)
    if args.reps < 5:
        parser.error("--reps must be at least 5 (median/min/max of >= 5)")
    for var in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        want = "0" if var == "NCCL_NVLS_ENABLE" else "1"
        assert os.environ.get(var) == want, f"multicast must stay off: {var}={want}"
    ops = args.ops.split(",")
    started = time.monotonic()
    with distributed(n_barriers=256) as comm:
        bench = Bench(comm, args)
        if comm.rank == 0:
            log(f"ops_bench: {comm.size} GPU(s), bf16, sizes {', '.join(str(s) for s in args.sizes)}, "
                f"median [min-max] of {args.reps} series, slower rank, eager and CUDA graph")
            if comm.size == 1:
                log("SKIPPED every comparison that needs 2 GPUs (world size 1): the collectives run on a world "
                    "of one (their local path); KERNEL lines measure it against copy_")
        for nbytes in args.sizes:
            for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
                if op in ops:
                    try:
                        getattr(bench, op)(nbytes)
                    except Exception:  # noqa: BLE001 - one failure must not hide the rest
                        bench.wrong.append(f"{op} {nbytes}: {traceback.format_exc().splitlines()[-1]}")
                        if comm.rank == 0:
                            log(f"ERROR {op} {nbytes}: {traceback.format_exc()}")
            torch.cuda.empty_cache()
        if "moe" in ops:
            try:
                bench.moe()
            except Exception:  # noqa: BLE001
                bench.wrong.append(f"moe: {traceback.format_exc().splitlines()[-1]}")
                if comm.rank == 0:
                    log(f"ERROR moe: {traceback.format_exc()}")
        if "kernels" in ops and comm.size == 1:
            bench.kernel_floor()
        if "sweep" in ops and comm.size == 1:
            bench.kernel_sweep()
        bench.table()
        verdicts = bench.verdicts()
        if comm.rank == 0:
            for s in bench.skipped:
                log(f"SKIPPED {s}")
            for v in verdicts:
                log(v)
            log(f"ops_bench took {time.monotonic() - started:.0f} s")
        dist.barrier()
    if bench.wrong:
        fail("wrong results or errors: " + "; ".join(bench.wrong))
    log("PASS ops_bench: every TLE result checked against NCCL")


if __name__ == "__main__":
    sys.exit(main())
