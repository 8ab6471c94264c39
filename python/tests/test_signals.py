# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.language's point-to-point signals: compiled for sm_90 without a GPU
(the calls and their encodings in TTIR, the ordered PTX instructions of the
inlined library, calls never merged), every bad argument as a compile-time
error, and the same kernels under Triton's interpreter on CPU ranks of this
process (values, a wait that times out with the GPU's record, bad indices
and peers). The two-process ping-pong is in test_interpreter.py's style,
through TLE's launcher (signal_ranks.py)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import triton
import triton.language as tl
from triton.compiler.errors import CompilationError

import tle.language as tlx
from tle.language import ORDERS, SIGNAL_GROUP_KINDS
from test_language import extern_calls

PYTHON_DIR = Path(__file__).resolve().parents[1]
SIGNAL_RANKS = PYTHON_DIR / "tests" / "signal_ranks.py"
SIGNAL_ENTRY_POINTS = ("tleTritonSignal", "tleTritonSignalWait", "tleTritonReadSignal", "tleTritonResetSignal")


# Compiled for sm_90.

@triton.jit
def signal_kernel(comm, out, peer, n):
    pid = tl.program_id(0)
    tlx.signal(comm, peer, pid)
    tlx.signal(comm, peer, 3, op="add", value=n)
    tlx.signal(comm, 1, pid, op="add", value=5)
    tlx.signal_wait(comm, pid, 2)
    tlx.signal_wait(comm, 3, n, order="seq_cst")
    v = tlx.read_signal(comm, 3, order="relaxed")
    tlx.reset_signal(comm, pid)
    tl.store(out + pid, v)


SIGNATURE = {"comm": "i64", "out": "*i64", "peer": "i32", "n": "i64"}


def test_every_call_and_its_encoding(compile_kernel):
    out = compile_kernel(signal_kernel, SIGNATURE)
    calls = extern_calls(out.ttir)
    assert [c.symbol for c in calls] == ["tleTritonSignal"] * 3 + ["tleTritonSignalWait"] * 2 + [
        "tleTritonReadSignal", "tleTritonResetSignal"]
    assert all(not c.pure and c.libname == "tle" for c in calls)
    block = SIGNAL_GROUP_KINDS["block"]
    assert calls[0].operands == ["arg:comm", "arg:peer", "program_id", 1, block]  # inc adds 1
    assert calls[1].operands == ["arg:comm", "arg:peer", 3, "arg:n", block]
    assert calls[2].operands == ["arg:comm", 1, "program_id", 5, block]
    assert calls[3].operands == ["arg:comm", "program_id", 2, block, ORDERS["acquire"]]
    assert calls[4].operands == ["arg:comm", 3, "arg:n", block, ORDERS["seq_cst"]]
    assert calls[5].operands == ["arg:comm", 3, ORDERS["relaxed"]]
    assert calls[6].operands == ["arg:comm", "program_id"]


def test_library_is_linked_with_its_ordered_instructions(compile_kernel):
    out = compile_kernel(signal_kernel, SIGNATURE)
    for name in SIGNAL_ENTRY_POINTS:
        assert not re.search(rf"declare .*@{name}\(", out.llir), name
        assert not re.search(rf"\.extern \.func .*{name}", out.ptx), name
    # A signal is one release reduction at system scope on a 64-bit word; a
    # wait polls with acquire (seq_cst adds a fence.sc first); the relaxed
    # read and the reset are relaxed system-scope accesses.
    assert re.search(r"red\.release\.sys\.global\.add\.u64", out.ptx)
    assert re.search(r"ld\.acquire\.sys\.global\.u64", out.ptx)
    assert re.search(r"fence\.sc\.sys", out.ptx)
    assert re.search(r"ld\.relaxed\.sys\.global\.u64", out.ptx)
    assert re.search(r"st\.relaxed\.sys\.global\.u64", out.ptx)
    # No 64-bit add without semantics (what LLVM makes of an ordered atomicrmw).
    assert not re.search(r"(?:atom|red)(?:\.global|\.gpu|\.sys)*\.add\.u64", out.ptx)


@triton.jit
def repeated_kernel(comm, out, N: tl.constexpr):
    total = tl.zeros((), tl.int64)
    for _ in tl.static_range(N):
        tlx.signal(comm, 0, 0)
        total += tlx.read_signal(comm, 0)
    tl.store(out, total)


