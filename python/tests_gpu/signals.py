# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test 4: point-to-point signals from Triton (tle.language.signal and
signal_wait) on 2 GPUs.

Ranks 0 and 1 hand a block of data back and forth through signal words
(kernels.pingpong_kernel): every handoff is checked on arrival, so a value
read before the signal that published it counts as an error. Cases cover
the block group over 1 and 16 programs and the warp group (num_warps=1);
several launches per case check that words carry across launches (targets
continue from the last launch's value). Prints one PASS/FAIL line per case
and the time per round trip.

    torchrun --nproc-per-node 2 python/tests_gpu/signals.py [--rounds N]
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.distributed as dist

import tle
from common import distributed, fail, log
from kernels import PINGPONG_CASES, PINGPONG_WORDS, pingpong_kernel

BLOCK = 256


def run_case(comm, index: int, name: str, programs: int, num_warps: int, group: str, rounds: int,
             launches: int) -> bool:
    buf = comm.alloc((programs * BLOCK,), torch.int32)
    errors = torch.full((programs,), -1, dtype=torch.int32, device="cuda")
    total_bad = 0
    elapsed = 0.0
    for launch in range(launches):
        dist.barrier()
        start = time.perf_counter()
        pingpong_kernel[(programs,)](comm.dev_comm, buf.handle, errors, rounds, launch * rounds,
                                     index * PINGPONG_WORDS, BLOCK=BLOCK, GROUP=group, num_warps=num_warps,
                                     extern_libs=tle.extern_libs())
        comm.synchronize()
        elapsed = time.perf_counter() - start
        total_bad += int(errors.sum())
    buf.close()
    ok = total_bad == 0
    log(f"{'PASS' if ok else 'FAIL'} pingpong [{name}]: {launches} launches x {rounds} round trips, "
        f"{total_bad} wrong values seen; last launch {elapsed * 1e6 / rounds:.2f} us per round trip")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--launches", type=int, default=3)
    args = parser.parse_args()
    with distributed(n_signals=len(PINGPONG_CASES) * PINGPONG_WORDS) as comm:
        if comm.size != 2:
            fail(f"the ping-pong needs 2 ranks, not {comm.size}")
        results = [run_case(comm, i, *case, rounds=args.rounds, launches=args.launches)
                   for i, case in enumerate(PINGPONG_CASES)]
        dist.barrier()
    if not all(results):
        fail(f"{results.count(False)} of {len(results)} ping-pong cases failed")
    log(f"PASS signals: all {len(results)} cases")


if __name__ == "__main__":
    main()
