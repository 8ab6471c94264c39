"""GPU benchmark row: latency of tle.distributed_barrier in a Triton kernel.

One kernel per GPU runs N barriers in a loop (sync, block group, acq_rel,
one slot per program: index = program_id), timed with CUDA events; the row
is the per-barrier time, slowest rank, median of several launches. The same
barrier from CUDA C++ is measured by bench/ (the CUDA benchmark); compare
rows measured in one run only (docs/triton.md).

    torchrun --nproc-per-node 2 python/tests_gpu/bench.py [--iters N]
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.distributed as dist

import tle
from common import distributed, log
from kernels import barrier_loop_kernel

PROGRAMS = (1, 8, 32, 132)


def per_barrier_us(comm, programs: int, iters: int, repeats: int, num_warps: int) -> float:
    """Median over `repeats` launches of this rank's per-barrier time (µs)."""

    def launch(n: int) -> None:
        barrier_loop_kernel[(programs,)](comm.dev_comm, n, num_warps=num_warps, extern_libs=tle.extern_libs())

    launch(100)  # compile and warm up
    comm.synchronize()
    times = []
    for _ in range(repeats):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch(iters)
        end.record()
        comm.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / iters)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--num-warps", type=int, default=4, help="4 = 128 threads per program")
    args = parser.parse_args()
    with distributed(n_barriers=max(PROGRAMS)) as comm:
        row = []
        for programs in PROGRAMS:
            mine = per_barrier_us(comm, programs, args.iters, args.repeats, args.num_warps)
            every = [None] * comm.size
            dist.all_gather_object(every, mine)
            row.append(max(every))
        if comm.rank == 0:
            cells = " | ".join(f"{t:.2f} µs" for t in row)
            header = " | ".join(f"{p} CTA{'s' if p > 1 else ''}" for p in PROGRAMS)
            log(f"benchmark ({comm.size} GPUs, {args.num_warps * 32} threads per program, {args.iters} barriers "
                f"per launch, CUDA events, slowest rank, median of {args.repeats} launches)")
            log(f"| what | {header} |")
            log(f"| Triton: tle.distributed_barrier sync(acq_rel), block group, one slot per program | {cells} |")
        dist.barrier()


if __name__ == "__main__":
    main()
