# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of tle.flagtree (test_flagtree.py):
kernels written as FlagTree's tests write them (``import tle.flagtree as
tle``, the context of ``create_dist_tensor`` as a ``tl.constexpr``), run on
CPU ranks under Triton's interpreter with NumPy buffers:

    python -m tle.launch --ranks N python/tests/flagtree_ranks.py CASE [SPACE]

Cases:
  d2d       each program reads element pid of the next rank's registered
            buffer through remote(), then a barrier; shard_id('device') and
            n_pes; the same with a mesh, FlagTree's enums and an arrive and
            wait of space SPACE ('intra_node' by default, or 'world': the
            world team, which on one node is the same ranks).
  node      shard_id(mesh, 'node') is 0 on one node.
  delay     rank 0 starts its barrier DELAY s late: every other rank's
            barrier must take about that long (a barrier that does not wait
            returns at once); also repeated barriers and an arrive/wait pair.
  refuse    a plain NumPy array (not tle.cpu.shareable_array) cannot be
            registered across processes: every rank fails, with the reason.
  signal    ranks 0 and 1 hand a value back and forth through signal words
            (signal, signal_wait with wait_kind "signal"), each program on
            its own word, every handoff checked; inc and add, intra_node and
            space SPACE (as for d2d), FlagTree's enums.
  coords    shard_id over meshes of blocks (FlagTree's test_tle_shard_id_runtime
            shapes), twice as many programs as the mesh has.

Every line is prefixed with "[rank r]"; a case prints PASS or FAIL lines,
or one UNSUPPORTED line (exit 0) when the device library refuses the team
of SPACE (a runtime that does not serve FlagCX's WORLD team yet).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import triton
import triton.language as tl

import tle.flagtree as tle
from tle.cpu import Tensor, shareable_array
from tle.runtime import TLEError

N = 8
DELAY = 1.5


def log(message: str) -> None:
    sys.stdout.write(f"[rank {os.environ.get('RANK', '?')}] {message}\n")
    sys.stdout.flush()


def check(name: str, ok: bool, detail: str = "") -> bool:
    log(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail and not ok else ''}")
    return ok


@triton.jit
def read_next_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    pid = tl.program_id(0)
    local_rank = tle.shard_id(mesh, "device", device_dptr=device_dptr)
    peer = (local_rank + 1) % mesh.shape[0]
    value = tl.load(tle.remote(device_dptr, space="device", dtype=tl.float32, shard_id=peer, offset=pid))
    tl.store(out_ptr + pid, value)
    tle.distributed_barrier(device_dptr=device_dptr, space="device", index=pid)


@triton.jit
def read_next_enums_kernel(out_ptr, ranks_ptr, coords_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr,
                           SPACE: tl.constexpr):
    pid = tl.program_id(0)
    peer = (tle.shard_id(mesh, "device", device_dptr=device_dptr) + 1) % tle.n_pes(device_dptr)
    tl.store(out_ptr + pid, tl.load(tle.remote(device_dptr, peer, space="device", dtype=tl.float32) + pid))
    tl.store(ranks_ptr + pid, tle.n_pes(device_dptr))
    tl.store(coords_ptr + pid, tle.shard_id(mesh, -1))
    # An arrive and its wait: one team's slot (each team has its own).
    tle.distributed_barrier(mesh, device_dptr, SPACE, tle.GroupKind.BLOCK, tle.BarrierKind.ARRIVE,
                            tle.MemoryOrder.RELEASE, index=pid, memory_scope=tle.MemoryScope.SYSTEM)
    tle.distributed_barrier(mesh, device_dptr, SPACE, "block", "wait", "acqrel", index=pid)


def case_d2d(space: str) -> bool:
    x = shareable_array(N, np.float32)
    ctx = tle.create_dist_tensor(x)
    rank, size = ctx.rank, ctx.size
    x[:] = np.arange(N, dtype=np.float32) + rank * 1000
    # The registration's exchange ordered every rank's registration; the
    # values are written after it, so meet once more before reading them.
    _meet(ctx)
    expected = np.arange(N, dtype=np.float32) + (rank + 1) % size * 1000
    mesh = tle.device_mesh(tle.MeshConfig(device=size))
    out = Tensor(np.zeros(N, np.float32))
    read_next_kernel[(N,)](out, device_dptr=ctx, mesh=mesh)
    ok = check("remote read of the next rank, then a barrier", np.array_equal(out.numpy(), expected),
               f"{out.numpy()} != {expected}")
    out2, ranks, coords = (Tensor(np.zeros(N, t)) for t in (np.float32, np.int32, np.int32))
    world = tle.device_mesh(tle.MeshConfig(node=1, device=size))
    read_next_enums_kernel[(N,)](out2, ranks, coords, device_dptr=ctx, mesh=world, SPACE=space)
    ok &= check(f"n_pes, a mesh coordinate, {space} arrive and wait, enums",
                np.array_equal(out2.numpy(), expected) and (ranks.numpy() == size).all() and
                np.array_equal(coords.numpy(), np.arange(N) % size),
                f"{out2.numpy()} {ranks.numpy()} {coords.numpy()}")
    tle.communicator().synchronize()  # no device error was recorded
    tle.cleanup_communicator()
    ok &= check("cleanup_communicator ends the communicator", tle.communicator() is None)
    return ok


@triton.jit
def meet_kernel(device_dptr: tl.constexpr):
    tle.distributed_barrier(device_dptr=device_dptr, space="device")


def _meet(ctx) -> None:
    meet_kernel[(1,)](device_dptr=ctx)


@triton.jit
def node_rank_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tle.shard_id(mesh, "node", device_dptr=device_dptr))


