# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the race and slot check tests (test_interp_race.py):
one Triton kernel per bug class, and the same exchanges done right, on CPU
ranks started by TLE's launcher, whose checks judge them:

    python -m tle.launch --ranks N python/tests/race_ranks.py CASE

Cases (each rank puts a row into its right neighbour's buffer, then reads
its own buffer):
  barrier         a sync barrier with order acq_rel between the puts and
                  the reads: clean.
  relaxed         the same barrier with order relaxed: a race.
  missing_wait    an arrive with no wait before the reads: a race.
  two_programs    two programs, both on slot 0 (index=0): a slot misuse.
  signal          the put, a signal to the neighbour, its wait: clean.
  wrong_peer      the signal goes to the rank two to the right: a race.
  read_early      the reads come before the signal's wait: a race.
  flag            the put, then the kernel's own flag: an atomic exchange
                  with release on the neighbour's flag, polled with acquire
                  atomics on the reader's side: clean.
  flag_relaxed    the same flag with relaxed atomics: a race.
  bench [N]       the time per barrier of a loop of N barriers (sync,
                  block group, acq_rel, index = program id, 1 program):
                  the median of 5 launches, printed.

The lines the tests look for in the reports are marked "# line: NAME";
docs/triton.md and docs/debugging.md quote reports of these cases, line
numbers included: update them when lines move.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.cpu import Communicator, Tensor

N = 16


@triton.jit
def put_then_read(comm, buf, out, N: tl.constexpr, ORDER: tl.constexpr, KIND: tl.constexpr):
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    offs = tl.arange(0, N)
    dst = tlx.intra_pointer(buf, 0, (rank + 1) % size, dtype=tl.float32)
    tl.store(dst + offs, offs.to(tl.float32) + rank)  # line: put
    tlx.distributed_barrier(comm, barrier_kind=KIND, order=ORDER)
    own = tlx.local_pointer(buf, 0, dtype=tl.float32)
    tl.store(out + offs, tl.load(own + offs))  # line: read


@triton.jit
def shared_slot(comm, buf, out, N: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, N)
    own = tlx.local_pointer(buf, 0, dtype=tl.float32) + pid * N
    tl.store(own + offs, offs.to(tl.float32))
    tlx.distributed_barrier(comm, index=0)  # line: slot
    tl.store(out + pid * N + offs, tl.load(own + offs))


@triton.jit
def put_then_signal(comm, buf, out, N: tl.constexpr, HOPS: tl.constexpr, EARLY: tl.constexpr):
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    offs = tl.arange(0, N)
    dst = tlx.intra_pointer(buf, 0, (rank + 1) % size, dtype=tl.float32)
    tl.store(dst + offs, offs.to(tl.float32) + rank)  # line: signal put
    tlx.signal(comm, (rank + HOPS) % size, 0)
    own = tlx.local_pointer(buf, 0, dtype=tl.float32)
    if EARLY:
        tl.store(out + offs, tl.load(own + offs))  # line: early read
    tlx.signal_wait(comm, 0, 1)
    if not EARLY:
        tl.store(out + offs, tl.load(own + offs))  # line: signal read


@triton.jit
def put_then_flag(comm, buf, flags, out, N: tl.constexpr, SEM: tl.constexpr):
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    offs = tl.arange(0, N)
    right = (rank + 1) % size
    dst = tlx.intra_pointer(buf, 0, right, dtype=tl.float32)
    tl.store(dst + offs, offs.to(tl.float32) + rank)  # line: flag put
    tl.atomic_xchg(tlx.intra_pointer(flags, 0, right, dtype=tl.int32), 1, sem=SEM)
    own_flag = tlx.local_pointer(flags, 0, dtype=tl.int32)
    while tl.atomic_add(own_flag, 0, sem=SEM) == 0:
        pass
    own = tlx.local_pointer(buf, 0, dtype=tl.float32)
    tl.store(out + offs, tl.load(own + offs))  # line: flag read


@triton.jit
def barrier_loop(comm, iters):
    for _ in range(iters):
        tlx.distributed_barrier(comm)


# Below the kernels that docs/debugging.md and docs/triton.md quote by line.
import tle.flagtree as ft  # noqa: E402


# Case flagtree_two_programs: two_programs through tle.flagtree's barrier;
# the report names this line, not tle.flagtree's.
@triton.jit
def shared_slot_flagtree(comm):
    ft.distributed_barrier(None, comm, "device", index=0)  # line: flagtree slot


def main() -> None:
    case = sys.argv[1]
    with Communicator.from_launcher() as comm:
        buf = comm.alloc(2 * N, np.float32)
        out = Tensor(np.zeros(2 * N, np.float32))
        libs = tle.extern_libs()
        if case in ("barrier", "relaxed", "missing_wait"):
            order = "relaxed" if case == "relaxed" else "acq_rel"
            kind = "arrive" if case == "missing_wait" else "sync"
            put_then_read[(1,)](comm.dev_comm, buf.handle, out, N=N, ORDER=order, KIND=kind, extern_libs=libs)
        elif case == "two_programs":
            shared_slot[(2,)](comm.dev_comm, buf.handle, out, N=N, extern_libs=libs)
        elif case == "flagtree_two_programs":
            shared_slot_flagtree[(2,)](comm.dev_comm)
        elif case in ("signal", "wrong_peer", "read_early"):
            hops = 2 if case == "wrong_peer" else 1
            put_then_signal[(1,)](comm.dev_comm, buf.handle, out, N=N, HOPS=hops, EARLY=case == "read_early",
                                  extern_libs=libs)
        elif case in ("flag", "flag_relaxed"):
            flags = comm.alloc(1, np.int32)
            sem = "relaxed" if case == "flag_relaxed" else "acq_rel"
            put_then_flag[(1,)](comm.dev_comm, buf.handle, flags.handle, out, N=N, SEM=sem, extern_libs=libs)
        elif case == "bench":
            iters = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
            barrier_loop[(1,)](comm.dev_comm, 2, extern_libs=libs)  # warm: compile and first-call costs
            times = []
            for _ in range(5):
                barrier_loop[(1,)](comm.dev_comm, 1, extern_libs=libs)  # line up the ranks
                start = time.perf_counter()
                barrier_loop[(1,)](comm.dev_comm, iters, extern_libs=libs)
                times.append((time.perf_counter() - start) / iters)
            print(f"per-barrier {np.median(times) * 1e6:.1f} us (median of 5 launches of {iters})", flush=True)
        else:
            raise SystemExit(f"unknown case {case!r}")
        comm.synchronize()
        print(f"rank {comm.rank}: {case} done", flush=True)


if __name__ == "__main__":
    main()
