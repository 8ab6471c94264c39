# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.ops on CPU ranks and for sm_90.

On 2, 3 and 4 CPU ranks under Triton's interpreter (ops_ranks.py, through
TLE's launcher): every collective against NumPy, sizes that are not
multiples of the tile, repeated calls on one workspace (the staging halves
and flag-in-data numbers alternate on the device), in and out of place,
messages that take several launches, a late last rank (a rank that skips a
wait reads the previous call's data and fails), and the errors bad input
gets. Then every kernel is compiled for sm_90 with every element type, so
a kernel that only the GPU path would reject fails here, and the
flag-in-data kernel is checked to store and poll with the accesses its
protocol needs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")

from tle.ops import all_gather, all_reduce, all_to_all, moe, reduce_scatter  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]
RANKS = PYTHON_DIR / "tests" / "ops_ranks.py"


def run_ranks(n: int, *argv: str, limit: float = 400.0) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning", TLE_BARRIER_TIMEOUT_MS="60000")
    try:
        return subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", str(n), "--grace", "10", str(RANKS),
                               *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after {limit:.0f} s (a hang):\n{e.stdout}")


@pytest.mark.usefixtures("host_library")
@pytest.mark.parametrize("n, quick", [(2, False), (3, True), (4, True)])
def test_every_op_on_cpu_ranks(n, quick):
    start = time.monotonic()
    proc = run_ranks(n, "--late", "0.3", *(["--quick"] if quick else []))
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout
    for rank in range(n):
        final = re.findall(rf"\[rank {rank}\] (PASS|FAIL) ops: (\d+) of (\d+)", proc.stdout)
        assert final and final[-1][0] == "PASS" and int(final[-1][2]) > 40, proc.stdout
    assert "FAIL" not in proc.stdout, proc.stdout
    # Every family ran, with its late call.
    for family in ("all_reduce ll", "all_reduce oneshot", "all_reduce twoshot", "all_reduce auto",
                   "all_gather push", "all_gather pull", "reduce_scatter push", "reduce_scatter pull",
                   "all_to_all", "moe dispatch", "moe combine", "error "):
        assert f"PASS {family}" in proc.stdout, (family, proc.stdout)
    print(f"{n} ranks: {elapsed:.1f} s")


def _signature(fn, dtype: str) -> tuple[dict, dict]:
    """(signature, constexprs) of one tle.ops kernel for element type
    ``dtype``: pointers to data are ``*dtype``, workspace handles i64."""
    names = fn.arg_names
    pointers = {"x": dtype, "out": dtype, "y": dtype, "state": "i64", "idx": "i32", "w": "fp32",
                "recv_count": "i32", "recv_src": "i32"}
    handles = {"stage", "ll", "counts", "recv"} | ({"comb"} if fn is moe.combine_send_kernel else set())
    if fn is moe.combine_reduce_kernel:
        pointers["comb"] = dtype
    i64 = {"half_bytes", "b_off"}
    sig, constexprs = {}, {}
    values = {"OP": 0, "BLOCK": 1024, "MAXG": 256, "INTERP": False, "K": 8, "E": 256, "ELOC": 128, "CAP": 256,
              "PMAX": 1024, "BH": 2048, "BP": 256, "BE": 32}
    for name in names:
        if name in values:
            constexprs[name] = values[name]
            sig[name] = "constexpr"
        elif name == "comm" or name in handles or name in i64:
            sig[name] = "i64"
        elif name in pointers:
            sig[name] = "*" + pointers[name]
        else:
            sig[name] = "i32"
    return sig, constexprs


KERNELS = [all_reduce.oneshot_kernel, all_reduce.twoshot_kernel, all_reduce.ll_kernel, all_gather.push_kernel,
           all_gather.pull_kernel, reduce_scatter.push_kernel, reduce_scatter.pull_kernel, all_to_all.push_kernel,
           moe.dispatch_kernel, moe.combine_send_kernel, moe.combine_reduce_kernel]


def test_the_gpu_launch_shape_follows_the_slots_and_the_sms(monkeypatch):
    """On GPUs the default launch is one program of 4096 elements per SM,
    as far as the communicator's slots from slot_base reach (docs/ops.md,
    "Launch shape"); a shape that needs more slots than there are is
    refused with the n_barriers that would take it."""
    from tle.ops import _host
    from tle.ops import Config
    monkeypatch.setattr(_host, "interpreting", lambda: False)
    cfg = Config().resolved(n_barriers=256, sm_count=132)
    assert (cfg.programs, cfg.block, cfg.num_warps) == (132, 4096, 8)
    assert Config().resolved(n_barriers=64, sm_count=132).programs == 64
    assert Config(slot_base=200).resolved(n_barriers=256, sm_count=132).programs == 56
    assert Config().resolved(n_barriers=256, sm_count=66).programs == 66
    assert Config().resolved(n_barriers=1024, sm_count=1000).programs == _host.MAXG
    assert Config().resolved().programs == 64  # unknown: the communicators' default slots
    with pytest.raises(ValueError, match=r"exceeds the communicator's 64 barrier slots: pass n_barriers=96"):
        Config(programs=32, slot_base=64).resolved(n_barriers=64)
    with pytest.raises(ValueError, match=r"pass n_barriers=140"):
        Config(programs=132, slot_base=8).resolved(n_barriers=128, sm_count=132)
    # Under the interpreter the CPU ranks' shape stays 2 x 64.
    monkeypatch.setattr(_host, "interpreting", lambda: True)
    cfg = Config().resolved(n_barriers=256, sm_count=132)
    assert (cfg.programs, cfg.block, cfg.num_warps) == (2, 64, 1)