def test_calls_are_not_pure_and_not_merged(compile_kernel):
    one = compile_kernel(repeated_kernel, {"comm": "i64", "out": "*i64", "N": "constexpr"}, {"N": 1})
    two = compile_kernel(repeated_kernel, {"comm": "i64", "out": "*i64", "N": "constexpr"}, {"N": 2})
    calls = extern_calls(two.ttir)
    assert len(calls) == 4 and not any(c.pure for c in calls)
    signals = [len(re.findall(r"red\.release\.sys\.global\.add\.u64", o.ptx)) for o in (one, two)]
    reads = [len(re.findall(r"ld\.acquire\.sys\.global\.u64", o.ptx)) for o in (one, two)]
    assert signals[0] >= 1 and signals[1] == 2 * signals[0]
    assert reads[0] >= 1 and reads[1] == 2 * reads[0]


@triton.jit
def grouped_kernel(comm, GROUP: tl.constexpr, ORDER: tl.constexpr):
    tlx.signal(comm, 0, 1, group_kind=GROUP)
    tlx.signal_wait(comm, 1, 1, group_kind=GROUP, order=ORDER)


@pytest.mark.parametrize("order", ["relaxed", "acquire", "acq_rel", "seq_cst"])
def test_warp_group_and_every_order(compile_kernel, order):
    out = compile_kernel(grouped_kernel, {"comm": "i64", "GROUP": "constexpr", "ORDER": "constexpr"},
                         {"GROUP": "warp", "ORDER": order}, num_warps=1)
    signal, wait = extern_calls(out.ttir)
    assert signal.operands[-1] == SIGNAL_GROUP_KINDS["warp"] == 1
    assert wait.operands[-2:] == [1, ORDERS[order]]


# Compile-time errors.

@triton.jit
def signal_args_kernel(comm, peer, idx, value, OP: tl.constexpr, GROUP: tl.constexpr):
    tlx.signal(comm, peer, idx, op=OP, value=value, group_kind=GROUP)


@triton.jit
def wait_args_kernel(comm, idx, target, GROUP: tl.constexpr, ORDER: tl.constexpr):
    tlx.signal_wait(comm, idx, target, group_kind=GROUP, order=ORDER)


@triton.jit
def read_args_kernel(comm, out, idx, ORDER: tl.constexpr):
    tl.store(out, tlx.read_signal(comm, idx, order=ORDER))


@triton.jit
def reset_args_kernel(comm, idx):
    tlx.reset_signal(comm, idx)


@contextlib.contextmanager
def raises(exc_type: type[Exception], message: str):
    with pytest.raises(CompilationError, match=message) as info:
        yield info
    assert isinstance(info.value.__cause__, exc_type), repr(info.value.__cause__)


def compile_with(compile_kernel, kernel, runtime: dict[str, str], constants: dict, **options):
    """``runtime`` arguments typed, the rest compile-time constants."""
    signature = dict(runtime)
    for name in constants:
        signature[name] = "constexpr"
    return compile_kernel(kernel, signature, constants, **options)


SIGNAL_GOOD = {"OP": "add", "GROUP": "block"}


