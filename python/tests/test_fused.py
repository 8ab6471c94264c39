# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The fused GEMM operators of tle.ops (ag_gemm, gemm_rs, gemm_ar) on CPU
ranks and for sm_90.

On 2 and 4 CPU ranks under Triton's interpreter (fused_ranks.py, through
TLE's launcher): every operator against NumPy, exactly (small integers),
shapes that are not multiples of the tile, three calls on one plan (the
words count calls on the device), a late last rank (its peers must wait for
its data: a GEMM that skips a chunk's wait reads stale rows) that also
holds between its kernels (its peers must not overwrite what it has not
read: a push or a GEMM that skips the release wait fails), and the unfused
path below ``min_flops``, and that two calls launch the same kernels with
the same arguments (what a CUDA graph replays). A tile configuration that differs on one rank
raises the clear error on every rank instead of hanging. Then every kernel
is compiled for sm_90 in bf16 and fp16, and the GEMM is checked to be the
tensor-core one (wgmma).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")

from tle.ops import Fused, FusedConfig, fused  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]
RANKS = PYTHON_DIR / "tests" / "fused_ranks.py"


def run_ranks(n: int, *argv: str, limit: float = 300.0, marks: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning", TLE_BARRIER_TIMEOUT_MS="60000")
    try:
        return subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", str(n), "--grace", "10", str(RANKS),
                               *argv, *(["--marks", str(marks)] if marks else [])], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after {limit:.0f} s (a hang):\n{e.stdout}")


def passed(proc: subprocess.CompletedProcess, n: int, at_least: int) -> None:
    assert proc.returncode == 0, proc.stdout
    assert "FAIL" not in proc.stdout, proc.stdout
    for rank in range(n):
        final = re.findall(rf"\[rank {rank}\] PASS fused: (\d+) of (\d+)", proc.stdout)
        assert final and int(final[-1][1]) >= at_least, proc.stdout


@pytest.mark.usefixtures("host_library")
@pytest.mark.parametrize("n, quick", [(2, False), (4, True)])
def test_fused_ops_on_cpu_ranks(n, quick, tmp_path):
    """Everything on 2 ranks; on 4 the operators' calls and errors only
    (``--quick --lean``: the rest does not depend on the number of ranks,
    and 4 interpreted ranks share 2 cores in CI)."""
    proc = run_ranks(n, "--late", "0.4", *(["--quick", "--lean"] if quick else []), marks=tmp_path)
    passed(proc, n, 15 if quick else 30)
    for name in ("ag_gemm 20x24x40 call 2", "gemm_rs 36x20x24 call 2", "gemm_ar 18x16x33 call 2"):
        assert proc.stdout.count(f"PASS {name}") == n, (name, proc.stdout)
    assert proc.stdout.count("PASS error ") == 6 * n, proc.stdout
    if quick:
        return
    assert "PASS ag_gemm 16x32x16 call 2" in proc.stdout, proc.stdout
    for op in ("ag_gemm", "gemm_rs", "gemm_ar"):
        assert proc.stdout.count(f"PASS {op} unfused (fused=False)") == n, proc.stdout
        assert proc.stdout.count(f"PASS {op} replays the same launches") == n, proc.stdout
        assert proc.stdout.count(f"PASS {op} words reused call 1") == n, proc.stdout


@pytest.mark.usefixtures("host_library")
def test_a_configuration_that_differs_on_one_rank_raises_on_every_rank():
    proc = run_ranks(2, "--mismatch", limit=60.0)
    passed(proc, 2, 1)
    assert proc.stdout.count("PASS mismatch raises: gemm_ar: the ranks chose different tile configurations") == 2


def test_configuration_is_a_function_of_the_global_problem():
    """What the ranks agree on without talking: the same inputs give the
    same configuration, and the choice follows the shape."""
    a = fused.choose("gemm_rs", 8192, 8192, 28672, 2, "bfloat16", 132, False)
    assert a == fused.choose("gemm_rs", 8192, 8192, 28672, 2, "bfloat16", 132, False)
    assert a.fused and a.bn == 256 and a.programs == 132
    narrow = fused.choose("ag_gemm", 4096, 1024, 8192, 2, "bfloat16", 132, False)
    # The push's SMs are left free: the GEMM never holds every SM.
    assert narrow.bn == 128 and narrow.programs + narrow.push_programs == 132
    assert not fused.choose("gemm_ar", 64, 64, 64, 2, "bfloat16", 132, False).fused
    with pytest.raises(ValueError, match="rb .* must divide bm"):
        FusedConfig(bm=16, bn=16, bk=16, group_m=1, num_warps=1, num_stages=1, programs=1, push_programs=1,
                    chunks=1, block=64, rb=32, cb=16).check()