def case_node() -> bool:
    ctx = tle.create_dist_tensor(shareable_array(1, np.float32))
    mesh = tle.device_mesh(tle.MeshConfig(node=1, device=ctx.size))
    out = Tensor(np.full(2, -1, np.int32))
    node_rank_kernel[(2,)](out, device_dptr=ctx, mesh=mesh)
    ok = check("shard_id(mesh, 'node') is 0 on one node", (out.numpy() == 0).all(), str(out.numpy()))
    tle.cleanup_communicator()
    return ok


@triton.jit
def barrier_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    tle.distributed_barrier(mesh=mesh, device_dptr=device_dptr, space="device")
    tl.store(out_ptr + tl.program_id(0), 1)


@triton.jit
def arrive_wait_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    tle.distributed_barrier(mesh=mesh, device_dptr=device_dptr, space="device", barrier_kind="arrive")
    tle.distributed_barrier(mesh=mesh, device_dptr=device_dptr, space="device", barrier_kind="wait")
    tl.store(out_ptr + tl.program_id(0), 1)


def case_delay() -> bool:
    ctx = tle.create_dist_tensor(shareable_array((4, 4), np.float32))
    mesh = tle.device_mesh({"device": ctx.size})
    ok = True
    for i in range(8):
        out = Tensor(np.zeros(1, np.int32))
        barrier_kernel[(1,)](out, device_dptr=ctx, mesh=mesh)
        ok &= out.numpy()[0] == 1
    out = Tensor(np.zeros(1, np.int32))
    arrive_wait_kernel[(1,)](out, device_dptr=ctx, mesh=mesh)
    ok = check("8 barriers and an arrive/wait pair complete", bool(ok and out.numpy()[0] == 1))
    _meet(ctx)
    start = time.monotonic()
    if ctx.rank == 0:
        time.sleep(DELAY)
    barrier_kernel[(1,)](out, device_dptr=ctx, mesh=mesh)
    elapsed = time.monotonic() - start
    log(f"delayed barrier took {elapsed:.2f} s")
    if ctx.rank != 0:
        ok &= check("a barrier waits for a delayed peer", elapsed >= 0.8 * DELAY, f"returned after {elapsed:.2f} s")
    tle.cleanup_communicator()
    return ok


def case_refuse() -> bool:
    try:
        tle.create_dist_tensor(np.zeros(16, np.float32))
    except TLEError as e:
        log(f"refused: {e}")
        return True
    return check("plain memory is refused", False, "create_dist_tensor succeeded")


@triton.jit
def coordinates_kernel(output, mesh: tl.constexpr, rank: tl.constexpr):
    pid = tl.program_id(0)
    for axis in tl.static_range(rank):
        tl.store(output + pid * rank + axis, tle.shard_id(mesh, axis))


def case_coords() -> bool:
    """shard_id over meshes of blocks (no communicator): program p's
    coordinate on axis i is p // prod(shape[i+1:]) % shape[i], an axis of
    size 1 is 0, and programs beyond the mesh wrap around."""
    ok = True
    for shape in [(2, 1), (2, 1, 2), (1, 4), (2, 3)]:
        mesh = tle.device_mesh({"block": [(f"axis{i}", size) for i, size in enumerate(shape)]})
        count = 2 * int(np.prod(shape))
        out = Tensor(np.full((count, len(shape)), -1, np.int32))
        coordinates_kernel[(count,)](out, mesh, len(shape))
        expected = np.array([[pid % np.prod(shape) // int(np.prod(shape[i + 1:])) % size
                              for i, size in enumerate(shape)] for pid in range(count)], np.int32)
        ok &= check(f"shard_id coordinates of a {shape} mesh of blocks", np.array_equal(out.numpy(), expected),
                    f"{out.numpy().tolist()} != {expected.tolist()}")
    return ok


ROUNDS = 20


