# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of the fused GEMM operators
(test_fused.py): ag_gemm, gemm_rs and gemm_ar on CPU ranks under Triton's
interpreter, every call checked exactly against NumPy, started by TLE's
launcher:

    python -m tle.launch --ranks N python/tests/fused_ranks.py [--late S] [--only NAME,...] [--mismatch]

Inputs are small integers, so float32 products and sums are exact and a
result is either right or shows which data was stale. Shapes are not
multiples of the 16 x 16 x 16 tile (K both a multiple and not); every
operator runs three times on one plan with new inputs each time. With
``--late S`` the last rank sleeps S seconds before its second call of each
operator (its peers must wait for its data; the first call of a shape is
collective), and in that call holds between its push and its GEMM (ag_gemm)
or before its reduce (gemm_rs, gemm_ar) until every peer has started its
third call, and then as long again as its first call took (its peers must
not overwrite what it has not read: a push or GEMM that skips the release
wait writes the buffer it is about to read). ``--marks DIR`` is where the
ranks say which call they start (a file per rank and call); without it the
hold is S seconds, which a slow machine may not fill.
A second ``Fused`` then reuses the first one's signal words (late second
call: a plan must start them from 0). Then each operator's calls are recorded twice: they must launch the same
kernels with the same arguments (a CUDA graph replays them). ``--mismatch``:
the last rank asks for another tile configuration: every
rank must raise the clear error, not hang. Prints "PASS name" / "FAIL
name: why" per case and "PASS fused: k of k" at the end; exit status 1 on
any failure. Every line is prefixed with "[rank r]".
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tle.cpu import Communicator  # noqa: E402
from tle.ops import Fused  # noqa: E402
from tle.ops.fused import choose  # noqa: E402

#: (m, k, n) per operator: m, k this rank's operand (ag_gemm: rows of the
#: shard; gemm_rs: all M rows, a multiple of the ranks; k the local K).
SHAPES = {"ag_gemm": [(20, 24, 40), (16, 32, 16)], "gemm_rs": [(36, 20, 24)], "gemm_ar": [(18, 16, 33)]}
CALLS = 3


def log(rank: int, message: str) -> None:
    sys.stdout.write(f"[rank {rank}] {message}\n")
    sys.stdout.flush()