def _sig(kernel, dtype: str, tma: bool = False, bn: int = 256) -> tuple[dict, dict]:
    pointers = {"a", "b", "c", "out", "ag_local", "stage_local", "ag", "dig_local", "seen"}
    handles = {"comm", "stage"}
    if kernel is not fused.ag_gemm_kernel:
        handles.add("ag")
    values = {"CHUNKS": 4, "BLOCK": 4096, "MAXG": 256, "BM": 128, "BN": bn, "BK": 64, "GROUP_M": 8,
              "EVEN_K": True, "WAIT": True, "ALL": False, "RB": 32, "CB": 256, "TMA": tma}
    descs = {"a_d": "[128,64]", "ag_d": "[128,64]", "b_d": f"[64,{bn}]"}
    sig, constexprs = {}, {}
    for name in kernel.arg_names:
        if name in descs:
            if tma:
                sig[name] = f"tensordesc<{dtype}{descs[name]}>"
            else:
                sig[name], constexprs[name] = "constexpr", None
        elif name in values:
            sig[name], constexprs[name] = "constexpr", values[name]
        elif name in handles or name in ("dig", "value"):
            sig[name] = "i64"
        elif name in ("state", "dig_local", "seen"):
            sig[name] = "*i64"
        elif name in pointers:
            sig[name] = "*" + dtype
        else:
            sig[name] = "i32"
    return sig, constexprs


GEMMS = [fused.ag_gemm_kernel, fused.gemm_push_kernel, fused._gemm_tiles]
CASES = ([(k, t, False) for k in GEMMS for t in ("bf16", "fp16")] + [(k, "bf16", True) for k in GEMMS]
         + [(k, "bf16", False) for k in (fused.push_kernel, fused.reduce_kernel, fused.release_kernel,
                                         fused.digest_kernel, fused.reset_words_kernel)])


@pytest.mark.parametrize("kernel, dtype, tma", CASES,
                         ids=[f"{k.fn.__name__}-{t}{'-tma' if m else ''}" for k, t, m in CASES])
def test_fused_kernels_compile_for_sm90(compile_kernel, kernel, dtype, tma):
    sig, constexprs = _sig(kernel, dtype, tma)
    aligned = tuple(a for a in sig if sig[a] not in ("constexpr",) and not sig[a].startswith("tensordesc")
                    and a not in ("comm", "word0", "e"))
    out = compile_kernel(kernel, sig, constexprs, aligned=aligned, num_warps=8, num_stages=3)
    assert ".entry" in out.ptx
    if kernel in GEMMS:
        # Hopper's tensor cores, fed from shared memory by async copies
        # (TMA's bulk tensor copies with tma).
        assert "wgmma.mma_async" in out.ptx, "the GEMM did not lower to wgmma"
        assert ("cp.async.bulk.tensor" if tma else "cp.async") in out.ptx
    if kernel in (fused.ag_gemm_kernel, fused.gemm_push_kernel):
        assert "tleTritonSignal" in out.ttir or "tleTritonSignalWait" in out.ttir
    if kernel in (fused.digest_kernel, fused.reset_words_kernel):
        assert "tleTritonBarrier" in out.ttir
    if kernel is fused.reset_words_kernel:
        assert "tleTritonResetSignal" in out.ttir


#: Hopper configurations that choose() gives, one per distinct tile and
#: stage count: (kernel, op, tma, n) at 2 ranks, K = 8192, M = 4096.
FIT = [(fused.ag_gemm_kernel, "ag_gemm", t, n) for t in (False, True) for n in (1024, 2048, 14336)] + \
      [(fused.gemm_push_kernel, "gemm_rs", t, n) for t in (False, True) for n in (1024, 2048, 14336)]


@pytest.mark.parametrize("kernel, op, tma, n", FIT, ids=[f"{o}-n{n}{'-tma' if t else ''}" for _, o, t, n in FIT])
def test_chosen_gemm_fits_in_shared_memory(compile_kernel, kernel, op, tma, n):
    """The configuration choose() gives compiles to a block that fits in
    Hopper's shared memory (TMA's ag_gemm has two rings of stages: at 3 it
    needed 288 KiB, and the launch failed with OutOfResources)."""
    cfg = fused.choose(op, 4096, n, 8192, 2, "bf16", 132, interp=False, tma=tma)
    sig, constexprs = _sig(kernel, "bf16", cfg.tma, bn=cfg.bn)
    aligned = tuple(a for a in sig if sig[a] not in ("constexpr",) and not sig[a].startswith("tensordesc")
                    and a not in ("comm", "word0", "e"))
    out = compile_kernel(kernel, sig, constexprs, aligned=aligned, num_warps=cfg.num_warps,
                         num_stages=cfg.num_stages)
    assert 0 < out.shared <= fused.SMEM_PER_BLOCK, (cfg, out.shared)
