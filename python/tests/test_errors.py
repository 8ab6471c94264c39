# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every bad argument of a tle.language function is a compile-time error
with a message that names the argument and what is allowed."""

from __future__ import annotations

import contextlib

import pytest
import triton
import triton.language as tl
from triton.compiler.errors import CompilationError

import tle.language as tlx


@triton.jit
def barrier_kernel(comm, idx, SPACE: tl.constexpr, KIND: tl.constexpr, GROUP: tl.constexpr, ORDER: tl.constexpr):
    tlx.distributed_barrier(comm, space=SPACE, barrier_kind=KIND, group_kind=GROUP, order=ORDER, index=idx)


@contextlib.contextmanager
def raises(exc_type: type[Exception], message: str):
    """Expect Triton's CompilationError at the call, caused by ``exc_type``
    raised by tle.language with a message matching ``message``."""
    with pytest.raises(CompilationError, match=message) as info:
        yield info
    assert isinstance(info.value.__cause__, exc_type), repr(info.value.__cause__)


GOOD = {"SPACE": "device", "KIND": "sync", "GROUP": "block", "ORDER": "acq_rel"}


def compile_barrier(compile_kernel, comm="i64", idx="i32", constants=None, **options):
    constexprs = dict(GOOD, **(constants or {}))
    signature = {"comm": comm, "idx": idx, **{k: "constexpr" for k in GOOD}}
    for name in ("comm", "idx"):
        if name in constexprs:
            signature[name] = "constexpr"
    return compile_kernel(barrier_kernel, signature, constexprs, **options)


@pytest.mark.parametrize("constants, exc_type, message", [
    ({"SPACE": "node"}, ValueError, r"unknown space 'node': expected one of 'device'"),
    ({"SPACE": "host"}, ValueError, r"unknown space 'host'"),
    ({"SPACE": 0}, TypeError, r"space must be a compile-time string.*got 0"),
    ({"KIND": "signal"}, ValueError, r"unknown barrier_kind 'signal': expected one of 'arrive', 'wait', 'sync'"),
    ({"GROUP": "tile_span"}, ValueError,
     r"unknown group_kind 'tile_span': expected one of 'thread', 'warp', 'block', 'grid'"),
    ({"GROUP": "cta"}, ValueError, r"unknown group_kind 'cta'"),
    ({"GROUP": "thread"}, ValueError, r"group_kind 'thread' is not available in Triton"),
    ({"GROUP": "warp"}, ValueError, r"group_kind 'warp' needs num_warps=1 .*num_warps=4"),
    ({"GROUP": "grid"}, ValueError,
     r"group_kind 'grid' needs a co-resident launch: pass launch_cooperative_grid=True"),
    ({"ORDER": "acquire_release"}, ValueError, r"unknown order 'acquire_release': expected one of 'relaxed', 'acquire', "
     r"'release', 'acq_rel', 'seq_cst'"),
    ({"ORDER": 3}, TypeError, r"order must be a compile-time string"),
    ({"idx": -1}, ValueError, r"index must be in \[0, 2\*\*31\); got -1"),
    ({"idx": 2**31}, ValueError, r"index must be in \[0, 2\*\*31\)"),
    ({"idx": 1.5}, TypeError, r"index must be an int or a runtime int32 scalar; got 1.5"),
    ({"comm": 1234}, TypeError, r"device_dptr must be a kernel argument holding a device address.*"
     r"not the compile-time constant 1234"),
], ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_bad_barrier_argument(compile_kernel, constants, exc_type, message):
    with raises(exc_type, message):
        compile_barrier(compile_kernel, constants=constants)


@pytest.mark.parametrize("idx_type, message", [
    ("i64", r"index must be int32; got a runtime value of type int64 \(convert it with .to\(tl.int32\)\)"),
    ("u32", r"index must be int32; got a runtime value of type uint32"),
    ("fp32", r"index must be int32; got a runtime value of type fp32"),
])
def test_index_must_be_int32(compile_kernel, idx_type, message):
    with raises(TypeError, message):
        compile_barrier(compile_kernel, idx=idx_type)


@pytest.mark.parametrize("comm_type", ["fp32", "i16", "i1"])
def test_comm_must_be_an_address(compile_kernel, comm_type):
    with raises(TypeError, r"device_dptr must be an integer address \(int64\) or a pointer"):
        compile_barrier(compile_kernel, comm=comm_type)


def test_unlinked_library_is_reported(compile_kernel):
    with raises(ValueError, r"not linked: launch it with extern_libs=tle.extern_libs\(\)"):
        compile_barrier(compile_kernel, link=False)


@triton.jit
def block_index_kernel(comm):
    tlx.distributed_barrier(comm, index=tl.arange(0, 32))


def test_index_must_be_a_scalar(compile_kernel):
    with raises(TypeError, r"index must be a scalar, not a block of shape \[32\]"):
        compile_kernel(block_index_kernel, {"comm": "i64"})


@triton.jit
def runtime_kind_kernel(comm, kind):
    tlx.distributed_barrier(comm, barrier_kind=kind)


def test_kind_must_be_a_compile_time_string(compile_kernel):
    with raises(TypeError, r"barrier_kind must be a compile-time string.*"
                       r"got a runtime value of type int32"):
        compile_kernel(runtime_kind_kernel, {"comm": "i64", "kind": "i32"})


@triton.jit
def pointer_kernel(mem, offset, peer, DTYPE: tl.constexpr):
    tlx.intra_pointer(mem, offset, peer, dtype=DTYPE)


@pytest.mark.parametrize("signature, constants, exc_type, message", [
    ({"offset": "fp32"}, {}, TypeError, r"offset must be an integer \(bytes\); got a runtime value of type fp32"),
    ({"offset": "constexpr"}, {"offset": -8}, ValueError, r"offset must be a non-negative number of bytes; got -8"),
    ({"peer": "i64"}, {}, TypeError, r"peer must be int32; got a runtime value of type int64"),
    ({"peer": "constexpr"}, {"peer": -1}, ValueError, r"peer must be in \[0, 2\*\*31\); got -1"),
    ({"mem": "constexpr"}, {"mem": 0}, TypeError, r"mem must be a kernel argument holding a device address"),
    ({}, {"DTYPE": "float32"}, TypeError,
     r"dtype must be a Triton element type such as tl.float32, or None; got 'float32'"),
    ({}, {"DTYPE": tl.pointer_type(tl.float32)}, TypeError, r"dtype must be a Triton element type"),
])
def test_bad_pointer_argument(compile_kernel, signature, constants, exc_type, message):
    full = {"mem": "i64", "offset": "i64", "peer": "i32", "DTYPE": "constexpr", **signature}
    with raises(exc_type, message):
        compile_kernel(pointer_kernel, full, {"DTYPE": tl.float32, **constants})


@triton.jit
def rank_kernel(comm, out):
    tl.store(out, tlx.intra_rank(comm) + tlx.intra_size(comm))


def test_rank_needs_an_address(compile_kernel):
    with raises(TypeError, r"comm must be an integer address \(int64\) or a pointer; "
                       r"got a runtime value of type fp32"):
        compile_kernel(rank_kernel, {"comm": "fp32", "out": "*i32"})
