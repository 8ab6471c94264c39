"""The kernels of the GPU tests (python/tests_gpu/kernels.py) compile for
sm_90 in every configuration the GPU run launches, so a mistake in them
shows here rather than on the GPU machine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests_gpu"))

import kernels  # noqa: E402  (python/tests_gpu/kernels.py)


@pytest.mark.parametrize("case", kernels.EXCHANGE_CASES, ids=lambda c: c[0])
def test_exchange_kernel_compiles(compile_kernel, case):
    _, _, num_warps, group, shift, options = case
    signature = {"comm": "i64", "mem": "i64", "errors": "*i32", "n_iters": "i32", "BLOCK": "constexpr",
                 "GROUP": "constexpr", "SHIFT": "constexpr"}
    out = compile_kernel(kernels.exchange_kernel, signature,
                         {"BLOCK": kernels.BLOCK, "GROUP": group, "SHIFT": shift}, num_warps=num_warps, **options)
    assert out.ttir.count('symbol = "tleTritonBarrier"') == 3


@pytest.mark.parametrize("skip", [0, 1])
def test_timeout_kernel_compiles(compile_kernel, skip):
    # Triton may specialize an int argument equal to 1 into a constant; then
    # rank 1's kernel has no barrier at all, which is what that rank wants.
    out = compile_kernel(kernels.maybe_barrier_kernel, {"comm": "i64", "skip": "i32" if skip == 0 else "constexpr"},
                         {} if skip == 0 else {"skip": 1})
    assert out.ttir.count('symbol = "tleTritonBarrier"') == (1 if skip == 0 else 0)


def test_benchmark_kernel_compiles(compile_kernel):
    out = compile_kernel(kernels.barrier_loop_kernel, {"comm": "i64", "n_iters": "i32"})
    assert out.ttir.count('symbol = "tleTritonBarrier"') == 1