def operands(op: str, m: int, k: int, n: int, size: int, call: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every rank's (a, b) of this call, the same on every rank."""
    a, b = [], []
    for r in range(size):
        rng = np.random.default_rng(100 * call + 10 * r + len(op))
        a.append(rng.integers(-3, 4, size=(m, k)).astype(np.float32))
        b.append(rng.integers(-3, 4, size=(k, n)).astype(np.float32))
    return a, b


def reference(op: str, a: list[np.ndarray], b: list[np.ndarray], rank: int, size: int) -> np.ndarray:
    if op == "ag_gemm":
        return np.concatenate(a) @ b[rank]
    total = sum(a[r] @ b[r] for r in range(size))
    if op == "gemm_ar":
        return total
    mo = total.shape[0] // size
    return total[rank * mo:(rank + 1) * mo]


def errors(f: Fused, check, results: list[bool], rank: int) -> None:
    """Bad operands: refused on the host, naming the problem, before any
    launch (every rank refuses the same, so nothing is left waiting)."""
    a = np.ones((4, 8), np.float32)
    b = np.ones((8, 4), np.float32)
    cases = [
        ("b rows", lambda: f.gemm_ar(a, np.ones((5, 4), np.float32)), "b must have 8 rows; got 5"),
        ("dtype", lambda: f.ag_gemm(a.astype(np.float16), b.astype(np.float16)), "CPU ranks take float32"),
        ("mixed", lambda: f.ag_gemm(a, b.astype(np.float16)), "a is float32 but b is float16"),
        ("out", lambda: f.gemm_ar(a, b, out=np.empty((3, 4), np.float32)), "out must be 4 x 4 of float32"),
        ("rs rows", lambda: f.gemm_rs(np.ones((f.size * 2 + 1, 8), np.float32), b), "not a multiple of the"),
        ("words", lambda: Fused(f.comm, n_signals=5, min_flops=0).ag_gemm(a, b), "signal words"),
    ]
    for name, call, want in cases:
        try:
            call()
            ok, why = False, "no error"
        except (TypeError, ValueError) as e:
            ok, why = want in str(e), str(e)
        results.append(ok)
        log(rank, f"{'PASS' if ok else 'FAIL'} error {name}" + ("" if ok else f": {why}"))


def same_launches(f: Fused, op: str, a: np.ndarray, b: np.ndarray) -> bool:
    """What a CUDA graph replays: two calls of ``op`` on its plan launch the
    same kernels with the same arguments (the call counts are read on the
    device; a host-side epoch would differ). The launches are recorded, not
    run, so nothing reaches the peers."""
    import tle.ops.fused as module
    names = [n for n in dir(module) if n.endswith("_kernel") or n == "_gemm_tiles"]
    saved = {n: getattr(module, n) for n in names}
    launches: list = []

    def key(v):
        return ("ptr", v.data_ptr()) if hasattr(v, "data_ptr") else v

    class Recorder:
        def __init__(self, name):
            self.name = name

        def __getitem__(self, grid):
            return lambda *args, **kw: launches.append(
                (self.name, grid, tuple(map(key, args)), tuple(sorted((k, key(v)) for k, v in kw.items()))))

    out = getattr(f, op)(a, b)  # the plan exists: no digest exchange
    try:
        for n in names:
            setattr(module, n, Recorder(n))
        getattr(f, op)(a, b, out=out)
        first = list(launches)
        launches.clear()
        getattr(f, op)(a, b, out=out)
    finally:
        for n, k in saved.items():
            setattr(module, n, k)
    return bool(first) and first == launches and len(first) >= 3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--late", type=float, default=0.0)
    parser.add_argument("--only", default="")
    parser.add_argument("--marks", type=Path, help="a directory the ranks share, for the hold of --late")
    parser.add_argument("--mismatch", action="store_true")
    parser.add_argument("--quick", action="store_true", help="one shape per operator")
    parser.add_argument("--lean", action="store_true",
                        help="only the operators' calls and errors (not the replay, reuse and unfused cases, "
                             "which do not depend on the number of ranks)")
    args = parser.parse_args()
    results: list[bool] = []
    with Communicator.from_launcher(n_signals=256) as comm:
        rank, size = comm.rank, comm.size
        last = rank == size - 1

        def check(name: str, got: np.ndarray, want: np.ndarray) -> None:
            ok = got.shape == want.shape and np.array_equal(got, want)
            why = "" if ok else (f"shape {got.shape} vs {want.shape}" if got.shape != want.shape else
                                 f"{int((got != want).sum())} of {want.size} elements wrong")
            results.append(ok)
            log(rank, f"{'PASS' if ok else 'FAIL'} {name}" + (f": {why}" if why else ""))

        if args.mismatch:
            with Fused(comm, n_signals=256, min_flops=0) as f:
                a, b = operands("gemm_ar", 18, 16, 33, size, 0)
                cfg = None
                if last:  # another tile width on one rank only
                    cfg = replace(choose("gemm_ar", 18, 33, 16 * size, size, "float32", 0, True, 0), bn=32)
                try:
                    f.gemm_ar(a[rank], b[rank], config=cfg)
                    check("mismatch raises", np.zeros(1), np.ones(1))
                except ValueError as e:
                    ok = "different tile configurations" in str(e)
                    results.append(ok)
                    log(rank, f"{'PASS' if ok else 'FAIL'} mismatch raises: {e}")
            log(rank, f"{'PASS' if all(results) else 'FAIL'} fused: {sum(results)} of {len(results)}")
            sys.exit(0 if results and all(results) else 1)

        # In SHAPES' order on every rank (a set's order differs by process).
        ops = [op for op in SHAPES if not args.only or op in args.only.split(",")]
        held: set[str] = set()

        with Fused(comm, n_signals=256, signal_base=200, min_flops=0) as f:
            errors(f, check, results, rank)
        def mark(name: str) -> None:
            if args.marks:
                (args.marks / f"{name}.{rank}").touch()

        def hold(name: str, first_call_s: float) -> None:
            """Until every peer has started call ``name`` (or 60 s), then
            as long as this rank's first call took: long enough for a peer
            that skips the release wait to write into what this rank is
            about to read, however loaded the machine."""
            if not args.marks:
                time.sleep(args.late)
                return
            deadline = time.monotonic() + 60
            while (time.monotonic() < deadline and
                   not all((args.marks / f"{name}.{r}").exists() for r in range(size) if r != rank)):
                time.sleep(0.01)
            time.sleep(max(args.late, first_call_s))

        with Fused(comm, n_signals=256, min_flops=0) as f:
            for op in ops:
                for si, (m, k, n) in enumerate(SHAPES[op][:1] if args.quick else SHAPES[op]):
                    first_call_s = 0.0
                    for call in range(CALLS):
                        a, b = operands(op, m, k, n, size, call)
                        mark(f"{op}-{si}-{call}")
                        f.pause = None
                        # Not the first call: its plan's digest exchange is a
                        # barrier, which would make every rank wait anyway.
                        if last and args.late and call == 1 and op not in held:
                            held.add(op)
                            time.sleep(args.late)
                            f.pause = lambda stage, s=f"{op}-{si}-2", t=first_call_s: hold(s, t)
                        started = time.monotonic()
                        got = getattr(f, op)(a[rank], b[rank])
                        if call == 0:
                            first_call_s = time.monotonic() - started
                        check(f"{op} {m}x{k}x{n} call {call}", got, reference(op, a, b, rank, size))
            f.pause = None
            for op in ([] if args.lean else ops):
                m, k, n = SHAPES[op][0]
                a, b = operands(op, m, k, n, size, 5)
                ok = same_launches(f, op, a[rank], b[rank])
                results.append(ok)
                log(rank, f"{'PASS' if ok else 'FAIL'} {op} replays the same launches")
        # A second Fused on the same words (signal_base), its plans in the
        # same order: each starts from words the first one's left counting;
        # the late second call must still wait.
        with Fused(comm, n_signals=256, min_flops=0) as f:
            for op in ([] if args.lean else ops):
                m, k, n = SHAPES[op][0]
                for call in range(2):
                    a, b = operands(op, m, k, n, size, 20 + call)
                    if last and args.late and call == 1:
                        # Longer than a peer's interpreted GEMM of its own
                        # rows, which comes before it reads ours.
                        time.sleep(max(1.5, args.late))
                    got = getattr(f, op)(a[rank], b[rank])
                    check(f"{op} words reused call {call}", got, reference(op, a, b, rank, size))
        # Below min_flops: the unfused path (matmul + the tle.ops collective).
        with Fused(comm, n_signals=256, signal_base=128) as f:
            for op in ([] if args.lean else ops):
                m, k, n = SHAPES[op][0]
                a, b = operands(op, m, k, n, size, 7)
                got = getattr(f, op)(a[rank], b[rank])
                fused = f._plans[f._key(op, a[rank], b[rank])].fused
                check(f"{op} unfused (fused={fused})", got if not fused else got * np.nan,
                      reference(op, a, b, rank, size))
        log(rank, f"{'PASS' if all(results) else 'FAIL'} fused: {sum(results)} of {len(results)}")
    sys.exit(0 if results and all(results) else 1)


if __name__ == "__main__":
    main()
