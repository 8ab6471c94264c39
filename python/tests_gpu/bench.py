# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU benchmark rows from Triton: the barrier a Triton user gets from TLE,
and the one they would otherwise pick, NVSHMEM's, called from Triton
through PyTorch's NVSHMEM externs.

- `triton`: tle.distributed_barrier sync(acq_rel), block group, one slot per
  program (index = program_id), at 1, 8, 32 and 132 programs of 128 threads.
- `nvshmem-triton`: nvshmemx_barrier_all_block() in the same loop, at 1
  program (NVSHMEM has one barrier per team: concurrent programs would share
  it), through `torch.distributed._symmetric_memory._nvshmem_triton`
  (`requires_nvshmem`, which links libnvshmem_device.bc and initializes the
  module), on NVSHMEM set up by PyTorch's symmetric memory. If any of that is
  missing on the machine the row is skipped with the reason.

Both are timed in the kernel like bench/'s CUDA rows: one untimed round,
then N rounds between two %globaltimer reads, the slowest program of any
rank; a launch's figure is µs per round; each row is the median of REPS
launches, with min and max. Rank 0 prints RESULT lines in bench/run.sh's
format (section latency) and a table.

    torchrun --nproc-per-node 2 python/tests_gpu/bench.py [--iters N] [--reps R]
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch
import torch.distributed as dist
import triton
import triton.language as tl
from triton.language import core

import tle
from common import distributed, log
from kernels import barrier_loop_kernel, globaltimer

PROGRAMS = (1, 8, 32, 132)


@core.extern
def nvshmem_barrier_all_block(_semantic=None):
    """NVSHMEM's block-scope barrier over all PEs, resolved in the
    libnvshmem_device.bc that PyTorch's requires_nvshmem links (PyTorch's own
    externs declare the thread-scope nvshmem_barrier_all)."""
    return core.extern_elementwise("", "", [], {(): ("nvshmemx_barrier_all_block", core.dtype("int32"))},
                                   is_pure=False, _semantic=_semantic)


@triton.jit
def nvshmem_barrier_loop_kernel(times, n_iters):
    pid = tl.program_id(0)
    nvshmem_barrier_all_block()
    t0 = globaltimer()
    for _ in range(n_iters):
        nvshmem_barrier_all_block()
    t1 = globaltimer()
    tl.store(times + pid, t1 - t0)


def slowest_us(times: torch.Tensor, iters: int) -> float:
    """µs per round of the slowest program of any rank."""
    mine = float(times.max().item())
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    return max(every) / iters / 1000.0


def measure(launch, times: torch.Tensor, iters: int, reps: int) -> list[float]:
    launch(10)  # compile, load, warm up
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        times.zero_()
        dist.barrier()
        torch.cuda.synchronize()
        launch(iters)
        torch.cuda.synchronize()
        out.append(slowest_us(times, iters))
    return out


def result(impl: str, programs: int, figures: list[float], note: str = "") -> str:
    spread = f"n={len(figures)};min={min(figures):.4f};max={max(figures):.4f}"
    return f"RESULT,latency,{impl},{programs},{statistics.median(figures):.4f},{spread}{';' + note if note else ''}"


def tle_rows(comm, iters: int, reps: int) -> list[str]:
    times = torch.zeros(max(PROGRAMS), dtype=torch.int64, device="cuda")
    rows = []
    for programs in PROGRAMS:
        def launch(n: int, programs=programs) -> None:
            barrier_loop_kernel[(programs,)](comm.dev_comm, times, n, num_warps=4, extern_libs=tle.extern_libs())
        rows.append(result("triton", programs, measure(launch, times, iters, reps)))
    return rows


def nvshmem_rows(iters: int, reps: int) -> tuple[list[str], str]:
    """The NVSHMEM-from-Triton row, or no row and the reason."""
    try:
        import torch.distributed._symmetric_memory as symm_mem
        from torch.distributed._symmetric_memory import _nvshmem_triton as nvshmem
    except ImportError as e:
        return [], f"PyTorch's NVSHMEM Triton externs do not import: {e}"
    if not getattr(symm_mem, "is_nvshmem_available", lambda: False)():
        return [], "PyTorch reports NVSHMEM unavailable (symm_mem.is_nvshmem_available())"
    requires = getattr(nvshmem, "requires_nvshmem", None)
    if requires is None:
        return [], "this PyTorch has no requires_nvshmem (older _nvshmem_triton API)"
    try:
        # NVSHMEM is brought up by PyTorch's symmetric memory on the NVSHMEM
        # backend: one symmetric allocation and a rendezvous.
        if hasattr(symm_mem, "set_backend"):
            symm_mem.set_backend("NVSHMEM")
        group = dist.group.WORLD.group_name
        if hasattr(symm_mem, "enable_symm_mem_for_group"):
            symm_mem.enable_symm_mem_for_group(group)
        buf = symm_mem.empty(16, dtype=torch.int64, device="cuda")
        symm_mem.rendezvous(buf, group=group)
        why = ""
    except Exception as e:  # noqa: BLE001 - any failure of the setup skips the row
        why = f"NVSHMEM setup through torch symmetric memory failed: {type(e).__name__}: {e}"
    # Every rank goes on, or none does: NVSHMEM's barrier would wait forever
    # for a rank whose setup failed.
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, why)
    failed = [(r, w) for r, w in enumerate(every) if w]
    if failed:
        return [], "; ".join(f"rank {r}: {w}" for r, w in failed)

    try:
        kernel = requires(nvshmem_barrier_loop_kernel)
        times = torch.zeros(1, dtype=torch.int64, device="cuda")

        def launch(n: int) -> None:
            kernel[(1,)](times, n, num_warps=4)

        figures = measure(launch, times, iters, reps)
    except Exception as e:  # noqa: BLE001
        return [], f"the kernel did not compile or run: {type(e).__name__}: {e}"
    return [result("nvshmem-triton", 1, figures, "nvshmemx_barrier_all_block")], ""


def report(rank: int, rows: list[str]) -> None:
    if rank != 0:
        return
    for line in rows:
        print(line, flush=True)
        _, _, impl, programs, med, note = line.split(",", 5)
        lo, hi = (p.split("=")[1] for p in note.split(";")[1:3])
        log(f"| {impl} | {programs} | {float(med):.3f} [{float(lo):.3f}-{float(hi):.3f}] µs |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--no-nvshmem", action="store_true")
    args = parser.parse_args()
    assert os.environ.get("NVSHMEM_DISABLE_NVLS") == "1", "multicast must stay off (NVSHMEM_DISABLE_NVLS=1)"
    with distributed(n_barriers=max(PROGRAMS)) as comm:
        if comm.rank == 0:
            log(f"benchmark: {comm.size} GPUs, 128 threads per program, {args.iters} rounds per launch, "
                f"%globaltimer in the kernel, slowest program of any rank, median [min-max] of {args.reps} launches")
        # TLE's rows are printed before NVSHMEM is tried, so that they
        # survive whatever NVSHMEM does.
        report(comm.rank, tle_rows(comm, args.iters, args.reps))
        why = "--no-nvshmem"
        if not args.no_nvshmem:
            rows, why = nvshmem_rows(args.iters, args.reps)
            report(comm.rank, rows)
        if comm.rank == 0 and why:
            log(f"SKIPPED nvshmem-triton: {why}")
        dist.barrier()


if __name__ == "__main__":
    main()
