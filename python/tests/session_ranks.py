# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of Triton barrier sessions under the
interpreter (test_sessions.py), started by TLE's launcher:

    python -m tle.launch --ranks N python/tests/session_ranks.py [--rounds R]

Each program exchanges data with the next rank on one slot per program,
round after round, through a mix of stateless barriers and sessions on the
same slots over five launches (stateless only; a session loop then a
stateless barrier; a session left early by a loop whose exit depends on
the round; a session only; stateless only), every round checked: a
barrier that let a program read before its neighbour wrote shows as a wrong
value. Prints "PASS sessions: ..." when every value was right and the
slots' epochs continued across the launches.

Every line is prefixed with "[rank r]".
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.cpu import Communicator, Tensor

BLOCK = 8


@triton.jit
def _round(comm, dst, src, mine, it, size, rank, left, n):
    """One round's write to the right neighbour; returns the value the left
    neighbour must have written into ours."""
    tl.store(dst + mine, (it * size + rank) * n + mine)
    return (it * size + left) * n + mine


@triton.jit
def mixed_kernel(comm, mem, errors, first, rounds, stop, MODE: tl.constexpr, BLOCK: tl.constexpr):
    """MODE 0: stateless rounds; 1: a session loop, then one stateless
    round; 2: a session loop that leaves after round `stop`; 3: session
    rounds only. Round numbers continue from `first`."""
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    right = (rank + 1) % size
    left = (rank + size - 1) % size
    n = n_programs * BLOCK
    mine = pid * BLOCK + tl.arange(0, BLOCK)
    dst = tlx.intra_pointer(mem, 0, right, dtype=tl.int32)
    src = tlx.local_pointer(mem, 0, dtype=tl.int32)
    bad = 0
    done = 0
    if MODE == 0:
        for it in range(first, first + rounds):
            want = _round(comm, dst, src, mine, it, size, rank, left, n)
            tlx.distributed_barrier(comm)
            bad += tl.sum((tl.load(src + mine) != want).to(tl.int32))
            tlx.distributed_barrier(comm, barrier_kind="arrive", order="release")
            tlx.distributed_barrier(comm, barrier_kind="wait", order="acquire")
            done += 1
    else:
        s = tlx.session_open(comm)
        count = rounds
        if MODE == 1:
            count = rounds - 1
        for it in range(first, first + count):
            if MODE != 2 or it - first <= stop:
                want = _round(comm, dst, src, mine, it, size, rank, left, n)
                s = tlx.distributed_barrier(comm, session=s)
                bad += tl.sum((tl.load(src + mine) != want).to(tl.int32))
                s = tlx.distributed_barrier(comm, barrier_kind="arrive", order="release", session=s)
                s = tlx.distributed_barrier(comm, barrier_kind="wait", order="acquire", session=s)
                done += 1
        bad += (tlx.session_close(comm, s) != 0).to(tl.int32)
        if MODE == 1:
            it = first + count
            want = _round(comm, dst, src, mine, it, size, rank, left, n)
            tlx.distributed_barrier(comm)
            bad += tl.sum((tl.load(src + mine) != want).to(tl.int32))
            tlx.distributed_barrier(comm)
            done += 1
    tl.store(errors + pid, bad)
    tl.store(errors + n_programs + pid, done)


def log(comm: Communicator, message: str) -> None:
    sys.stdout.write(f"[rank {comm.rank}] {message}\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--programs", type=int, default=2)
    args = parser.parse_args()
    programs, rounds = args.programs, args.rounds
    with Communicator.from_launcher() as comm:
        buf = comm.alloc((programs * BLOCK,), np.int32)
        errors = Tensor(np.zeros(2 * programs, np.int32))
        first, bad = 0, 0
        # (mode, the round a session of mode 2 leaves after)
        for mode, stop in ((0, 0), (1, 0), (2, 1), (3, 0), (0, 0)):
            mixed_kernel[(programs,)](comm.dev_comm, buf.handle, errors, first, rounds, stop, MODE=mode,
                                      BLOCK=BLOCK, extern_libs=tle.extern_libs())
            comm.synchronize()
            out = errors.numpy()
            done = int(out[programs])
            launch_bad = int(out[:programs].sum())
            if any(int(d) != done for d in out[programs:]):
                launch_bad += 1
            log(comm, f"mode {mode}: {done} rounds, {launch_bad} wrong values")
            bad += launch_bad
            first += done
        buf.close()
        log(comm, f"{'PASS' if bad == 0 else 'FAIL'} sessions: {first} rounds over 5 launches, "
            f"{bad} wrong values")
        return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
