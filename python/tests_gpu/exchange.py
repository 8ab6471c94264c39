# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test 1: a neighbour exchange synchronized by tle.distributed_barrier.

Every iteration, each program of each rank writes a block of values into the
right neighbour's copy of a symmetric buffer, calls distributed_barrier
(sync, acq_rel), reads its own copy and counts the values that are not the
left neighbour's of this iteration; then arrive(release) + wait(acquire)
keep the neighbour from overwriting a block before it was read. Cases cover
the block group with index = program_id over several grid sizes and warp
counts, the warp group (num_warps=1), and the grid group (cooperative
launch, reading another program's block). Several launches per case check
that barrier epochs carry across launches; at the end the host reads the
buffer through SymmetricBuffer.tensor.

    torchrun --nproc-per-node N python/tests_gpu/exchange.py [--iters N] [--bootstrap tle|nccl]

With ``--bootstrap nccl`` the communicator rides on the process group's NCCL
communicator (``Communicator.from_process_group(bootstrap="nccl")``): the
same cases then check a TLE communicator made from an NCCL communicator.
"""

from __future__ import annotations

import argparse

import torch
import torch.distributed as dist

import tle
from common import distributed, fail, log
from kernels import BLOCK, EXCHANGE_CASES, exchange_kernel


def run_case(comm, name: str, programs: int, num_warps: int, group: str, shift: int, options: dict,
             iters: int, launches: int) -> bool:
    buf = comm.alloc((programs * BLOCK,), torch.int32)
    errors = torch.full((programs,), -1, dtype=torch.int32, device="cuda")
    size, rank = comm.size, comm.rank
    left = (rank + size - 1) % size
    total_bad = 0
    for _ in range(launches):
        dist.barrier()
        exchange_kernel[(programs,)](comm.dev_comm, buf.handle, errors, iters, BLOCK=BLOCK, GROUP=group,
                                     SHIFT=shift, num_warps=num_warps, extern_libs=tle.extern_libs(), **options)
        comm.synchronize()
        total_bad += int(errors.sum())
    # The last value the left neighbour wrote, read back through the tensor.
    n = programs * BLOCK
    expected = ((iters - 1) * size + left) * n + torch.arange(n, dtype=torch.int32, device="cuda")
    wrong_final = int((buf.tensor != expected).sum())
    buf.close()
    ok = total_bad == 0 and wrong_final == 0
    log(f"{'PASS' if ok else 'FAIL'} exchange [{name}]: {launches} launches x {iters} iterations, "
        f"{total_bad} wrong values seen in the kernel, {wrong_final} wrong in buf.tensor afterwards")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--bootstrap", choices=("tle", "nccl"), default="tle")
    args = parser.parse_args()
    with distributed(n_barriers=128, bootstrap=args.bootstrap) as comm:
        log(f"communicator {comm}")
        results = [run_case(comm, *case, iters=args.iters, launches=args.launches) for case in EXCHANGE_CASES]
        dist.barrier()
    if not all(results):
        fail(f"{results.count(False)} of {len(results)} exchange cases failed")
    log(f"PASS exchange ({args.bootstrap} bootstrap): all {len(results)} cases")


if __name__ == "__main__":
    main()
