# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One CPU rank of the fault tests (test_faults.py), started by the test
itself, one process per rank (TLE's launcher would stop every rank at the
first one that fails, and here ranks fail on purpose):

    python fault_ranks.py recover RANK ID1 ID2
        2 ranks, onError = return. Rank 1 skips the barrier of the
        communicator of ID1; rank 0's kernel must run to its end and the
        host must read the timeout naming rank 1; both then destroy it and
        run barriers on a new communicator of ID2 in the same process.
    python fault_ranks.py signal RANK ID
        2 ranks, onError = return. Rank 0 waits on signal word 3, which
        rank 1 never signals; rank 0's kernel must run to its end, see the
        failure through comm_failed, and the host must read the timeout
        naming the word.
    python fault_ranks.py loop RANK N ID
        N ranks in a loop of launches of one barrier each, until a launch
        reports a failure; prints READY after the first round and, at the
        end, "END <CLOCK_MONOTONIC ns> <code> <missing peers>".

Every line is prefixed with "[rank r]"; the exit status is 0 when the rank
saw what it must.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests_gpu"))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import kernels  # noqa: E402  (python/tests_gpu/kernels.py)

import tle  # noqa: E402
import tle.language as tlx  # noqa: E402
from tle.cpu import Communicator, Tensor  # noqa: E402
from tle.runtime import OnError, Result, TLEError  # noqa: E402


@triton.jit
def barrier_then_mark(comm, mark):
    tlx.distributed_barrier(comm, index=3)
    tl.store(mark, 1)


def log(rank: int, message: str) -> None:
    sys.stdout.write(f"[rank {rank}] {message}\n")
    sys.stdout.flush()


def barriers(comm: Communicator, rounds: int) -> None:
    for _ in range(rounds):
        kernels.maybe_barrier_kernel[(1,)](comm.dev_comm, 0, extern_libs=tle.extern_libs())
        comm.synchronize()


def recover(rank: int, first: bytes, second: bytes) -> int:
    comm = Communicator.init_rank(2, first, rank, timeout_ms=300, bootstrap_timeout_ms=20000,
                                  on_error=OnError.RETURN)
    if rank == 0:
        mark = Tensor(np.zeros(1, np.int32))
        barrier_then_mark[(1,)](comm.dev_comm, mark, extern_libs=tle.extern_libs())
        try:
            comm.synchronize()
            log(rank, "FAIL: no timeout recorded")
            return 1
        except TLEError as e:
            ok = e.code == Result.TIMEOUT and list(e.info.missing_peers) == [1] and int(mark.numpy()[0]) == 1
            log(rank, f"{'PASS' if ok else 'FAIL'} record: {e.info.message}; kernel ran to its end: "
                f"{int(mark.numpy()[0]) == 1}")
            if not ok:
                return 1
    comm.close()  # rank 1 skipped the barrier; an orderly close is no death
    with Communicator.init_rank(2, second, rank, timeout_ms=5000, bootstrap_timeout_ms=20000) as again:
        barriers(again, 20)
    log(rank, "PASS recovery: 20 barriers on a new communicator")
    return 0


@triton.jit
def signal_wait_then_mark(comm, mark):
    tlx.signal_wait(comm, 3, 1)
    tl.store(mark, tlx.comm_failed(comm))


def signal(rank: int, uid: bytes) -> int:
    with Communicator.init_rank(2, uid, rank, timeout_ms=300, bootstrap_timeout_ms=20000,
                                on_error=OnError.RETURN) as comm:
        if rank == 1:
            return 0  # never signals; an orderly close is no death
        mark = Tensor(np.full(1, -1, np.int32))
        signal_wait_then_mark[(1,)](comm.dev_comm, mark, extern_libs=tle.extern_libs())
        try:
            comm.synchronize()
            log(rank, "FAIL: no timeout recorded")
            return 1
        except TLEError as e:
            seen = int(mark.numpy()[0])
            ok = (e.code == Result.TIMEOUT and "on signal 3: it holds 0, waiting for >= 1" in e.info.message
                  and seen == Result.TIMEOUT)
            log(rank, f"{'PASS' if ok else 'FAIL'} signal: {e.info.message}; comm_failed in the kernel: {seen}")
            return 0 if ok else 1


def loop(rank: int, n: int, uid: bytes) -> int:
    with Communicator.init_rank(n, uid, rank, timeout_ms=10000, bootstrap_timeout_ms=20000) as comm:
        rounds = 0
        try:
            while True:
                barriers(comm, 1)
                rounds += 1
                if rounds == 1:
                    log(rank, "READY")
        except TLEError as e:
            end = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            peers = ",".join(str(p) for p in e.info.missing_peers) if e.info else ""
            log(rank, f"END {end} {int(e.code)} {peers} after {rounds} rounds: {e}")
            return 0 if e.code == Result.PEER_FAILURE else 1


def main() -> int:
    case, rank = sys.argv[1], int(sys.argv[2])
    if case == "signal":
        return signal(rank, bytes.fromhex(sys.argv[3]))
    if case == "recover":
        return recover(rank, bytes.fromhex(sys.argv[3]), bytes.fromhex(sys.argv[4]))
    return loop(rank, int(sys.argv[3]), bytes.fromhex(sys.argv[4]))


if __name__ == "__main__":
    sys.exit(main())
