# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of one-sided data movement
(test_onesided_ranks.py): kernels spelled as FlagTree's (``import
tle.flagtree as tle``, the context of ``create_dist_tensor`` as a
``tl.constexpr``), run on CPU ranks of simulated nodes under Triton's
interpreter:

    python -m tle.launch --nodes M --ranks N python/tests/onesided_ranks.py CASE [BREAK]

Cases:
  allgather  an all-gather over every rank of every node, twice: each rank
             puts its block into every peer's buffer with a signal
             (node_put(..., signal=)) and waits for one signal per peer;
             then each rank gets every peer's block into a second buffer
             (node_get) and flushes before reading it.
  ring       a put ring with counters: ROUNDS times, each rank puts its
             source block to its right world neighbour with a signal and a
             local counter, waits for its own counter (wait_kind="counter")
             before overwriting the source for the next round, and for the
             neighbour's signal before checking what arrived. Round r lands
             in block 1 + r: nothing holds a rank back until its right
             neighbour has checked a round, so a rank may put a later round
             while the neighbour still reads an earlier one.

BREAK (a negative control the test runs too): ``nosignal`` leaves the
signal off the puts (the waits must then fail), ``noflush`` leaves the
flush out (the gets' data must then be missing when read, on peers of
other nodes). Every line is prefixed with "[rank r]": PASS or FAIL lines,
or one UNSUPPORTED line (exit 0) when this libtle has no Triton entry point
for the one-sided calls.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import triton
import triton.language as tl

import tle.flagtree as tle
from tle.cpu import shareable_array
from tle.runtime import TLEError

BLOCK = 16
ROUNDS = 4


def log(message: str) -> None:
    sys.stdout.write(f"[rank {os.environ.get('RANK', '?')}] {message}\n")
    sys.stdout.flush()


def check(name: str, ok: bool, detail: str = "") -> bool:
    log(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail and not ok else ''}")
    return ok


@triton.jit
def put_allgather_kernel(ctx: tl.constexpr, rank, size, BLOCK: tl.constexpr, SIGNAL: tl.constexpr):
    # Every peer gets this rank's block at element rank * BLOCK, with a
    # signal on word 0 released after the data.
    for i in range(1, size):
        peer = (rank + i) % size
        if SIGNAL:
            tle.node_put(ctx, peer, rank * BLOCK, rank * BLOCK, BLOCK, dtype=tl.float32, signal=0)
        else:
            tle.node_put(ctx, peer, rank * BLOCK, rank * BLOCK, BLOCK, dtype=tl.float32)
    tle.signal_wait(ctx, 0, "signal", size - 1)


@triton.jit
def get_allgather_kernel(ctx: tl.constexpr, rank, size, BLOCK: tl.constexpr, FLUSH: tl.constexpr):
    for i in range(1, size):
        peer = (rank + i) % size
        tle.node_get(ctx, peer, peer * BLOCK, peer * BLOCK, BLOCK, dtype=tl.float32)
    if FLUSH:
        tle.flush(ctx)


@triton.jit
def ring_round_kernel(ctx: tl.constexpr, rank, size, ROUND: tl.constexpr, BLOCK: tl.constexpr,
                      SIGNAL: tl.constexpr):
    # Source block 0, destination block 1 + ROUND of the same registered
    # buffer.
    right = (rank + 1) % size
    if SIGNAL:
        tle.node_put(ctx, right, (1 + ROUND) * BLOCK, 0, BLOCK, dtype=tl.float32, signal=1, counter=0)
    else:
        tle.node_put(ctx, right, (1 + ROUND) * BLOCK, 0, BLOCK, dtype=tl.float32, counter=0)
    # The source may be overwritten only once the put says so.
    tle.signal_wait(ctx, 0, "counter", ROUND + 1)
    tle.signal_wait(ctx, 1, "signal", ROUND + 1)


def unsupported(e: Exception) -> bool:
    """Whether ``e`` says this libtle lacks a Triton entry point (Triton's
    interpreter wraps the RuntimeError of tle._interp)."""
    text = str(e)
    if "Interp: it predates the Triton entry point" in text:
        log(f"UNSUPPORTED {text}")
        return True
    return False


def allgather(rank: int, size: int, brk: str) -> bool:
    data = shareable_array(size * BLOCK, np.float32)
    data[:] = -1
    data[rank * BLOCK:(rank + 1) * BLOCK] = rank + np.arange(BLOCK, dtype=np.float32) / 100
    ctx = tle.create_dist_tensor(data)
    # Each rank's own block is in place before the (collective)
    # registration, so before any peer can get it.
    gathered = shareable_array(size * BLOCK, np.float32)
    gathered[:] = -1
    gathered[rank * BLOCK:(rank + 1) * BLOCK] = data[rank * BLOCK:(rank + 1) * BLOCK]
    gctx = tle.create_dist_tensor(gathered)
    expected = np.concatenate([r + np.arange(BLOCK, dtype=np.float32) / 100 for r in range(size)])
    ok = True
    try:
        put_allgather_kernel[(1,)](ctx, rank, size, BLOCK, brk != "nosignal")
    except Exception as e:  # InterpreterError around the device's TLEError
        if unsupported(e):
            return True
        if TLEError.find(e) is None:
            raise
        return check("put all-gather: every signal arrives", False, str(TLEError.find(e)))
    ok &= check("put all-gather: every block arrived before its signal", np.array_equal(data, expected),
                f"{data}")
    get_allgather_kernel[(1,)](gctx, rank, size, BLOCK, brk != "noflush")
    ok &= check("get all-gather: every block landed by the flush", np.array_equal(gathered, expected),
                f"{gathered}")
    tle.cleanup_communicator()
    return ok


def ring(rank: int, size: int, brk: str) -> bool:
    buf = shareable_array((1 + ROUNDS) * BLOCK, np.float32)
    ctx = tle.create_dist_tensor(buf)
    left = (rank - 1) % size
    ok = True
    for r in range(ROUNDS):
        buf[:BLOCK] = rank * 1000 + r * 10 + np.arange(BLOCK, dtype=np.float32)
        try:
            ring_round_kernel[(1,)](ctx, rank, size, r, BLOCK, brk != "nosignal")
        except Exception as e:  # InterpreterError around the device's TLEError
            if unsupported(e):
                return True
            if TLEError.find(e) is None:
                raise
            return check(f"ring round {r}: the signal arrives", False, str(TLEError.find(e)))
        want = left * 1000 + r * 10 + np.arange(BLOCK, dtype=np.float32)
        got = buf[(1 + r) * BLOCK:(2 + r) * BLOCK]
        ok &= check(f"ring round {r}: the left neighbour's block arrived", np.array_equal(got, want),
                    f"{got} != {want}")
    tle.cleanup_communicator()
    return ok


def main() -> int:
    case = sys.argv[1]
    brk = sys.argv[2] if len(sys.argv) > 2 else ""
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    ok = {"allgather": allgather, "ring": ring}[case](rank, size, brk)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
