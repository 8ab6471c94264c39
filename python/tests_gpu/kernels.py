# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Triton kernels of the GPU tests, kept free of torch so that the CI
tests (python/tests/test_gpu_kernels.py) compile them for sm_90 without a
GPU before they ever reach the GPU machine."""

from __future__ import annotations

import triton
import triton.language as tl

import tle.language as tlx

#: Elements per program in exchange_kernel.
BLOCK = 1024

#: The configurations exchange.py runs.
EXCHANGE_CASES = [
    # (name, programs, num_warps, group, shift, launch options)
    ("block, 1 program", 1, 4, "block", 0, {}),
    ("block, 8 programs", 8, 4, "block", 0, {}),
    ("block, 32 programs, 8 warps", 32, 8, "block", 0, {}),
    ("block, 100 programs, 1 warp", 100, 1, "block", 0, {}),
    ("warp, 16 programs, num_warps=1", 16, 1, "warp", 0, {}),
    ("grid, 8 programs, cooperative", 8, 4, "grid", 1, {"launch_cooperative_grid": True}),
]


@triton.jit
def exchange_kernel(comm, mem, errors, n_iters, BLOCK: tl.constexpr, GROUP: tl.constexpr, SHIFT: tl.constexpr):
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    right = (rank + 1) % size
    left = (rank + size - 1) % size
    n = n_programs * BLOCK
    mine = pid * BLOCK + tl.arange(0, BLOCK)
    # With the grid group every program of the node has arrived, so a
    # program may read a block another program's neighbour wrote.
    theirs = ((pid + SHIFT) % n_programs) * BLOCK + tl.arange(0, BLOCK)
    dst = tlx.intra_pointer(mem, 0, right, dtype=tl.int32)
    src = tlx.local_pointer(mem, 0, dtype=tl.int32)
    slot = pid if GROUP != "grid" else 0
    bad = 0
    for it in range(n_iters):
        tl.store(dst + mine, (it * size + rank) * n + mine)
        tlx.distributed_barrier(comm, space="device", barrier_kind="sync", group_kind=GROUP, order="acq_rel",
                                index=slot)
        got = tl.load(src + theirs)
        bad += tl.sum((got != (it * size + left) * n + theirs).to(tl.int32))
        tlx.distributed_barrier(comm, barrier_kind="arrive", group_kind=GROUP, order="release", index=slot)
        tlx.distributed_barrier(comm, barrier_kind="wait", group_kind=GROUP, order="acquire", index=slot)
    tl.store(errors + pid, bad)


@triton.jit
def maybe_barrier_kernel(comm, skip):
    if skip == 0:
        tlx.distributed_barrier(comm, index=tl.program_id(0))


@triton.jit
def globaltimer():
    """The GPU's nanosecond clock (PTX %globaltimer), as the CUDA
    benchmarks read it."""
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False,
                                     pack=1)


@triton.jit
def barrier_loop_kernel(comm, times, n_iters):
    """The benchmark's Triton row, timed like tle-bench-barrier's loops: one
    untimed relaxed round lines the ranks up, then n_iters acq_rel rounds
    between two clock reads; times[pid] gets the nanoseconds."""
    pid = tl.program_id(0)
    tlx.distributed_barrier(comm, barrier_kind="sync", group_kind="block", order="relaxed", index=pid)
    t0 = globaltimer()
    for _ in range(n_iters):
        tlx.distributed_barrier(comm, barrier_kind="sync", group_kind="block", order="acq_rel", index=pid)
    t1 = globaltimer()
    tl.store(times + pid, t1 - t0)


@triton.jit
def peer_read_kernel(comm, mem, errors, n_iters, BLOCK: tl.constexpr):
    # Each program stores a stamped block into this rank's own copy, crosses
    # the barrier and loads the same block of the right neighbour's copy
    # through intra_pointer: the peer's stores must be visible. The second
    # barrier keeps the neighbour from overwriting the block before it was
    # read.
    pid = tl.program_id(0)
    n = tl.num_programs(0) * BLOCK
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    right = (rank + 1) % size
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mine = tlx.local_pointer(mem, 0, dtype=tl.int32)
    theirs = tlx.intra_pointer(mem, 0, right, dtype=tl.int32)
    bad = 0
    for it in range(n_iters):
        tl.store(mine + offs, (it * size + rank) * n + offs)
        tlx.distributed_barrier(comm, barrier_kind="sync", group_kind="block", order="acq_rel", index=pid)
        got = tl.load(theirs + offs)
        bad += tl.sum((got != (it * size + right) * n + offs).to(tl.int32))
        tlx.distributed_barrier(comm, barrier_kind="sync", group_kind="block", order="acq_rel", index=pid)
    tl.store(errors + pid, bad)


#: The configurations signals.py (and, on CPU ranks, signal_ranks.py) runs;
#: case i uses signal words i * PINGPONG_WORDS + program.
PINGPONG_WORDS = 32
PINGPONG_CASES = [
    # (name, programs, num_warps, group)
    ("block, 1 program", 1, 4, "block"),
    ("block, 16 programs, 8 warps", 16, 8, "block"),
    ("warp, 8 programs, num_warps=1", 8, 1, "warp"),
]


@triton.jit
def pingpong_kernel(comm, mem, errors, n_rounds, first, word0, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    """Ranks 0 and 1 hand a block of data back and forth ``n_rounds``
    times, program p through signal word ``word0 + p``: rank 0 writes round
    r into rank 1's copy and signals; rank 1 waits, checks it, writes it
    back plus 1 and signals; rank 0 waits and checks. ``first`` is the
    word's value before this launch (earlier launches x n_rounds), so words
    are never reset."""
    pid = tl.program_id(0)
    word = word0 + pid
    rank = tlx.intra_rank(comm)
    peer = 1 - rank
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    dst = tlx.intra_pointer(mem, 0, peer, dtype=tl.int32)
    src = tlx.local_pointer(mem, 0, dtype=tl.int32)
    bad = 0
    for r in range(n_rounds):
        target = first + r + 1
        value = r * 7 + offs
        if rank == 0:
            tl.store(dst + offs, value)
            tlx.signal(comm, peer, word, group_kind=GROUP)
            tlx.signal_wait(comm, word, target, group_kind=GROUP)
            bad += tl.sum((tl.load(src + offs) != value + 1).to(tl.int32))
        else:
            tlx.signal_wait(comm, word, target, group_kind=GROUP)
            got = tl.load(src + offs)
            bad += tl.sum((got != value).to(tl.int32))
            tl.store(dst + offs, got + 1)
            tlx.signal(comm, peer, word, group_kind=GROUP)
    tl.store(errors + pid, bad)


@triton.jit
def blocked_kernel(comm, out):
    """abort_latency.py: waits on signal word 0 for a value nobody sends,
    so only Communicator.abort() ends it; then stores comm_failed."""
    tlx.signal_wait(comm, 0, 1)
    tl.store(out, tlx.comm_failed(comm))
