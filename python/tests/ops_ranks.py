# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the CPU tests of tle.ops (test_ops.py): every
collective on CPU ranks under Triton's interpreter, each call checked
against NumPy, started by TLE's launcher:

    python -m tle.launch --ranks N python/tests/ops_ranks.py [--late S] [--quick] [--only NAME,...]

Every rank computes every rank's inputs from the same seeds, so each can
check its own result. Sizes are not multiples of the tile (64 elements
here), each operation runs several times on one workspace (the staging
halves and flag-in-data numbers alternate on the device), in and out of
place, with a staging half small enough that the larger messages run in
several launches. With ``--late S`` the last rank sleeps S seconds before
the late calls, whose inputs are new: a rank that does not wait for it
reads its previous call's data and fails. Prints "PASS name" / "FAIL name:
why" per case and "PASS ops: k of k" at the end; exit status 1 on any
failure. Every line is prefixed with "[rank r]".
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tle.cpu import Communicator  # noqa: E402
from tle.ops import Collectives, Config  # noqa: E402,F401  (Collectives: the type of comm.collectives())

REDUCE = {"sum": lambda a: np.sum(a, axis=0, dtype=np.float32), "max": lambda a: np.max(a, axis=0),
          "min": lambda a: np.min(a, axis=0)}


class Ranks:
    def __init__(self, comm: Communicator, late: float, quick: bool):
        self.comm, self.late, self.quick = comm, late, quick
        self.rank, self.size = comm.rank, comm.size
        self.results: list[tuple[str, bool, str]] = []
        self.call = 0
        self.seen: set[str] = set()

    def log(self, message: str) -> None:
        sys.stdout.write(f"[rank {self.rank}] {message}\n")
        sys.stdout.flush()

    def inputs(self, shape, dtype) -> list[np.ndarray]:
        """Every rank's input of this call: small integers (exact in fp16
        sums), different in every call."""
        self.call += 1
        out = []
        for r in range(self.size):
            rng = np.random.default_rng(1000 * self.call + r)
            out.append(rng.integers(-8, 9, size=shape).astype(dtype))
        return out

    def maybe_late(self, key: str) -> None:
        """The last rank sleeps before the first call of each ``key`` (a
        variant): every wait of every variant meets a late peer once."""
        if key not in self.seen:
            self.seen.add(key)
            if self.late and self.rank == self.size - 1:
                time.sleep(self.late)

    def check(self, name: str, got: np.ndarray, want: np.ndarray) -> None:
        ok = got.shape == want.shape and np.array_equal(got, want)
        why = "" if ok else (f"shape {got.shape} vs {want.shape}" if got.shape != want.shape else
                             f"{int((got != want).sum())} of {want.size} elements wrong, first at "
                             f"{int(np.flatnonzero(got.reshape(-1) != want.reshape(-1))[0])}")
        self.results.append((name, ok, why))
        self.log(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {why}" if why else ""))


def all_reduce_cases(t: Ranks, coll: Collectives) -> None:
    # 300 fp32 > the 256-element staging half: two launches.
    sizes = (65, 300) if t.quick else (1, 63, 65, 200, 300)
    for variant in ("ll", "oneshot", "twoshot", None):
        for op in ("sum", "max", "min"):
            for n in sizes if op == "sum" else (65,):
                for dtype in (np.float32, np.float16) if n == 65 and op != "min" else (np.float32,):
                    if variant == "ll" and n * 8 > 4096:
                        continue
                    xs = t.inputs((n,), dtype)
                    want = REDUCE[op](np.stack(xs)).astype(dtype)
                    name = f"all_reduce {variant or 'auto'} {op} {np.dtype(dtype).name} n={n}"
                    t.maybe_late(f"all_reduce {variant}")
                    t.check(name, coll.all_reduce(xs[t.rank].copy(), op, variant=variant), want)
                    if op == "sum" and dtype == np.float32:
                        x = xs[t.rank].copy()
                        coll.all_reduce_(x, variant=variant)
                        t.check(name + " in place", x, want)


def all_gather_cases(t: Ranks, coll: Collectives) -> None:
    for variant in ("push", "pull"):
        # (7, 30): 210 x size elements, several launches.
        for shape in ((65,), (7, 30)) if t.quick else ((1,), (65,), (7, 30)):
            xs = t.inputs(shape, np.float32)
            want = np.concatenate(xs, axis=0)
            name = f"all_gather {variant} {shape}"
            t.maybe_late(f"all_gather {variant}")
            t.check(name, coll.all_gather(xs[t.rank], variant=variant), want)
            out = np.zeros_like(want)
            out.reshape(t.size, -1)[t.rank] = xs[t.rank].reshape(-1)
            coll.all_gather_(out, variant=variant)
            t.check(name + " in place", out, want)


def reduce_scatter_cases(t: Ranks, coll: Collectives) -> None:
    for variant in ("push", "pull"):
        for m in (65,) if t.quick else (1, 65, 100):
            for op in ("sum", "max") if m == 65 else ("sum",):
                xs = t.inputs((t.size * m,), np.float32)
                want = REDUCE[op](np.stack(xs)).reshape(t.size, m)[t.rank]
                name = f"reduce_scatter {variant} {op} m={m}"
                t.maybe_late(f"reduce_scatter {variant}")
                t.check(name, coll.reduce_scatter(xs[t.rank].copy(), op, variant=variant), want)
                x = xs[t.rank].copy()
                row = coll.reduce_scatter_(x, op, variant=variant)
                t.check(name + " in place", row, want)


def all_to_all_cases(t: Ranks, coll: Collectives) -> None:
    for m in (65,) if t.quick else (1, 65, 100):
        xs = t.inputs((t.size, m), np.float32)
        want = np.stack([xs[s][t.rank] for s in range(t.size)])
        t.maybe_late("all_to_all")
        t.check(f"all_to_all m={m}", coll.all_to_all(xs[t.rank].copy()), want)
        x = xs[t.rank].copy()
        coll.all_to_all_(x)
        t.check(f"all_to_all m={m} in place", x, want)


def moe_cases(t: Ranks, coll: Collectives) -> None:
    experts, hidden, max_tokens, topk = 4 * t.size, 20, 6, 2
    moe = coll.moe(experts, hidden, max_tokens, topk, np.float32)
    eloc = experts // t.size
    for call in range(2 if t.quick else 3):
        xs, ids, ws = [], [], []
        for r in range(t.size):
            rng = np.random.default_rng(77 + 10 * call + r)
            tokens = max_tokens - (r + call) % 3  # a different count per rank and call
            xs.append(rng.integers(-8, 9, (tokens, hidden)).astype(np.float32))
            ids.append(np.stack([rng.choice(experts, topk, replace=False) for _ in range(tokens)]).astype(
                np.int64 if call % 2 else np.int32))
            ws.append((rng.integers(1, 5, (tokens, topk)) / 4).astype(np.float32))
        t.maybe_late(f"moe {call % 2}")
        recv, count = moe.dispatch(xs[t.rank], ids[t.rank])
        got_counts, want_counts, bad_rows = [], [], 0
        for le in range(eloc):
            ex = t.rank * eloc + le
            rows = [xs[s][tok] for s in range(t.size) for tok in range(len(xs[s])) for k in range(topk)
                    if ids[s][tok, k] == ex]
            got_counts.append(int(count[le]))
            want_counts.append(len(rows))
            if rows and not np.array_equal(recv[le, :len(rows)], np.stack(rows)):
                bad_rows += 1
        t.check(f"moe dispatch call {call} counts", np.array(got_counts), np.array(want_counts))
        t.check(f"moe dispatch call {call} tokens (experts with a wrong row)", np.array(bad_rows), np.array(0))
        # The "experts": expert ex multiplies by ex + 1, in place in recv.
        for le in range(eloc):
            recv[le] *= t.rank * eloc + le + 1
        t.maybe_late(f"moe combine {call % 2}")
        out = moe.combine(recv, ws[t.rank])
        x, i, w = xs[t.rank], ids[t.rank], ws[t.rank]
        want = sum(w[:, k:k + 1] * x * (i[:, k:k + 1] + 1) for k in range(topk)).astype(np.float32)
        t.check(f"moe combine call {call}", out, want)
    t.check("moe no overflow", np.array(moe.overflowed()), np.array(False))


def error_cases(t: Ranks, coll: Collectives) -> None:
    """Bad input is refused on the host, before any launch, with a message
    that names the array and the constraint (every rank refuses alike, so
    the workspace stays usable)."""
    def refused(call, *needles) -> tuple[bool, str]:
        try:
            call()
        except (TypeError, ValueError) as e:
            msg = str(e)
            return all(n in msg for n in needles), msg
        return False, "not refused"

    n = 2 * t.size + 1
    cases = {
        "int32 input": (lambda: coll.all_reduce(np.zeros(8, np.int32)), "input", "int32", "float32"),
        "non-contiguous": (lambda: coll.all_reduce(np.zeros((4, 4), np.float32)[:, 1]), "input", "contiguous"),
        "out size": (lambda: coll.all_reduce(np.zeros(8, np.float32), out=np.zeros(9, np.float32)), "out", "8"),
        "unknown op": (lambda: coll.all_reduce(np.zeros(8, np.float32), "prod"), "op", "'sum'"),
        "unknown variant": (lambda: coll.all_reduce(np.zeros(8, np.float32), variant="ring"), "variant", "'ll'"),
        "ll too large": (lambda: coll.all_reduce(np.zeros(5000, np.float32), variant="ll"), "5000", "ll_bytes"),
        "rs not divisible": (lambda: coll.reduce_scatter(np.zeros(n, np.float32)), str(n), "multiple"),
        "a2a not divisible": (lambda: coll.all_to_all(np.zeros(n, np.float32)), str(n), "multiple"),
        "ag out size": (lambda: coll.all_gather(np.zeros(4, np.float32), out=np.zeros(5, np.float32)), "out"),
        "moe experts": (lambda: coll.moe(t.size * 2 + 1, 8, 4, 2, np.float32), "num_experts", "multiple"),
        "empty input": (lambda: coll.all_reduce(np.zeros(0, np.float32)), "input", "empty"),
    }
    for name, (call, *needles) in cases.items():
        ok, msg = refused(call, *needles)
        t.results.append((f"error {name}", ok, msg))
        t.log(f"{'PASS' if ok else 'FAIL'} error {name}: {msg}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--late", type=float, default=0.0, help="seconds the last rank sleeps before late calls")
    parser.add_argument("--quick", action="store_true", help="fewer sizes (for 3 and 4 ranks on a small machine)")
    parser.add_argument("--only", default="", help="comma-separated case families")
    args = parser.parse_args()
    families = {"all_reduce": all_reduce_cases, "all_gather": all_gather_cases,
                "reduce_scatter": reduce_scatter_cases, "all_to_all": all_to_all_cases, "moe": moe_cases}
    only = [f for f in args.only.split(",") if f] or list(families) + ["errors"]
    with Communicator.from_launcher() as comm:
        t = Ranks(comm, args.late, args.quick)
        # A staging half of 1 KiB and a flag-in-data buffer of 4 KiB: the
        # larger messages take several launches.
        with comm.collectives(Config(stage_bytes=1024, ll_bytes=4096, ll_max_bytes=512,
                                     oneshot_max_bytes=1024)) as coll:
            for name in only:
                if name == "errors":
                    error_cases(t, coll)
                    continue
                families[name](t, coll)
        passed = sum(ok for _, ok, _ in t.results)
        t.log(f"{'PASS' if passed == len(t.results) else 'FAIL'} ops: {passed} of {len(t.results)}")
    sys.exit(0 if passed == len(t.results) else 1)


if __name__ == "__main__":
    main()
