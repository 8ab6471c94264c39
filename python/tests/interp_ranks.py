# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of Triton kernels under the interpreter
(test_interpreter.py): the GPU tests' kernels (python/tests_gpu/kernels.py)
on CPU ranks, with NumPy buffers, started by TLE's launcher:

    python -m tle.launch --ranks N python/tests/interp_ranks.py CASE [options]

Cases:
  exchange  every configuration of the GPU neighbour exchange (index =
            program_id over several grids, the warp group, the grid group),
            several launches each; prints one PASS/FAIL line per case.
  timeout   rank 1 skips the barrier the others enter: they must end with
            TLE's timeout report naming rank 1 (exit 3), not hang.
  deadlock  each rank waits on its own slot, so no barrier can complete:
            every rank must report within the deadline, naming the others.
  bench     the per-barrier time of a loop of barriers in one kernel (sync,
            block group, one program), printed by every rank
            (docs/triton.md, "Per-barrier time").

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


def log(comm: Communicator, message: str) -> None:
    # One write per line: the ranks share the launcher's output.
    sys.stdout.write(f"[rank {comm.rank}] {message}\n")
    sys.stdout.flush()


def report(comm: Communicator, error: BaseException, start: float) -> None:
    """Print TLE's report from a failed launch, as the GPU tests do."""
    e = TLEError.find(error)
    if e is None:
        raise error
    log(comm, f"TLE error report after {time.monotonic() - start:.2f} s: code={getattr(e.code, 'name', e.code)} {e}")
    if e.info is not None:
        log(comm, f"record: rank={e.info.rank} slot={e.info.slot} epoch={e.info.epoch} "
            f"missing_peers={list(e.info.missing_peers)} elapsed_ms={e.info.elapsed_ns / 1e6:.0f}")


def exchange_case(comm: Communicator, name: str, programs: int, group: str, shift: int, options: dict,
                  iters: int, launches: int) -> bool:
    buf = comm.alloc((programs * kernels.BLOCK,), np.int32)
    errors = Tensor(np.full(programs, -1, np.int32))
    size, rank = comm.size, comm.rank
    left = (rank + size - 1) % size
    total_bad = 0
    start = time.monotonic()
    for _ in range(launches):
        kernels.exchange_kernel[(programs,)](comm.dev_comm, buf.handle, errors, iters, BLOCK=kernels.BLOCK,
                                             GROUP=group, SHIFT=shift, extern_libs=tle.extern_libs(), **options)
        comm.synchronize()
        total_bad += int(errors.numpy().sum())
    n = programs * kernels.BLOCK
    expected = ((iters - 1) * size + left) * n + np.arange(n, dtype=np.int32)
    wrong_final = int((buf.array != expected).sum())
    buf.close()
    ok = total_bad == 0 and wrong_final == 0
    log(comm, f"{'PASS' if ok else 'FAIL'} exchange [{name}]: {launches} launches x {iters} iterations, "
        f"{total_bad} wrong values seen in the kernel, {wrong_final} wrong in the buffer afterwards "
        f"({time.monotonic() - start:.1f} s)")
    return ok


def grid_is_refused(comm: Communicator, programs: int) -> bool:
    """The grid group over several programs is refused with its reason
    (the interpreter runs a rank's programs one after another)."""
    buf = comm.alloc((programs * kernels.BLOCK,), np.int32)
    errors = Tensor(np.zeros(programs, np.int32))
    try:
        kernels.exchange_kernel[(programs,)](comm.dev_comm, buf.handle, errors, 1, BLOCK=kernels.BLOCK,
                                             GROUP="grid", SHIFT=1, extern_libs=tle.extern_libs())
        why = "the launch was not refused"
    except Exception as e:  # InterpreterError caused by tle.language's ValueError
        why = "" if "needs a grid of one program" in str(e.__cause__) else f"refused for another reason: {e!r}"
    buf.close()
    log(comm, f"{'PASS' if not why else 'FAIL'} exchange [grid, {programs} programs]: "
        f"{why or 'refused under the interpreter'}")
    return not why


def run_exchange(args) -> int:
    with Communicator.from_launcher(n_barriers=128) as comm:
        results = []
        for name, programs, _num_warps, group, shift, options in kernels.EXCHANGE_CASES:
            if group == "grid" and programs > 1:
                results.append(grid_is_refused(comm, programs))
                name, programs = "grid, 1 program", 1
            results.append(exchange_case(comm, name, programs, group, shift, options, args.iters, args.launches))
        log(comm, f"{'PASS' if all(results) else 'FAIL'} exchange: {results.count(True)} of {len(results)} cases")
        return 0 if all(results) else 1


def run_timeout(args) -> int:
    with Communicator.from_launcher(timeout_ms=args.timeout_ms) as comm:
        skip = 1 if comm.rank == 1 else 0
        log(comm, f"{'skipping' if skip else 'entering'} the barrier (timeout {args.timeout_ms} ms)")
        start = time.monotonic()
        try:
            kernels.maybe_barrier_kernel[(1,)](comm.dev_comm, skip, extern_libs=tle.extern_libs())
            comm.synchronize()
        except Exception as e:
            report(comm, e, start)
            return REPORTED
        if skip:
            log(comm, "done")
            return 0
        log(comm, "the barrier returned although rank 1 never arrived")
        return 1


@triton.jit
def crossed_kernel(comm):
    # Each rank waits on a slot of its own, where no peer ever arrives.
    tlx.distributed_barrier(comm, index=tlx.intra_rank(comm))


def run_deadlock(args) -> int:
    with Communicator.from_launcher(timeout_ms=args.timeout_ms) as comm:
        start = time.monotonic()
        try:
            crossed_kernel[(1,)](comm.dev_comm, extern_libs=tle.extern_libs())
        except Exception as e:
            report(comm, e, start)
            return REPORTED
        log(comm, "the barrier returned although no peer arrived on this slot")
        return 1


@triton.jit
def barrier_loop_kernel(comm, n_iters):
    """The GPU benchmark's loop (kernels.barrier_loop_kernel) without its
    clock reads, which are PTX: n_iters acq_rel syncs on the program's slot."""
    pid = tl.program_id(0)
    for _ in range(n_iters):
        tlx.distributed_barrier(comm, barrier_kind="sync", group_kind="block", order="acq_rel", index=pid)


def run_bench(args) -> int:
    with Communicator.from_launcher() as comm:
        barrier_loop_kernel[(1,)](comm.dev_comm, 20, extern_libs=tle.extern_libs())  # warm up
        times = []
        for _ in range(args.repeats):
            barrier_loop_kernel[(1,)](comm.dev_comm, 1, extern_libs=tle.extern_libs())  # line up the ranks
            start = time.perf_counter()
            barrier_loop_kernel[(1,)](comm.dev_comm, args.iters, extern_libs=tle.extern_libs())
            times.append((time.perf_counter() - start) * 1e6 / args.iters)
        log(comm, f"per-barrier time under the interpreter: {np.median(times):.1f} us (median of {args.repeats} "
            f"launches of {args.iters} barriers, sync, block group, 1 program, {comm.size} ranks)")
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=["exchange", "timeout", "deadlock", "bench"])
    parser.add_argument("--iters", type=int, default=None)
    parser.add_argument("--launches", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout-ms", type=int, default=2000)
    args = parser.parse_args()
    if args.iters is None:
        args.iters = 2000 if args.case == "bench" else 4
    return {"exchange": run_exchange, "timeout": run_timeout, "deadlock": run_deadlock,
            "bench": run_bench}[args.case](args)


if __name__ == "__main__":
    sys.exit(main())