@pytest.mark.usefixtures("host_library")
def test_every_call_launches_the_same_arguments():
    """What a CUDA graph replays: the same kernels with the same arguments.
    Every operation called twice on one workspace must launch exactly what
    it launched the first time (the epochs are read on the device), or a
    replayed graph would repeat the first call's epoch."""
    np = pytest.importorskip("numpy")
    from tle.cpu import Communicator
    from tle.ops import Collectives, Config
    from tle.runtime import get_unique_id

    def key(args, kwargs):
        def one(a):
            return ("ptr", a.data_ptr()) if hasattr(a, "data_ptr") else a
        return tuple(one(a) for a in args), tuple(sorted((k, one(v)) for k, v in kwargs.items()))

    with Communicator.init_rank(1, get_unique_id(), 0) as comm:
        coll = Collectives(comm, Config(programs=2, block=64, stage_bytes=1024, ll_bytes=4096))
        moe_op = coll.moe(4, 8, 4, 2, np.float32)
        x = np.ones(300, np.float32)
        out = np.empty_like(x)
        tokens, idx = np.ones((3, 8), np.float32), np.zeros((3, 2), np.int32)
        idx[:, 1] = 1
        w = np.ones((3, 2), np.float32)
        launches = []

        class Recorder:
            def __init__(self, name):
                self.name = name

            def __getitem__(self, grid):
                return lambda *a, **k: launches.append((self.name, grid, key(a, k)))

        calls = {
            "all_reduce ll": lambda: coll.all_reduce(x[:100], out=out[:100], variant="ll"),
            "all_reduce oneshot": lambda: coll.all_reduce(x, out=out, variant="oneshot"),
            "all_reduce twoshot": lambda: coll.all_reduce(x, out=out, variant="twoshot"),
            "all_gather": lambda: coll.all_gather(x, out=out),
            "reduce_scatter": lambda: coll.reduce_scatter(x, out=out, variant="pull"),
            "all_to_all": lambda: coll.all_to_all(x, out=out),
            "moe": lambda: moe_op.combine(moe_op.dispatch(tokens, idx)[0], w),
        }
        import tle.ops.all_gather as ag
        import tle.ops.all_reduce as ar
        import tle.ops.all_to_all as a2a
        import tle.ops.moe as moe_module
        import tle.ops.reduce_scatter as rs
        modules = {m: {n: getattr(m, n) for n in dir(m) if n.endswith("_kernel")} for m in (ar, ag, rs, a2a,
                                                                                           moe_module)}
        try:
            for m, kernels in modules.items():
                for n in kernels:
                    setattr(m, n, Recorder(n))
            for name, call in calls.items():
                launches.clear()
                call()
                first = list(launches)
                launches.clear()
                call()
                assert first and launches == first, name
        finally:
            for m, kernels in modules.items():
                for n, k in kernels.items():
                    setattr(m, n, k)
        coll.close()


# Every kernel in bf16 (the benchmark's type); the flag-in-data kernel,
# whose packing depends on the type, and the one-shot in every type.
CASES = [(k, "bf16") for k in KERNELS] + [(k, t) for k in (all_reduce.ll_kernel, all_reduce.oneshot_kernel)
                                          for t in ("fp32", "fp16")]


@pytest.mark.parametrize("kernel, dtype", CASES,
                         ids=[f"{k.fn.__module__.split('.')[-1]}.{k.fn.__name__}-{t}" for k, t in CASES])
def test_kernels_compile_for_sm90(compile_kernel, kernel, dtype):
    sig, constexprs = _signature(kernel, dtype)
    # Aligned as the launches' tensors and sizes are (multiples of 16).
    aligned = tuple(a for a in sig if sig[a] != "constexpr" and a not in ("comm", "slot", "T", "idx"))
    out = compile_kernel(kernel, sig, constexprs, aligned=aligned, num_warps=8)
    assert ".entry" in out.ptx
    if dtype == "bf16" and kernel not in (all_reduce.ll_kernel, moe.dispatch_kernel):
        # Peer and staging pointers come from integers (intra_pointer):
        # device.typed tells Triton their alignment, so nothing moves 2
        # bytes at a time.
        scalar = re.findall(r"(?:ld|st)\.global(?:\.\w+)*\.b16", out.ptx)
        assert not scalar, f"{len(scalar)} scalar 16-bit accesses: {scalar[:4]}"
    if kernel is all_reduce.ll_kernel:
        # Each flag-in-data word is stored whole at system scope and polled
        # with volatile loads (never served from a stale L1 line).
        assert re.search(r"st\.relaxed\.sys\.global\.b64", out.ptx), out.ptx[:2000]
        assert re.search(r"ld\.volatile\.global(\.v\d)?\.b64", out.ptx)
    if kernel in (all_reduce.oneshot_kernel, all_reduce.twoshot_kernel):
        assert "tleTritonBarrier" in out.ttir
