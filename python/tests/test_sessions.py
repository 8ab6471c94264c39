# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Barrier sessions in Triton (tle.language.session_open, distributed_barrier
with session=, session_close; tle.flagtree's): the session is a tuple of an
int64 state and the int32 slot that Triton's loops carry (the slot as an
invariant), so the compiled loop reads the slot's epoch word once,
at the open in front of the loop, and only stores it in each round, as the
C++ session does (the PTX checked for sm_90 without a GPU); bad
arguments as compile-time errors; and on CPU ranks under the interpreter, a
mix of stateless barriers and sessions on the same slots over several
launches, every round's data checked (session_ranks.py, through TLE's
launcher)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton
import triton.language as tl
from triton.compiler.errors import CompilationError

import tle.flagtree as ft
import tle.language as tlx
from test_language import extern_calls

PYTHON_DIR = Path(__file__).resolve().parents[1]
SESSION_RANKS = PYTHON_DIR / "tests" / "session_ranks.py"


@triton.jit
def session_loop(comm, out, n):
    s = tlx.session_open(comm)
    for _ in range(n):
        s = tlx.distributed_barrier(comm, session=s)
    tl.store(out + tl.program_id(0), tlx.session_close(comm, s))


@triton.jit
def stateless_loop(comm, out, n):
    for _ in range(n):
        tlx.distributed_barrier(comm)
    tl.store(out + tl.program_id(0), 0)


@triton.jit
def flagtree_session_loop(comm, out, n):
    s = ft.session_open(comm, index=3)
    for _ in range(n):
        s = ft.distributed_barrier(device_dptr=comm, space="device", session=s)
    tl.store(out + tl.program_id(0), ft.session_close(comm, s))


SIGNATURE = {"comm": "i64", "out": "*i32", "n": "i32"}


def entry_ops(ptx: str) -> dict[str, int]:
    """How often each ordered instruction, fence and barrier occurs in the
    PTX's entry (loads of the communicator, ld.global.nc, excluded)."""
    body = re.search(r"\.entry \w+\((?:.|\n)*?\n\{\n((?:.|\n)*?)\n\}", ptx)
    assert body, ptx
    counts: dict[str, int] = {}
    for m in re.finditer(r"^\s+((?:ld|st|red|atom|fence|bar)\.[\w.]+)", body[1], re.M):
        op = m[1]
        if op.startswith(("ld.global.nc", "ld.param", "st.param")) or ".local" in op:
            continue
        counts[op] = counts.get(op, 0) + 1
    return counts


def entry_order(ptx: str) -> list[str]:
    """The entry's ordered instructions and barriers in program order (as
    entry_ops counts them)."""
    body = re.search(r"\.entry \w+\((?:.|\n)*?\n\{\n((?:.|\n)*?)\n\}", ptx)
    assert body, ptx
    ops = [m[1] for m in re.finditer(r"^\s+((?:ld|st|red|atom|fence|bar)\.[\w.]+)", body[1], re.M)]
    return [op for op in ops if not op.startswith(("ld.global.nc", "ld.param", "st.param")) and ".local" not in op]