@pytest.mark.parametrize("constants, exc_type, message", [
    ({"OP": "set"}, ValueError, r"unknown op 'set': expected one of 'inc', 'add'"),
    ({"OP": "inc"}, ValueError, r"op 'inc' adds 1 and takes no value; use op='add' to add a value"),
    ({"value": None}, ValueError, r"op 'add' needs a value"),
    ({"value": -1}, ValueError, r"value must be in \[0, 2\*\*63\); got -1"),
    ({"value": 2.0}, TypeError, r"value must be an int or a runtime integer scalar; got 2.0"),
    ({"GROUP": "thread"}, ValueError, r"group_kind 'thread' is not available in Triton"),
    ({"GROUP": "grid"}, ValueError, r"signals have no group_kind 'grid'"),
    ({"GROUP": "warp"}, ValueError, r"group_kind 'warp' needs num_warps=1 .*num_warps=4"),
    ({"GROUP": "cta"}, ValueError, r"unknown group_kind 'cta': expected one of 'thread', 'warp', 'block'"),
    ({"idx": -1}, ValueError, r"index must be in \[0, 2\*\*31\); got -1"),
    ({"peer": -2}, ValueError, r"peer must be in \[0, 2\*\*31\); got -2"),
    ({"comm": 5}, TypeError, r"device_dptr must be a kernel argument holding a device address"),
], ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_bad_signal_argument(compile_kernel, constants, exc_type, message):
    runtime = {"comm": "i64", "peer": "i32", "idx": "i32", "value": "i64"}
    for name in constants:
        runtime.pop(name, None)
    with raises(exc_type, message):
        compile_with(compile_kernel, signal_args_kernel, runtime, dict(SIGNAL_GOOD, **constants))


@pytest.mark.parametrize("kernel, runtime, constants, exc_type, message", [
    (wait_args_kernel, {"comm": "i64", "idx": "i32", "target": "i64"}, {"GROUP": "block", "ORDER": "release"},
     ValueError, r"signal_wait cannot release \(it only observes the word\); use order 'relaxed', 'acquire', "
     r"'acq_rel' or 'seq_cst'"),
    (wait_args_kernel, {"comm": "i64", "idx": "i32"}, {"target": -5, "GROUP": "block", "ORDER": "acquire"},
     ValueError, r"target must be in \[0, 2\*\*63\); got -5"),
    (wait_args_kernel, {"comm": "i64", "idx": "i32", "target": "fp32"}, {"GROUP": "block", "ORDER": "acquire"},
     TypeError, r"target must be an integer; got a runtime value of type fp32"),
    (wait_args_kernel, {"comm": "i64", "target": "i64"}, {"idx": 1.5, "GROUP": "block", "ORDER": "acquire"},
     TypeError, r"index must be an int or a runtime int32 scalar; got 1.5"),
    (wait_args_kernel, {"comm": "i64", "idx": "i32", "target": "i64"}, {"GROUP": "grid", "ORDER": "acquire"},
     ValueError, r"signals have no group_kind 'grid'"),
    (read_args_kernel, {"comm": "i64", "out": "*i64", "idx": "i32"}, {"ORDER": "release"},
     ValueError, r"read_signal cannot release"),
    (read_args_kernel, {"comm": "i64", "out": "*i64", "idx": "i64"}, {"ORDER": "acquire"},
     TypeError, r"index must be int32; got a runtime value of type int64"),
    (reset_args_kernel, {"comm": "i64"}, {"idx": -1}, ValueError, r"index must be in \[0, 2\*\*31\); got -1"),
])
def test_bad_wait_read_reset_argument(compile_kernel, kernel, runtime, constants, exc_type, message):
    with raises(exc_type, message):
        compile_with(compile_kernel, kernel, runtime, constants)


# Under Triton's interpreter, on ranks of this process.

np = pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")

from tle import runtime  # noqa: E402
from tle.cpu import Tensor  # noqa: E402
from tle.runtime import Backend, Comm, Result, TLEError  # noqa: E402




@pytest.fixture
def interpret(monkeypatch, host_library):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    return triton.jit


@pytest.fixture
def pair(host_library):
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_signals=8, timeout_ms=300)
    yield comms
    for c in comms:
        c.destroy()


def send(comm, peer, n, INDEX: tl.constexpr):
    tlx.signal(comm, peer, INDEX)
    tlx.signal(comm, peer, INDEX, op="add", value=n)


def receive(comm, out, target, INDEX: tl.constexpr):
    tlx.signal_wait(comm, INDEX, target)
    tl.store(out + 0, tlx.read_signal(comm, INDEX))
    tlx.reset_signal(comm, INDEX)
    tl.store(out + 1, tlx.read_signal(comm, INDEX, order="relaxed"))


def test_signal_wait_read_reset(interpret, pair):
    comms = pair
    # Rank 0 signals rank 1's word 5 twice (1 + 41) from two programs.
    interpret(send)[(2,)](comms[0].dev_comm, 1, 41, INDEX=5)
    assert comms[1].signals(0, 8) == [0, 0, 0, 0, 0, 84, 0, 0]
    assert comms[0].signals(0, 8) == [0] * 8
    out = Tensor(np.zeros(2, np.int64))
    interpret(receive)[(1,)](comms[1].dev_comm, out, 84, INDEX=5)
    assert out.numpy().tolist() == [84, 0]
    assert comms[1].signals(5, 1) == [0]


def wait_only(comm, target, INDEX: tl.constexpr):
    tlx.signal_wait(comm, INDEX, target)


def signal_only(comm, peer, index):
    tlx.signal(comm, peer, index)


def test_device_errors_raise_the_gpu_record(interpret, pair):
    comms = pair
    interpret(send)[(1,)](comms[1].dev_comm, 0, 1, INDEX=2)  # rank 0's word 2 holds 2
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        interpret(wait_only)[(1,)](comms[0].dev_comm, 3, INDEX=2)
    assert 0.3 <= time.monotonic() - start < 10
    e = TLEError.find(info.value)
    assert e is not None and e.code is Result.TIMEOUT, info.value
    assert e.info.rank == 0 and e.info.slot == 2
    assert re.fullmatch(r"rank 0 block 0 thread 0: tle.signal_wait \(tleTritonSignalWait\): signal wait timed out "
                        r"after 3\d\d ms on signal 2: it holds 2, waiting for >= 3", e.info.message), e.info.message
    with pytest.raises(Exception) as info:
        interpret(signal_only)[(1,)](comms[0].dev_comm, 1, 8)
    e = TLEError.find(info.value)
    assert e.code is Result.INDEX_OUT_OF_RANGE
    assert e.info.message == ("rank 0 block 0 thread 0: tle.signal (tleTritonSignal): signal 8 out of range "
                              "(nSignals 8)")
    with pytest.raises(Exception) as info:
        interpret(signal_only)[(1,)](comms[0].dev_comm, 2, 0)
    e = TLEError.find(info.value)
    assert e.code is Result.INVALID_ARGUMENT
    assert e.info.message.endswith("tle.signal (tleTritonSignal): peer 2 is out of range (the communicator has "
                                   "2 ranks)")
    # Nothing was written by the refused calls.
    assert comms[1].signals(0, 8) == [0] * 8
    assert comms[0].signals(0, 8) == [0, 0, 2, 0, 0, 0, 0, 0]