@triton.jit
def pingpong_kernel(out_ptr, device_dptr: tl.constexpr, ROUNDS: tl.constexpr, SPACE: tl.constexpr):
    pid = tl.program_id(0)
    rank = tle.shard_id(None, "device", device_dptr=device_dptr)
    peer = 1 - rank
    dst = tle.remote(device_dptr, peer, space="device", dtype=tl.int32, offset=pid)
    src = tle.remote(device_dptr, rank, space="device", dtype=tl.int32, offset=pid)
    bad = 0
    for r in range(ROUNDS):
        if rank == 0:
            tl.store(dst, r * 100 + pid)
            tle.signal(device_dptr, peer, pid)
            tle.signal_wait(device_dptr, pid, "signal", r + 1)
            bad += (tl.load(src) != r * 100 + pid + 1).to(tl.int32)
        else:
            tle.signal_wait(device_dptr, slot_id=pid, wait_kind="signal", target=r + 1, order=tle.MemoryOrder.ACQUIRE)
            got = tl.load(src)
            bad += (got != r * 100 + pid).to(tl.int32)
            tl.store(dst, got + 1)
            tle.signal(device_dptr, peer, pid, op="add", value=1, space=SPACE, group_kind=tle.GroupKind.BLOCK,
                       context_idx=0)
    tl.store(out_ptr + pid, bad)


def case_signal(space: str) -> bool:
    ctx = tle.create_dist_tensor(shareable_array(N, np.int32))
    programs = 4
    out = Tensor(np.full(programs, -1, np.int32))
    pingpong_kernel[(programs,)](out, device_dptr=ctx, ROUNDS=ROUNDS, SPACE=space)
    ok = check(f"{ROUNDS} signal handoffs per program, every one seen with its data", (out.numpy() == 0).all(),
               str(out.numpy()))
    tle.communicator().synchronize()  # no device error was recorded
    words = tle.communicator()._comm.signals(0, programs)  # tle.runtime.Comm.signals
    ok &= check("each program's word counts the peer's signals", words == [ROUNDS] * programs, str(words))
    tle.cleanup_communicator()
    return ok


@triton.jit
def contexts_kernel(out_ptr, device_dptr: tl.constexpr, ROUNDS: tl.constexpr):
    pid = tl.program_id(0)
    rank = tle.shard_id(None, "device", device_dptr=device_dptr)
    peer = 1 - rank
    dst = tle.remote(device_dptr, peer, space="device", dtype=tl.int32, offset=pid)
    src = tle.remote(device_dptr, rank, space="device", dtype=tl.int32, offset=pid)
    bad = 0
    for r in range(ROUNDS):
        # Round r on network context r % 4, whose word
        # pid has counted r // 4 rounds before this one: a signal that
        # landed in another context's word would end a wait early (a wrong
        # value) or never (a deadlock).
        ctx = r % 4
        if rank == 0:
            tl.store(dst, r * 100 + pid)
            tle.signal(device_dptr, peer, pid, context_idx=ctx)
            tle.signal_wait(device_dptr, pid, "signal", r // 4 + 1, context_idx=ctx)
            bad += (tl.load(src) != r * 100 + pid + 1).to(tl.int32)
        else:
            tle.signal_wait(device_dptr, pid, "signal", r // 4 + 1, context_idx=ctx)
            got = tl.load(src)
            bad += (got != r * 100 + pid).to(tl.int32)
            tl.store(dst, got + 1)
            tle.signal(device_dptr, peer, pid, context_idx=ctx)
    # A constant context, and a barrier on one.
    tle.signal(device_dptr, peer, pid, op="add", value=7, context_idx=3)
    tle.signal_wait(device_dptr, pid, "signal", ROUNDS // 4 + 7, context_idx=3)
    tle.distributed_barrier(None, device_dptr, "device", index=pid, context_id=2)
    tl.store(out_ptr + pid, bad)


def case_contexts() -> bool:
    ctx = tle.create_dist_tensor(shareable_array(N, np.int32))
    programs = 4
    out = Tensor(np.full(programs, -1, np.int32))
    contexts_kernel[(programs,)](out, device_dptr=ctx, ROUNDS=ROUNDS)
    ok = check(f"{ROUNDS} handoffs over four network contexts, each seen with its data", (out.numpy() == 0).all(),
               str(out.numpy()))
    tle.communicator().synchronize()
    words = tle.communicator()._comm.signals(0, programs)  # context 0's words
    ok &= check("context 0's words count its rounds only", words == [ROUNDS // 4] * programs, str(words))
    tle.cleanup_communicator()
    return ok


CASES = {"d2d": case_d2d, "signal": case_signal, "contexts": case_contexts, "node": case_node, "delay": case_delay, "refuse": case_refuse, "coords": case_coords}

def main() -> int:
    case = CASES[sys.argv[1]]
    if case not in (case_d2d, case_signal):
        return 0 if case() else 1
    space = sys.argv[2] if len(sys.argv) > 2 else "intra_node"
    try:
        return 0 if case(space) else 1
    except Exception as e:  # InterpreterError around the device's TLEError
        err = TLEError.find(e)
        if err is None or "team kind" not in str(err):
            raise
        log(f"UNSUPPORTED space {space!r}: {err}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
