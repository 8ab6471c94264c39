# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of Triton signals under the
interpreter (test_signals.py), started by TLE's launcher:

    python -m tle.launch --ranks 2 python/tests/signal_ranks.py CASE [options]

Cases:
  pingpong  the GPU test's ping-pong (python/tests_gpu/kernels.py) between
            two processes, in every configuration, several launches each;
            prints "PASS pingpong: N rounds" when every handoff was right.
  never     rank 1 waits on word 3, which rank 0 never signals (it signals
            word 2): rank 1 must end with TLE's timeout report naming the
            word (exit 3), not hang.

Every line is prefixed with "[rank r]".
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests_gpu"))

import kernels  # noqa: E402  (python/tests_gpu/kernels.py, the GPU tests' kernels)

import tle  # noqa: E402
import tle.language as tlx  # noqa: E402
from tle.cpu import Communicator, Tensor  # noqa: E402
from tle.runtime import TLEError  # noqa: E402

#: Exit status of a rank that got TLE's report (what the tests expect).
REPORTED = 3
BLOCK = 16


def log(comm: Communicator, message: str) -> None:
    sys.stdout.write(f"[rank {comm.rank}] {message}\n")
    sys.stdout.flush()


def run_pingpong(args) -> int:
    with Communicator.from_launcher(n_signals=len(kernels.PINGPONG_CASES) * kernels.PINGPONG_WORDS) as comm:
        bad = 0
        for index, (name, programs, _num_warps, group) in enumerate(kernels.PINGPONG_CASES):
            buf = comm.alloc((programs * BLOCK,), np.int32)
            errors = Tensor(np.full(programs, -1, np.int32))
            for launch in range(2):
                kernels.pingpong_kernel[(programs,)](comm.dev_comm, buf.handle, errors, args.rounds,
                                                     launch * args.rounds, index * kernels.PINGPONG_WORDS,
                                                     BLOCK=BLOCK, GROUP=group, extern_libs=tle.extern_libs())
                comm.synchronize()
                bad += int(errors.numpy().sum())
            buf.close()
            log(comm, f"pingpong [{name}]: {int(errors.numpy().sum())} wrong values in the last launch")
        log(comm, f"{'PASS' if bad == 0 else 'FAIL'} pingpong: {args.rounds} rounds, {bad} wrong values")
        return 0 if bad == 0 else 1


@triton.jit
def wrong_word_kernel(comm):
    rank = tlx.intra_rank(comm)
    if rank == 0:
        tlx.signal(comm, 1, 2)
    else:
        tlx.signal_wait(comm, 3, 1)


def run_never(args) -> int:
    with Communicator.from_launcher(timeout_ms=args.timeout_ms) as comm:
        start = time.monotonic()
        try:
            wrong_word_kernel[(1,)](comm.dev_comm, extern_libs=tle.extern_libs())
            comm.synchronize()
        except Exception as e:
            err = TLEError.find(e)
            if err is None:
                raise
            log(comm, f"TLE error report after {time.monotonic() - start:.2f} s: "
                f"code={getattr(err.code, 'name', err.code)} {err}")
            return REPORTED
        if comm.rank == 0:
            log(comm, "done")
            return 0
        log(comm, "the wait returned although word 3 was never signalled")
        return 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=["pingpong", "never"])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--timeout-ms", type=int, default=2000)
    args = parser.parse_args()
    return {"pingpong": run_pingpong, "never": run_never}[args.case](args)


if __name__ == "__main__":
    sys.exit(main())
