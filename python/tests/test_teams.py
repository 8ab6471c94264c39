# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Teams in tle.language (issue 19): the team parameter of
distributed_barrier and signal, and team_rank / team_size.

Compiled for sm_90 without a GPU: team intra keeps today's entry points
(tleTritonBarrier, tleTritonSignal, tleTritonIntraRank/Size), so existing
kernels compile to the same code; inter and world call the team entry
points with the team's encoding after the communicator, and the calls
resolve against the device bitcode. Under Triton's interpreter on CPU ranks of one node
(team_ranks.py): the queries of every team, and a barrier and a signal of
every team. Until the device library serves the INTER and WORLD barriers
and signals, it refuses them with a bad-argument report for the team kind:
those cases then skip, saying so, and run as soon as the runtime serves
them."""

from __future__ import annotations

import re
import sys

import pytest
import triton
import triton.language as tl

import tle.language as tlx
from test_interpreter import PYTHON_DIR, rank_lines, run_ranks
from test_language import extern_calls

# abi.def's TLE_TEAM, written out by hand (docs/abi.md, "Encodings").
TEAMS = {"intra": 0, "inter": 1, "world": 2}
TEAM_RANKS = PYTHON_DIR / "tests" / "team_ranks.py"


@triton.jit
def barrier_kernel(comm, TEAM: tl.constexpr):
    tlx.distributed_barrier(comm, index=3, order="release", barrier_kind="arrive", team=TEAM)


@pytest.mark.parametrize("team", ["inter", "world"])
def test_a_team_barrier_calls_the_team_entry_point(compile_kernel, team):
    out = compile_kernel(barrier_kernel, {"comm": "i64", "TEAM": "constexpr"}, {"TEAM": team})
    [call] = extern_calls(out.ttir)
    # comm, teamKind, barrierKind arrive 0, group block 2, index 3, order release 2
    assert call.symbol == "tleTritonTeamBarrier" and not call.pure
    assert call.operands == ["arg:comm", TEAMS[team], 0, 2, 3, 2]
    # The call resolved against the device bitcode (and was inlined): the
    # PTX has the kernel and no unresolved team function.
    assert not re.search(r"declare .*@tleTritonTeam", out.llir)
    assert ".entry barrier_kernel" in out.ptx and "tleTritonTeam" not in out.ptx


def test_team_intra_is_todays_barrier(compile_kernel):
    """team='intra' (also the default) compiles to exactly the code of a
    kernel that names no team."""
    out = compile_kernel(barrier_kernel, {"comm": "i64", "TEAM": "constexpr"}, {"TEAM": "intra"})
    [call] = extern_calls(out.ttir)
    assert call.symbol == "tleTritonBarrier"
    assert call.operands == ["arg:comm", 0, 2, 3, 2]


@triton.jit
def signal_kernel(comm, peer, TEAM: tl.constexpr):
    tlx.signal(comm, peer, 5, op="add", value=7, team=TEAM)


@pytest.mark.parametrize("team", ["intra", "inter", "world"])
def test_signal_team(compile_kernel, team):
    out = compile_kernel(signal_kernel, {"comm": "i64", "peer": "i32", "TEAM": "constexpr"}, {"TEAM": team})
    [call] = extern_calls(out.ttir)
    # comm, [teamKind,] peer, signal 5, value 7, group block 2
    if team == "intra":
        assert call.symbol == "tleTritonSignal"
        assert call.operands == ["arg:comm", "arg:peer", 5, 7, 2]
    else:
        assert call.symbol == "tleTritonTeamSignal"
        assert call.operands == ["arg:comm", TEAMS[team], "arg:peer", 5, 7, 2]


@triton.jit
def query_kernel(comm, out, TEAM: tl.constexpr):
    tl.store(out, tlx.team_rank(comm, TEAM) * 1000 + tlx.team_size(comm, TEAM))


@pytest.mark.parametrize("team", ["intra", "inter", "world"])
def test_team_queries(compile_kernel, team):
    out = compile_kernel(query_kernel, {"comm": "i64", "out": "*i32", "TEAM": "constexpr"}, {"TEAM": team})
    calls = extern_calls(out.ttir)
    if team == "intra":
        assert [(c.symbol, c.operands) for c in calls] == [("tleTritonIntraRank", ["arg:comm"]),
                                                           ("tleTritonIntraSize", ["arg:comm"])]
    else:
        assert [(c.symbol, c.operands) for c in calls] == [("tleTritonTeamRank", ["arg:comm", TEAMS[team]]),
                                                           ("tleTritonTeamSize", ["arg:comm", TEAMS[team]])]
    assert all(not c.pure for c in calls)


@triton.jit
def bad_team_kernel(comm, TEAM: tl.constexpr, GROUP: tl.constexpr):
    tlx.distributed_barrier(comm, group_kind=GROUP, team=TEAM)


@pytest.mark.parametrize("team, group, message", [
    ("node", "block", "unknown team 'node': expected one of 'intra', 'inter', 'world'"),
    ("world", "grid", "group_kind 'grid' is only available with team 'intra'"),
    ("inter", "grid", "use group_kind 'block' for team 'inter'"),
])
def test_bad_teams_are_refused(compile_kernel, team, group, message):
    with pytest.raises(triton.compiler.errors.CompilationError) as e:
        compile_kernel(bad_team_kernel, {"comm": "i64", "TEAM": "constexpr", "GROUP": "constexpr"},
                       {"TEAM": team, "GROUP": group}, launch_cooperative_grid=True)
    assert message in str(e.value.__cause__ or e.value)


@triton.jit
def bad_query_kernel(comm, out):
    tl.store(out, tlx.team_rank(comm, 1))


def test_a_team_is_a_string(compile_kernel):
    with pytest.raises(triton.compiler.errors.CompilationError) as e:
        compile_kernel(bad_query_kernel, {"comm": "i64", "out": "*i32"})
    assert "team must be a compile-time string" in str(e.value.__cause__ or e.value)


@pytest.mark.parametrize("team", ["intra", "inter", "world"])
def test_teams_under_the_interpreter(team):
    n = 3
    proc, _ = run_ranks(n, str(TEAM_RANKS), team)
    for rank in range(n):
        lines = rank_lines(proc.stdout, rank)
        # One node: inter is node 0 of 1, world is intra.
        rank_, size = (0, 1) if team == "inter" else (rank, n)
        assert f"QUERY {team} rank={rank_} size={size}" in lines, proc.stdout
    if "UNSUPPORTED" in proc.stdout:
        assert team != "intra", proc.stdout
        assert proc.returncode == 0, proc.stdout
        pytest.skip(f"the runtime does not serve team {team} barriers and signals yet (issue 19): "
                    f"{rank_lines(proc.stdout, 0)[-1]}")
    assert proc.returncode == 0, proc.stdout
    for rank in range(n):
        assert any(line.startswith(f"PASS {team}") for line in rank_lines(proc.stdout, rank)), proc.stdout
