# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The kernels of the GPU tests (python/tests_gpu/kernels.py) compile for
sm_90 in every configuration the GPU run launches, so a mistake in them
shows here rather than on the GPU machine."""

from __future__ import annotations

import re
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
    assert out.ttir.count('symbol = "tleTritonBarrierAt"') == 3


@pytest.mark.parametrize("skip", [0, 1])
def test_timeout_kernel_compiles(compile_kernel, skip):
    # Triton may specialize an int argument equal to 1 into a constant; then
    # rank 1's kernel has no barrier at all, which is what that rank wants.
    out = compile_kernel(kernels.maybe_barrier_kernel, {"comm": "i64", "skip": "i32" if skip == 0 else "constexpr"},
                         {} if skip == 0 else {"skip": 1})
    assert out.ttir.count('symbol = "tleTritonBarrierAt"') == (1 if skip == 0 else 0)


def test_benchmark_kernel_compiles(compile_kernel):
    out = compile_kernel(kernels.barrier_loop_kernel, {"comm": "i64", "times": "*i64", "n_iters": "i32"})
    assert out.ttir.count('symbol = "tleTritonBarrierAt"') == 2
    # Issue 10: the loop's barrier reuses the communicator fields loaded and
    # checked for the first one instead of reloading them every round. That
    # needs the calls inlined (two call sites: the bitcode marks its exports
    # always_inline), and then the communicator's address is chosen once
    # (null reads kNullDevComm) and its header loaded once, with the 64-bit
    # pair at offset 0 (magic, version) in the kernel body exactly once.
    body = out.llir[out.llir.index("define ptx_kernel"):]
    body = body[:body.index("\n}\n")]
    assert "call fastcc void @tleTritonBarrierAt" not in body and "@tleTritonBarrierAt(" not in body
    chosen = re.findall(r"(%[\w.]+) = select i1 [^\n]*kNullDevComm[^\n]*", body)
    assert len(chosen) == 1, f"the communicator is chosen {len(chosen)} times"
    cast = re.search(r"(%[\w.]+) = addrspacecast ptr " + re.escape(chosen[0]) + r" to ptr addrspace\(1\)", body)
    assert cast, "no global-space view of the communicator"
    header = re.findall(r"= load i64, ptr addrspace\(1\) " + re.escape(cast.group(1)) + r",[^\n]*invariant\.load", body)
    assert len(header) == 1, f"the communicator's header is loaded {len(header)} times"
    assert out.ptx.count("red.release.sys") >= 1 and "ld.acquire.sys" in out.ptx


def test_peer_read_kernel_compiles(compile_kernel):
    signature = {"comm": "i64", "mem": "i64", "errors": "*i32", "n_iters": "i32", "BLOCK": "constexpr"}
    out = compile_kernel(kernels.peer_read_kernel, signature, {"BLOCK": kernels.BLOCK})
    assert out.ttir.count('symbol = "tleTritonBarrierAt"') == 2
    assert out.ttir.count('symbol = "tleTritonIntraPointer"') == 1


@pytest.mark.parametrize("case", kernels.PINGPONG_CASES, ids=lambda c: c[0])
def test_pingpong_kernel_compiles(compile_kernel, case):
    _, _, num_warps, group = case
    signature = {"comm": "i64", "mem": "i64", "errors": "*i32", "n_rounds": "i32", "first": "i64",
                 "word0": "i32", "BLOCK": "constexpr", "GROUP": "constexpr"}
    out = compile_kernel(kernels.pingpong_kernel, signature, {"BLOCK": 256, "GROUP": group}, num_warps=num_warps)
    assert out.ttir.count('symbol = "tleTritonSignalAt"') == 2
    assert out.ttir.count('symbol = "tleTritonSignalWaitAt"') == 2


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import ag_gemm  # noqa: E402  (python/examples/ag_gemm.py)


@pytest.mark.parametrize("bn", [128, 256])
def test_ag_gemm_kernels_compile(compile_kernel, bn):
    # The showcase's kernels as ag_gemm_bench.py launches them on H200 (bf16).
    cfg = ag_gemm.Config(bn=bn)
    common = {"CHUNK": 128, "CHUNKS_": ag_gemm.CHUNKS}
    gemm_sig = {"comm": "i64", "ag": "i64", "a": "*bf16", "b": "*bf16", "c": "*bf16", "epoch": "i64", "M": "i32",
                "N": "i32", "K": "i32", "CHUNK": "constexpr", "CHUNKS_": "constexpr", "BM": "constexpr",
                "BN": "constexpr", "BK": "constexpr", "GROUP_M": "constexpr", "WAIT": "constexpr"}
    tiles = {"BM": cfg.bm, "BN": cfg.bn, "BK": cfg.bk, "GROUP_M": cfg.group_m}
    # As a launch with torch tensors and the benchmark's sizes specializes.
    aligned = ("a", "b", "c", "M", "N", "K")
    fused = compile_kernel(ag_gemm.gemm_kernel, gemm_sig, {**common, **tiles, "WAIT": True}, aligned=aligned,
                           num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    assert fused.ttir.count('symbol = "tleTritonSignalWaitAt"') == 1
    # Hopper's tensor-core MMA: the GEMM is a real one, not a fallback.
    assert "wgmma" in fused.ptx
    alone = compile_kernel(ag_gemm.gemm_kernel, gemm_sig, {**common, **tiles, "WAIT": False}, aligned=aligned,
                           num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    assert "tleTritonSignalWait" not in alone.ttir and "wgmma" in alone.ptx
    # A and B tiles are copied 16 bytes at a time (cp.async), never loaded
    # element by element: the gather buffer's alignment reaches Triton.
    for out in (fused, alone):
        assert not re.search(r"ld\.global[\w.]*\.b16", out.ptx)
        assert re.search(r"cp\.async\.cg\.shared\.global [^\n]*, 0x10", out.ptx)
    push_sig = {"comm": "i64", "ag": "i64", "a": "*bf16", "epoch": "i64", "M": "i32", "K": "i32",
                "CHUNK": "constexpr", "CHUNKS_": "constexpr", "RB": "constexpr", "KB": "constexpr"}
    push = compile_kernel(ag_gemm.push_kernel, push_sig, {**common, "RB": cfg.rb, "KB": cfg.kb})
    assert push.ttir.count('symbol = "tleTritonSignalAt"') == 1
    assert push.ttir.count('symbol = "tleTritonSignalWaitAt"') == 1
    release = compile_kernel(ag_gemm.release_kernel, {"comm": "i64", "CHUNKS_": "constexpr"},
                             {"CHUNKS_": ag_gemm.CHUNKS})
    assert release.ttir.count('symbol = "tleTritonSignalAt"') == 1


def test_abort_latency_kernel_compiles(compile_kernel):
    out = compile_kernel(kernels.blocked_kernel, {"comm": "i64", "out": "*i32"})
    assert out.ttir.count('symbol = "tleTritonSignalWaitAt"') == 1
    assert out.ttir.count('symbol = "tleTritonCommFailed"') == 1