def context_send(comm, peer, index, context):
    tlx.signal(comm, peer, index, op="add", value=5, context=context)


def context_wait(comm, index, target, context):
    tlx.signal_wait(comm, index, target, context=context)


def test_network_contexts_have_their_own_words(interpret, host_library):
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_signals=8, timeout_ms=300, n_contexts=2)
    try:
        interpret(context_send)[(1,)](comms[0].dev_comm, 1, 3, 1)
        # Context 1's word 3, not context 0's (signals() reads context 0).
        assert comms[1].signals(0, 8) == [0] * 8
        interpret(context_wait)[(1,)](comms[1].dev_comm, 3, 5, 1)
        with pytest.raises(Exception) as info:
            interpret(context_wait)[(1,)](comms[1].dev_comm, 3, 6, 1)
        e = TLEError.find(info.value)
        assert e is not None and e.code is Result.TIMEOUT, info.value
        assert re.search(r"timed out after \d+ ms on signal 3 of context 1: it holds 5, waiting for >= 6",
                         e.info.message), e.info.message
    finally:
        for c in comms:
            c.destroy()
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_signals=8, timeout_ms=300, n_contexts=2)
    try:
        with pytest.raises(Exception) as info:
            interpret(context_send)[(1,)](comms[0].dev_comm, 1, 3, 2)
        e = TLEError.find(info.value)
        assert e is not None and e.code is Result.INVALID_ARGUMENT, info.value
        assert e.info.message.endswith("context id 2 is out of range (the communicator has 2 network contexts: "
                                       "tleConfig_t::nContexts)"), e.info.message
        assert comms[1].signals(0, 8) == [0] * 8
    finally:
        for c in comms:
            c.destroy()
    with pytest.raises(ValueError, match=r"n_contexts must be in 1\.\.8"):
        Comm.init_all(2, backend=Backend.EMULATOR, n_contexts=9)


@pytest.mark.parametrize("kwargs, message", [
    ({"GROUP": "thread", "ORDER": "acquire"}, r"group_kind 'thread' is not available in Triton"),
    ({"GROUP": "block", "ORDER": "release"}, r"signal_wait cannot release"),
])
def test_argument_errors_as_when_compiling(interpret, pair, kwargs, message):
    with pytest.raises(Exception) as info:
        interpret(grouped_kernel.fn)[(1,)](pair[0].dev_comm, **kwargs)
    assert isinstance(info.value.__cause__, ValueError), info.value
    assert re.search(message, str(info.value.__cause__)), info.value.__cause__


def run_ranks(n: int, *argv: str, limit: float = 120.0) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning")
    try:
        return subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", str(n), "--grace", "10", *argv],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=limit)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after {limit:.0f} s (a hang):\n{e.stdout}")


def test_ping_pong_between_two_processes(host_library):
    proc = run_ranks(2, str(SIGNAL_RANKS), "pingpong", "--rounds", "20")
    assert proc.returncode == 0, proc.stdout
    for rank in range(2):
        assert f"[rank {rank}] PASS pingpong: 20 rounds" in proc.stdout, proc.stdout


def test_a_signal_that_never_comes_times_out_naming_the_word(host_library):
    proc = run_ranks(2, str(SIGNAL_RANKS), "never", "--timeout-ms", "1000")
    assert proc.returncode == 3, proc.stdout
    assert "[rank 0] done" in proc.stdout, proc.stdout
    report = re.search(r"\[rank 1\] TLE error report after ([\d.]+) s: code=TIMEOUT .*rank 1 block 0 thread 0: "
                       r"tle.signal_wait \(tleTritonSignalWait\): signal wait timed out after \d+ ms on signal 3: "
                       r"it holds 0, waiting for >= 1", proc.stdout)
    assert report and 1.0 <= float(report[1]) < 20, proc.stdout
