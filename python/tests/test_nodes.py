# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Simulated nodes from Python: ``Comm.init_all(..., ranks_per_node=)``, its
world and node queries, buffers per node, the Triton team entry points
through the interpreter's calls, and ``python -m tle.launch --nodes`` running
Triton kernels over every team, one process per rank (docs/emulator.md,
"Nodes")."""

from __future__ import annotations

import ctypes
import os
import pathlib
import re
import subprocess
import sys

import pytest

from tle import _interp, launch, runtime
from tle.runtime import Backend, Comm, TLEError


pytestmark = pytest.mark.usefixtures("host_library")


@pytest.fixture
def world():
    """2 nodes x 2 ranks in this process."""
    comms = Comm.init_all(4, backend=Backend.EMULATOR, n_barriers=8, n_signals=4, ranks_per_node=2)
    yield comms
    for c in comms:
        c.destroy()


def call(symbol, types, *args, ret="int32"):
    """The Triton entry point ``symbol`` as the interpreter calls it, from
    program 0 of 1; ``types`` names each argument's Triton type."""
    fn = _interp._entry_point(symbol, tuple(types.split()), ret)
    prog = _interp._Program((ctypes.c_uint32 * 3)(0, 0, 0), (ctypes.c_uint32 * 3)(1, 1, 1))
    out = _interp._C_TYPES[ret]()
    info = runtime._ErrorInfo()
    code = fn(ctypes.byref(prog), *args, ctypes.byref(out), ctypes.byref(info))
    if code != runtime.Result.SUCCESS:
        raise TLEError(info.result, symbol, runtime._error_info(info).message, None)
    return out.value


QUERY = "int64 int32"
SIGNAL = "int64 int32 int32 int32 int64 int32"  # comm, team, peer, word, value, group
READ = "int64 int32 int32"  # comm, word, order


def test_queries_name_the_world(world):
    for q, c in enumerate(world):
        assert (c.rank, c.size, c.node, c.ranks_per_node) == (q, 4, q // 2, 2)
        dc = c.dev_comm
        assert call("tleTritonTeamRank", QUERY, dc, 0) == q % 2
        assert call("tleTritonTeamRank", QUERY, dc, 1) == q // 2
        assert call("tleTritonTeamSize", QUERY, dc, 1) == 2
        assert call("tleTritonTeamRank", QUERY, dc, 2) == q
        assert call("tleTritonTeamSize", QUERY, dc, 2) == 4


def test_one_node_by_default():
    comms = Comm.init_all(3, backend=Backend.EMULATOR)
    try:
        assert [(c.node, c.ranks_per_node, c.size) for c in comms] == [(0, 3, 3)] * 3
    finally:
        for c in comms:
            c.destroy()


def test_signals_cross_nodes_and_buffers_span_a_node(world):
    # World rank 0 adds 5 to world rank 3's word 1 (another node), over
    # WORLD; rank 3 adds 2 to its rail peer's (rank 1's) word 2 over INTER.
    call("tleTritonTeamSignal", SIGNAL, world[0].dev_comm, 2, 3, 1, 5, 0)
    call("tleTritonTeamSignal", SIGNAL, world[3].dev_comm, 1, 0, 2, 2, 0)
    assert call("tleTritonReadSignal", READ, world[3].dev_comm, 1, 0, ret="int64") == 5
    assert call("tleTritonReadSignal", READ, world[1].dev_comm, 2, 0, ret="int64") == 2
    mems = Comm.alloc_all(world, 64)
    try:
        assert len(mems) == 4
    finally:
        for m in mems:
            m.free()


def test_a_bad_peer_names_the_team(world):
    with pytest.raises(TLEError, match="peer 2 is out of range"):
        call("tleTritonTeamSignal", SIGNAL, world[0].dev_comm, 1, 2, 0, 1, 0)


def test_interpreter_errors_name_the_world_rank(world):
    # World rank 3 is node 1's local rank 1: the report says both, as
    # tleCommGetError's does, not the node's rank alone.
    with pytest.raises(TLEError, match=r"rank 3 \(node 1, local 1\)"):
        call("tleTritonTeamSignal", SIGNAL, world[3].dev_comm, 1, 2, 0, 1, 0)


@pytest.mark.parametrize("per_node", [0, 3, 5, -1])
def test_bad_ranks_per_node_is_refused(per_node):
    with pytest.raises((ValueError, OverflowError)):
        Comm.init_all(4, backend=Backend.EMULATOR, ranks_per_node=per_node)


PYTHON_DIR = pathlib.Path(__file__).resolve().parents[1]
NODE_RANKS = PYTHON_DIR / "tests" / "node_ranks.py"


def rank_lines(output: str, rank: int) -> list[str]:
    prefix = f"[rank {rank}] "
    chunks = re.split(r"(?=\[rank \d+\] )", output)
    return [c[len(prefix):].split("\n")[0].strip() for c in chunks if c.startswith(prefix)]


@pytest.mark.parametrize("nodes, per_node", [(2, 2), (3, 2)])
def test_launcher_runs_simulated_nodes(nodes, per_node):
    """python -m tle.launch --nodes: one process per rank, Triton kernels
    under the interpreter with barriers and signals over every team."""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning")
    try:
        proc = subprocess.run([sys.executable, "-m", "tle.launch", "--nodes", str(nodes), "--ranks", str(per_node),
                               "--grace", "10", str(NODE_RANKS)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after 120 s (a hang):\n{e.stdout}")
    assert proc.returncode == 0, proc.stdout
    size = nodes * per_node
    for rank in range(size):
        lines = rank_lines(proc.stdout, rank)
        node, local = divmod(rank, per_node)
        assert f"TEAMS intra={local}/{per_node} inter={node}/{nodes} world={rank}/{size}" in lines, proc.stdout
        assert any(line.startswith("PASS") for line in lines), proc.stdout


@pytest.mark.parametrize("nodes, ranks", [(0, 2), (2, 0), (65, 2), (-1, 1)])
def test_launcher_checks_its_nodes(nodes, ranks):
    with pytest.raises(ValueError):
        launch.run(["-c", "pass"], ranks, nodes=nodes)