def test_session_loop_carries_the_epoch_and_reads_its_word_once(compile_kernel):
    k = compile_kernel(session_loop, SIGNATURE)
    # The calls, in order: open (block 2, the program's slot), the loop's
    # sync (kind 2, block 2, acq_rel 3, the carried session), the close.
    calls = [c.symbol for c in extern_calls(k.ttir)]
    assert calls == ["tleTritonSessionOpen", "tleTritonSession", "tleTritonSessionClose"], calls
    # Triton's loop carries the session's state as its one i64 iter_arg:
    # the slot, yielded unchanged, is an invariant, not carried.
    assert re.search(r"scf\.for .* iter_args\(%\w+ = %\w+\) -> \(i64\)", k.ttir), k.ttir
    ops = entry_ops(k.ptx)
    # The epoch word: one load, at the open; one store, group rank 0's of
    # the next epoch in each round between its signal and its poll. The loop
    # signals (a session stores the count it knows: one release store per
    # round with two ranks' one worker, no reduction) and polls with acquire
    # (twice: the first poll is peeled off the miss loop).
    assert ops.get("ld.relaxed.gpu.global.u32") == 1, ops
    assert ops.get("st.relaxed.gpu.global.u32") == 1, ops
    assert ops.get("st.release.sys.global.u32") == 1, ops
    assert "red.release.sys.global.add.u32" not in ops, ops
    assert ops.get("ld.acquire.sys.global.u32") == 2, ops
    order = entry_order(k.ptx)
    first_sync = order.index("bar.sync")
    assert order.index("ld.relaxed.gpu.global.u32") < first_sync, order
    assert order.index("st.release.sys.global.u32") < order.index("st.relaxed.gpu.global.u32") \
        < order.index("ld.acquire.sys.global.u32"), order
    # The stateless loop reads the word in every round, after the group's
    # sync, and writes it back after its poll: one load and two stores (one
    # per worker-count path) inside the loop.
    plain_ptx = compile_kernel(stateless_loop, SIGNATURE).ptx
    plain = entry_ops(plain_ptx)
    assert plain.get("ld.relaxed.gpu.global.u32") == 1, plain
    assert plain.get("st.relaxed.gpu.global.u32") == 2, plain
    plain_order = entry_order(plain_ptx)
    assert plain_order.index("ld.relaxed.gpu.global.u32") > plain_order.index("bar.sync"), plain_order


def test_flagtree_session_loop(compile_kernel):
    k = compile_kernel(flagtree_session_loop, SIGNATURE, link=False)
    calls = extern_calls(k.ttir)
    assert [c.symbol for c in calls] == ["tleTritonSessionOpen", "tleTritonSession", "tleTritonSessionClose"]
    # FlagTree's slot 3 goes to the open; the barrier takes its slot from
    # the session.
    assert calls[0].operands[1:] == [2, 3], calls[0]
    ops = entry_ops(k.ptx)
    assert ops.get("ld.relaxed.gpu.global.u32") == 1 and ops.get("st.relaxed.gpu.global.u32") == 1, ops


@triton.jit
def bad_grid(comm, out, n):
    s = tlx.session_open(comm, group_kind="grid")
    tl.store(out, tlx.session_close(comm, s))


@triton.jit
def bad_team(comm, out, n):
    s = tlx.session_open(comm)
    s = tlx.distributed_barrier(comm, team="world", session=s)
    tl.store(out, tlx.session_close(comm, s))


@triton.jit
def bad_index(comm, out, n):
    s = tlx.session_open(comm)
    s = tlx.distributed_barrier(comm, index=2, session=s)
    tl.store(out, tlx.session_close(comm, s))


@triton.jit
def bad_session(comm, out, n):
    s = tlx.distributed_barrier(comm, session=n)
    tl.store(out, s.to(tl.int32))


@triton.jit
def bad_session_state(comm, out, n):
    # The state alone is not a session: the barrier needs the slot beside it.
    s = tlx.session_open(comm)
    t = tlx.distributed_barrier(comm, session=s.state)
    tl.store(out, tlx.session_close(comm, t))


@pytest.mark.parametrize("kernel, message", [
    (bad_grid, "sessions serve the 'block' and 'warp' groups"),
    (bad_team, "sessions are team 'intra' barriers"),
    (bad_index, "takes its slot from the session"),
    (bad_session, "session must be the value that session_open or the previous session barrier returned"),
    (bad_session_state, "(its int64 state and int32 slot); got a runtime value of type int64"),
])
def test_bad_session_arguments(compile_kernel, kernel, message):
    with pytest.raises(CompilationError) as info:
        compile_kernel(kernel, SIGNATURE)
    assert message in str(info.value.__cause__), info.value.__cause__


def test_stateless_and_session_barriers_share_slots_across_launches(host_library):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning")
    for n in (2, 3):
        try:
            proc = subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", str(n), "--grace", "10",
                                   str(SESSION_RANKS), "--rounds", "5"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=120)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"still running after 120 s (a hang):\n{e.stdout}")
        assert proc.returncode == 0, proc.stdout
        for rank in range(n):
            assert f"[rank {rank}] PASS sessions: 22 rounds over 5 launches, 0 wrong values" in proc.stdout, \
                proc.stdout
