# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.flagtree, FlagTree's API on TLE, without a GPU.

Compiled for sm_90 (no extern_libs: the module links TLE's bitcode itself):
kernels written as FlagTree's tests write them name FlagTree's ops in their
TTGIR (what those tests assert), call TLE's entry points with the context's
addresses compiled in, and resolve against the bitcode; the compile-time
refusals say why, signals included (FlagTree's spellings on TLE's signal
words; network wait kinds refused). Without compiling: meshes, the context's cache identity,
the enums. On CPU ranks under Triton's interpreter (flagtree_ranks.py):
data through remote() and registered memory, node rank, a barrier that waits
for a delayed peer, a signal ping-pong (the data and signal cases also with
space='world', skipped while the runtime refuses the world team), and
memory that cannot be registered across processes.
"""

from __future__ import annotations

import contextlib
import copy
import re

import pytest
import triton
import triton.language as tl
from triton.compiler.errors import CompilationError

import tle
import tle.flagtree as ft
from tle.flagtree import DistContext, _link
from tle.language import BARRIER_KINDS, GROUP_KINDS, ORDERS, SIGNAL_GROUP_KINDS

from test_interpreter import rank_lines, run_ranks
from test_language import extern_calls
from test_onesided_language import ttir

CTX = DistContext(mem=0x7F0000001000, dev_comm=0x7F0000002000, rank=0, size=2, spans_world=True, comm_tag="1.1",
                  bitcode="b")
MESH = ft.device_mesh(ft.MeshConfig(device=2))
NODE_MESH = ft.device_mesh(ft.MeshConfig(node=1, device=2))


@contextlib.contextmanager
def raises(exc_type: type[Exception], message: str):
    """Triton's CompilationError at the call, caused by ``exc_type`` with a
    message matching ``message``."""
    with pytest.raises(CompilationError, match=message) as info:
        yield info
    assert isinstance(info.value.__cause__, exc_type), repr(info.value.__cause__)


def compile_flagtree(compile_kernel, fn, signature, constexprs=None, **options):
    """Compiled as FlagTree's tests compile: no extern_libs."""
    return compile_kernel(fn, signature, constexprs, link=False, **options)


# ---- kernels as FlagTree's tests write them --------------------------------


@triton.jit()
def d2d_barrier_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    pid = tl.program_id(0)
    local_rank = ft.shard_id(mesh, 'device', device_dptr=device_dptr)
    n_rank = mesh.shape[0]
    peer = (local_rank + 1) % n_rank
    remote_mem = ft.remote(device_dptr, space="device", dtype=tl.float32, shard_id=peer, offset=pid)
    val = tl.load(remote_mem)
    tl.store(out_ptr + pid, val)
    ft.distributed_barrier(device_dptr=device_dptr, space="device")


@triton.jit
def node_rank_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    pid = tl.program_id(0)
    node_rank = ft.shard_id(mesh, "node", device_dptr=device_dptr)
    tl.store(out_ptr + pid, node_rank)


@triton.jit
def local_pe_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # noqa: F841
    local_rank = ft.shard_id(mesh, 'device', device_dptr=device_dptr)
    n_rank = mesh.shape[0]
    peer = (local_rank + 1) % n_rank  # noqa: F841


@triton.jit
def arrive_wait_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    ft.distributed_barrier(mesh=mesh, device_dptr=device_dptr, space="device", barrier_kind="arrive")
    ft.distributed_barrier(mesh=mesh, device_dptr=device_dptr, space="device", barrier_kind="wait")
    tl.store(out_ptr + tl.program_id(0), 1)


CONTEXT_SIGNATURE = {"out_ptr": "*fp32", "device_dptr": "constexpr", "mesh": "constexpr"}


def test_flagtree_tests_find_flagtree_op_names(compile_kernel):
    """The TTGIR checks of FlagTree's tests, on TLE: each op name appears as
    the symbol of a call into TLE's library, which the module linked."""
    d2d = compile_flagtree(compile_kernel, d2d_barrier_kernel, CONTEXT_SIGNATURE,
                           {"device_dptr": CTX, "mesh": MESH}, num_warps=4)
    assert "distributed_barrier" in d2d.ttgir
    assert "remote_pointer" in d2d.ttgir
    node = compile_flagtree(compile_kernel, node_rank_kernel, dict(CONTEXT_SIGNATURE, out_ptr="*i32"),
                            {"device_dptr": CTX, "mesh": NODE_MESH})
    assert "get_world_rank" in node.ttgir and "get_num_pes" in node.ttgir
    local = compile_flagtree(compile_kernel, local_pe_kernel, dict(CONTEXT_SIGNATURE, BLOCK="constexpr"),
                             {"device_dptr": CTX, "mesh": MESH, "BLOCK": 64})
    assert "get_device_id" in local.ttgir
    for out in (d2d, node, local):
        # Linked and resolved: no TLE function is left to an external
        # definition, and the calls are TLE's entry points.
        assert not re.search(r"\.extern \.func .*tle", out.ptx), out.ptx
        assert all(c.libname == "tle" and not c.pure for c in extern_calls(out.ttir))
    assert [c.symbol for c in extern_calls(d2d.ttir)] == ["tle_get_device_id", "tle_remote_pointer",
                                                          "tle_distributed_barrier"]
    assert "ld.acquire.sys" in d2d.ptx


def test_context_addresses_are_compiled_in(compile_kernel):
    out = compile_flagtree(compile_kernel, d2d_barrier_kernel, CONTEXT_SIGNATURE, {"device_dptr": CTX, "mesh": MESH})
    calls = {c.symbol: c for c in extern_calls(out.ttir)}
    assert calls["tle_get_device_id"].operands == [CTX.dev_comm]
    assert calls["tle_remote_pointer"].operands[0] == CTX.mem
    assert calls["tle_distributed_barrier"].operands == [CTX.dev_comm, BARRIER_KINDS["sync"], GROUP_KINDS["block"],
                                                        0, ORDERS["acq_rel"]]


@triton.jit
def enums_kernel(comm, mem, out, mesh: tl.constexpr):
    # TLE's way: the communicator and the buffer as runtime arguments.
    pid = tl.program_id(0)
    tl.store(out + pid, tl.load(ft.remote(mem, 1, space="device", dtype=tl.float16, offset=3)))
    tl.store(out + pid, tl.load(ft.remote(mem, pid, space="device", dtype=tl.float32, offset=pid)))
    ft.distributed_barrier(mesh, comm, "intra", ft.GroupKind.BLOCK, ft.BarrierKind.ARRIVE, ft.MemoryOrder.RELEASE,
                           index=pid, memory_scope=ft.MemoryScope.DEVICE)
    ft.distributed_barrier(mesh, comm, "intra_node", "block", "wait", ft.MemoryOrder.ACQ_REL, index=pid)
    ft.distributed_barrier(mesh, comm, "device", order="acqrel", index=None, context_id=0, memory_scope="system")


def test_runtime_arguments_enums_and_element_offsets(compile_kernel):
    out = compile_flagtree(compile_kernel, enums_kernel, {"comm": "i64", "mem": "i64", "out": "*fp32",
                                                          "mesh": "constexpr"}, {"mesh": MESH})
    calls = extern_calls(out.ttir)
    assert [c.symbol for c in calls] == ["tle_remote_pointer"] * 2 + ["tle_distributed_barrier"] * 3
    # offset counts elements: 3 float16 elements are 6 bytes; a runtime
    # offset is scaled by 4 for float32.
    assert calls[0].operands == ["arg:mem", 6, 1]
    assert calls[1].operands[0] == "arg:mem" and calls[1].operands[2] == "program_id"
    assert re.search(r"arith\.muli .*, %c4_i64", out.ttir), out.ttir
    assert calls[2].operands == ["arg:comm", BARRIER_KINDS["arrive"], GROUP_KINDS["block"], "program_id",
                                 ORDERS["release"]]
    assert calls[3].operands == ["arg:comm", BARRIER_KINDS["wait"], GROUP_KINDS["block"], "program_id",
                                 ORDERS["acq_rel"]]
    assert calls[4].operands == ["arg:comm", BARRIER_KINDS["sync"], GROUP_KINDS["block"], 0, ORDERS["acq_rel"]]


@triton.jit
def world_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    ft.distributed_barrier(mesh=mesh, device_dptr=device_dptr, space="world")
    tl.store(out_ptr, ft.n_pes(device_dptr).to(tl.float32))


# abi.def's TLE_TEAM, written out by hand (docs/abi.md, "Encodings").
TEAMS = {"intra": 0, "inter": 1, "world": 2}


def test_world_is_the_world_team_barrier(compile_kernel):
    out = compile_flagtree(compile_kernel, world_kernel, CONTEXT_SIGNATURE, {"device_dptr": CTX, "mesh": NODE_MESH})
    calls = extern_calls(out.ttir)
    assert [c.symbol for c in calls] == ["tleTritonTeamBarrier", "tle_get_num_pes"]
    # comm, team world, sync, block, FlagTree's slot 0, acq_rel
    assert calls[0].operands == [CTX.dev_comm, TEAMS["world"], BARRIER_KINDS["sync"], GROUP_KINDS["block"], 0,
                                 ORDERS["acq_rel"]]
    assert not re.search(r"\.extern \.func .*tle", out.ptx)


@triton.jit
def team_barrier_kernel(comm, mesh: tl.constexpr, SPACE: tl.constexpr):
    ft.distributed_barrier(mesh, comm, SPACE, "block", "arrive", "release", index=2)


@pytest.mark.parametrize("space, team", [("inter", "inter"), ("inter_node", "inter"), ("world", "world"),
                                         ("intra_node", "intra"), ("device", "intra")])
def test_barrier_spaces_are_teams(compile_kernel, space, team):
    """A runtime communicator serves every space: the intra spellings call
    FlagTree's tle_distributed_barrier, inter and world the team barrier."""
    mesh = NODE_MESH if team != "intra" else MESH
    out = compile_flagtree(compile_kernel, team_barrier_kernel, {"comm": "i64", "mesh": "constexpr",
                                                                 "SPACE": "constexpr"}, {"mesh": mesh, "SPACE": space})
    [call] = extern_calls(out.ttir)
    tail = [BARRIER_KINDS["arrive"], GROUP_KINDS["block"], 2, ORDERS["release"]]
    if team == "intra":
        assert call.symbol == "tle_distributed_barrier" and call.operands == ["arg:comm", *tail]
    else:
        assert call.symbol == "tleTritonTeamBarrier" and call.operands == ["arg:comm", TEAMS[team], *tail]


def test_arrive_wait_kernel_of_the_delayed_peer_test(compile_kernel):
    out = compile_flagtree(compile_kernel, arrive_wait_kernel, dict(CONTEXT_SIGNATURE, out_ptr="*i32"),
                           {"device_dptr": CTX, "mesh": MESH})
    kinds = [c.operands[1] for c in extern_calls(out.ttir)]
    assert kinds == [BARRIER_KINDS["arrive"], BARRIER_KINDS["wait"]]


@triton.jit
def coordinates_kernel(output, mesh: tl.constexpr, rank: tl.constexpr):
    pid = tl.program_id(0)
    for axis in tl.static_range(rank):
        tl.store(output + pid * rank + axis, ft.shard_id(mesh, axis))


def test_mesh_coordinates_need_no_library(compile_kernel):
    """shard_id on a block mesh is arithmetic on program_id: no call, and
    the link hook leaves the kernel alone; an axis of size 1 is 0."""
    mesh = ft.device_mesh({"block": [("axis0", 2), ("axis1", 1)]})
    out = compile_flagtree(compile_kernel, coordinates_kernel, {"output": "*i32", "mesh": "constexpr",
                                                                "rank": "constexpr"}, {"mesh": mesh, "rank": 2})
    assert extern_calls(out.ttir) == []
    # No symbol of TLE's bitcode (tle*, flagcx*, tle::impl's mangled names);
    # the letters alone may be in the debug info's file path.
    assert not re.search(r"@[\w.$]*(tle|flagcx)", out.llir), out.llir
    assert re.search(r"tt\.store .*, %c0_i32", out.ttir), out.ttir


def test_explicit_extern_libs_are_kept(compile_kernel):
    out = compile_kernel(d2d_barrier_kernel, CONTEXT_SIGNATURE, {"device_dptr": CTX, "mesh": MESH})
    assert not re.search(r"\.extern \.func .*tle", out.ptx)


# ---- what TLE refuses, and why ---------------------------------------------


@triton.jit
def barrier_kernel(comm, device_dptr: tl.constexpr, mesh: tl.constexpr, SPACE: tl.constexpr, GROUP: tl.constexpr,
                   ORDER: tl.constexpr, CONTEXT: tl.constexpr, SCOPE: tl.constexpr, RUNTIME: tl.constexpr):
    if RUNTIME:
        ft.distributed_barrier(mesh, comm, SPACE, GROUP, "sync", ORDER, context_id=CONTEXT, memory_scope=SCOPE)
    else:
        ft.distributed_barrier(mesh, device_dptr, SPACE, GROUP, "sync", ORDER, context_id=CONTEXT,
                               memory_scope=SCOPE)


BARRIER = {"device_dptr": CTX, "mesh": MESH, "SPACE": "device", "GROUP": "block", "ORDER": "acqrel", "CONTEXT": 0,
           "SCOPE": "system", "RUNTIME": False}


@pytest.mark.parametrize("changes, exc_type, message", [
    ({"SPACE": "node"}, ValueError, r"space 'node' is ambiguous: .*space='intra_node' or space='inter_node'"),
    ({"SPACE": "cluster"}, ValueError, r"unknown space 'cluster': expected one of 'device', 'intra'"),
    ({"SPACE": None}, ValueError, r"without a space is FlagTree's barrier inside one GPU"),
    ({"SPACE": "world"}, ValueError, r"space='world' requires mesh to define a 'node' topology axis"),
    ({"SPACE": "inter_node"}, ValueError, r"space='inter_node' requires mesh to define a 'node' topology axis"),
    ({"SPACE": "world", "mesh": NODE_MESH, "GROUP": "grid"}, ValueError,
     r"group_kind 'grid' is only available with team 'intra'"),
    ({"mesh": ft.device_mesh({"node": 2})}, ValueError, r"space='device' requires mesh to define a 'device'"),
    ({"CONTEXT": 8}, ValueError, r"context_id 8 is not a network context: expected 0\.\.7"),
    ({"CONTEXT": -1}, ValueError, r"context_id -1 is not a network context"),
    ({"SCOPE": "block"}, ValueError, r"memory_scope 'block' would order memory within one GPU only"),
    ({"SCOPE": "cluster"}, ValueError, r"unknown memory_scope 'cluster'"),
    ({"GROUP": "tile_span"}, ValueError, r"group_kind 'tile_span' needs a group size"),
    ({"GROUP": "thread"}, ValueError, r"group_kind 'thread' is not available in Triton"),
    ({"ORDER": "acquire_release"}, ValueError, r"unknown order 'acquire_release'"),
    ({"device_dptr": None}, ValueError, r"device_dptr is required"),
])
def test_barrier_refusals(compile_kernel, changes, exc_type, message):
    constexprs = dict(BARRIER, **changes)
    signature = {"comm": "i64", **{k: "constexpr" for k in constexprs}}
    with raises(exc_type, message):
        compile_flagtree(compile_kernel, barrier_kernel, signature, constexprs)


@triton.jit
def remote_kernel(out, device_dptr: tl.constexpr, SPACE: tl.constexpr, DTYPE: tl.constexpr, COOP: tl.constexpr,
                  CONTEXT: tl.constexpr, PEER: tl.constexpr):
    tl.store(out, tl.load(ft.remote(device_dptr, PEER, space=SPACE, dtype=DTYPE, coopkind=COOP,
                                    context_id=CONTEXT)).to(tl.float32))


REMOTE = {"device_dptr": CTX, "SPACE": "device", "DTYPE": tl.float32, "COOP": None, "CONTEXT": 0, "PEER": 1}


@pytest.mark.parametrize("changes, exc_type, message", [
    ({"SPACE": "cluster"}, ValueError, r"remote\(space='cluster'\) addresses the shared memory of a CTA cluster"),
    ({"SPACE": "node"}, ValueError, r"remote\(space='node'\) marks a pointer whose tl.load/tl.store pair FlagTree's "
     r"compiler fuses into a FlagCX node transfer .* is node_put\(ctx, peer, dst_off, src_off, n, dtype=T\)"),
    ({"DTYPE": None}, ValueError, r"remote\(space='device'\) needs dtype"),
    ({"COOP": "block"}, TypeError, r"device space does not accept node-only argument\(s\): coopkind"),
    ({"CONTEXT": 2}, TypeError, r"node-only argument\(s\): context_id"),
    ({"PEER": -1}, ValueError, r"shard_id must be >= 0, got -1"),
    ({"PEER": (1, 0)}, ValueError, r"a tuple shard_id needs scope=device_mesh"),
])
def test_remote_refusals(compile_kernel, changes, exc_type, message):
    constexprs = dict(REMOTE, **changes)
    with raises(exc_type, message):
        compile_flagtree(compile_kernel, remote_kernel, {"out": "*fp32", **{k: "constexpr" for k in constexprs}},
                         constexprs)


@triton.jit
def mesh_peer_kernel(out, device_dptr: tl.constexpr, mesh: tl.constexpr, PEER: tl.constexpr):
    tl.store(out, tl.load(ft.remote(device_dptr, PEER, scope=mesh, space="device", dtype=tl.float32)))


@pytest.mark.parametrize("axes, coords, rank", [
    ([("row", 2), ("col", 3)], (1, 0), 3),
    ([("row", 2), ("col", 3)], (0, 2), 2),
    ([("row", 2), ("col", 3)], (1, 2), 5),
    ([("a", 2), ("b", 2), ("c", 2)], (1, 0, 1), 5),
    ([("a", 2), ("b", 2), ("c", 2)], (0, 1, 1), 3),
])
def test_a_coordinate_shard_id_is_row_major(compile_kernel, axes, coords, rank):
    """A tuple shard_id names the peer by its coordinates in the scope mesh,
    linearized as FlagTree does, row-major (the last axis fastest): (1, 0)
    of a 2 x 3 mesh is rank 3, not the column-major 1."""
    mesh = ft.device_mesh({"device": axes})
    out = compile_flagtree(compile_kernel, mesh_peer_kernel,
                           {"out": "*fp32", "device_dptr": "constexpr", "mesh": "constexpr", "PEER": "constexpr"},
                           {"device_dptr": CTX, "mesh": mesh, "PEER": coords})
    [call] = [c for c in extern_calls(out.ttir) if c.symbol == "tle_remote_pointer"]
    assert call.operands == [CTX.mem, 0, rank], call.operands


# ---- signals -------------------------------------------------------------------


@triton.jit
def flagtree_signal_kernel(out_ptr, device_dptr: tl.constexpr, mesh: tl.constexpr):
    # As FlagTree's documentation writes them: rank-relative peer, one slot
    # per program, inc then a wait for the peer's.
    pid = tl.program_id(0)
    rank = ft.shard_id(mesh, "device", device_dptr=device_dptr)
    peer = (rank + 1) % ft.n_pes(device_dptr)
    ft.signal(device_dptr, peer, pid)
    ft.signal_wait(device_dptr, pid, "signal", 1)
    tl.store(out_ptr + pid, 1.0)


def test_signals_name_flagtree_ops_and_call_tle_signals(compile_kernel):
    out = compile_flagtree(compile_kernel, flagtree_signal_kernel, CONTEXT_SIGNATURE,
                           {"device_dptr": CTX, "mesh": MESH})
    assert "tle_signal" in out.ttgir and "tle_signal_wait" in out.ttgir
    calls = {c.symbol: c for c in extern_calls(out.ttir)}
    assert calls["tle_signal"].operands[0] == CTX.dev_comm
    assert calls["tle_signal"].operands[2:] == ["program_id", 1, SIGNAL_GROUP_KINDS["block"]]
    assert calls["tle_signal_wait"].operands == [CTX.dev_comm, "program_id", 1, SIGNAL_GROUP_KINDS["block"],
                                                 ORDERS["acquire"]]
    assert not re.search(r"\.extern \.func .*tle", out.ptx), out.ptx
    # The release reduction on the peer's word and the acquire poll of ours.
    assert "red.release.sys.global.add.u64" in out.ptx and "ld.acquire.sys.global.u64" in out.ptx


@triton.jit
def signal_forms_kernel(comm, slot, value, device_dptr: tl.constexpr):
    # Runtime communicator, slot and value; add; FlagTree's enums and
    # spellings of the order; world (the world team) on a context.
    ft.signal(comm, 1, slot, value=value, op="add", space="intra", group_kind=ft.GroupKind.BLOCK)
    ft.signal(device_dptr, 0, 3, op="inc", space="world", context_idx=0, scope="device")
    ft.signal_wait(comm, slot, wait_kind="signal", target=value, order=ft.MemoryOrder.RELAXED)
    ft.signal_wait(device_dptr, 3, "signal", 5, group_kind="block", context_idx=0, order="acqrel")


def test_signal_forms(compile_kernel):
    out = compile_flagtree(compile_kernel, signal_forms_kernel, {"comm": "i64", "slot": "i32", "value": "i64",
                                                                 "device_dptr": "constexpr"}, {"device_dptr": CTX})
    calls = extern_calls(out.ttir)
    assert [c.symbol for c in calls] == ["tle_signal", "tleTritonTeamSignal"] + ["tle_signal_wait"] * 2
    assert calls[0].operands == ["arg:comm", 1, "arg:slot", "arg:value", SIGNAL_GROUP_KINDS["block"]]
    assert calls[1].operands == [CTX.dev_comm, TEAMS["world"], 0, 3, 1, SIGNAL_GROUP_KINDS["block"]]
    assert calls[2].operands == ["arg:comm", "arg:slot", "arg:value", SIGNAL_GROUP_KINDS["block"], ORDERS["relaxed"]]
    assert calls[3].operands == [CTX.dev_comm, 3, 5, SIGNAL_GROUP_KINDS["block"], ORDERS["acq_rel"]]


@triton.jit
def signal_context_kernel(comm, ctx):
    # A network context other than 0, constant and at run time, on each
    # team and on the wait: the context entry points, the context last.
    ft.signal(comm, 1, 4, space="world", context_idx=2)
    ft.signal(comm, 0, 5, op="add", value=3, context_idx=ctx)
    ft.signal_wait(comm, 6, "signal", 9, context_idx=ctx)
    ft.signal_wait(comm, 7, "signal", 1, context_idx=0)


def test_signal_contexts_call_the_context_entry_points(compile_kernel):
    out = compile_flagtree(compile_kernel, signal_context_kernel, {"comm": "i64", "ctx": "i32"}, {})
    calls = extern_calls(out.ttir)
    assert [c.symbol for c in calls] == ["tleTritonContextSignal"] * 2 + ["tleTritonContextSignalWait",
                                                                          "tle_signal_wait"]
    block = SIGNAL_GROUP_KINDS["block"]
    assert calls[0].operands == ["arg:comm", TEAMS["world"], 1, 4, 1, block, 2]
    assert calls[1].operands == ["arg:comm", TEAMS["intra"], 0, 5, 3, block, "arg:ctx"]
    assert calls[2].operands == ["arg:comm", 6, 9, block, ORDERS["acquire"], "arg:ctx"]
    assert calls[3].operands == ["arg:comm", 7, 1, block, ORDERS["acquire"]]


@triton.jit
def signal_space_kernel(comm, peer, SPACE: tl.constexpr):
    ft.signal(comm, peer, 4, space=SPACE)


@pytest.mark.parametrize("space, team", [("intra_node", "intra"), ("intra", "intra"), ("device", "intra"),
                                         ("inter_node", "inter"), ("inter", "inter"), ("node", "inter"),
                                         ("world", "world")])
def test_signal_spaces_are_teams(compile_kernel, space, team):
    """FlagTree's signal spaces as FlagTree maps them to FlagCX teams
    (its _SIGNAL_SPACE_TO_TEAM_KIND: "node" is INTER), on a runtime
    communicator: the intra spellings call tle_signal, the others
    tleTritonTeamSignal with the team."""
    out = compile_flagtree(compile_kernel, signal_space_kernel, {"comm": "i64", "peer": "i32", "SPACE": "constexpr"},
                           {"SPACE": space})
    [call] = extern_calls(out.ttir)
    tail = ["arg:peer", 4, 1, SIGNAL_GROUP_KINDS["block"]]
    if team == "intra":
        assert call.symbol == "tle_signal" and call.operands == ["arg:comm", *tail]
    else:
        assert call.symbol == "tleTritonTeamSignal" and call.operands == ["arg:comm", TEAMS[team], *tail]


@triton.jit
def signal_refusal_kernel(comm, device_dptr: tl.constexpr, SPACE: tl.constexpr, OP: tl.constexpr,
                          VALUE: tl.constexpr, GROUP: tl.constexpr, CONTEXT: tl.constexpr, SCOPE: tl.constexpr,
                          RUNTIME: tl.constexpr):
    if RUNTIME:
        ft.signal(comm, 1, 0, VALUE, OP, SPACE, GROUP, CONTEXT, SCOPE)
    else:
        ft.signal(device_dptr, 1, 0, VALUE, OP, SPACE, GROUP, CONTEXT, SCOPE)


SIGNAL = {"device_dptr": CTX, "SPACE": "intra_node", "OP": "inc", "VALUE": None, "GROUP": "block", "CONTEXT": 0,
          "SCOPE": "system", "RUNTIME": False}


@pytest.mark.parametrize("changes, exc_type, message", [
    ({"SPACE": "cluster"}, ValueError, r"unknown space 'cluster': expected one of 'device', 'intra'"),
    ({"CONTEXT": -1}, ValueError, r"context must be in \[0, 2\*\*31\)"),
    ({"SCOPE": "block"}, ValueError, r"scope 'block' would make the signal visible within one GPU only"),
    ({"SCOPE": "cluster"}, ValueError, r"unknown scope 'cluster'"),
    ({"GROUP": "lanes"}, ValueError, r"group_kind 'lanes' needs a group size"),
    ({"GROUP": "thread"}, ValueError, r"group_kind 'thread' is not available in Triton"),
    ({"GROUP": "grid"}, ValueError, r"signals have no group_kind 'grid'"),
    ({"OP": "xor"}, ValueError, r"unknown op 'xor': expected one of 'inc', 'add'"),
    ({"VALUE": 2}, ValueError, r"op 'inc' adds 1 and takes no value"),
    ({"OP": "add"}, ValueError, r"op 'add' needs a value"),
    ({"device_dptr": None}, ValueError, r"device_dptr is required"),
])
def test_signal_refusals(compile_kernel, changes, exc_type, message):
    constexprs = dict(SIGNAL, **changes)
    with raises(exc_type, message):
        compile_flagtree(compile_kernel, signal_refusal_kernel,
                         {"comm": "i64", **{k: "constexpr" for k in constexprs}}, constexprs)


@triton.jit
def wait_refusal_kernel(device_dptr: tl.constexpr, KIND: tl.constexpr, TARGET: tl.constexpr, ORDER: tl.constexpr,
                        CONTEXT: tl.constexpr):
    ft.signal_wait(device_dptr, 0, KIND, TARGET, "block", CONTEXT, ORDER)


WAIT = {"device_dptr": CTX, "KIND": "signal", "TARGET": 1, "ORDER": "acquire", "CONTEXT": 0}


@pytest.mark.parametrize("changes, exc_type, message", [
    ({"KIND": "counter", "TARGET": None}, ValueError, r"wait_kind='counter' needs a target: the value the counter"),
    ({"KIND": "shadow"}, ValueError, r"wait_kind='shadow' waits for the word's shadow.*omit target"),
    ({"KIND": "counter", "ORDER": "release"}, ValueError, r"counter_wait cannot release"),
    ({"KIND": "counter", "CONTEXT": -1}, ValueError, r"context must be in \[0, 2\*\*31\)"),
    ({"KIND": "poll"}, ValueError, r"unknown wait_kind 'poll': expected 'signal', 'counter' or 'shadow'"),
    ({"TARGET": None}, ValueError, r"wait_kind='signal' needs a target"),
    ({"TARGET": -1}, ValueError, r"target must be in \[0, 2\*\*63\)"),
    ({"ORDER": "release"}, ValueError, r"signal_wait cannot release"),
    ({"CONTEXT": -2}, ValueError, r"context must be in \[0, 2\*\*31\)"),
])
def test_signal_wait_refusals(compile_kernel, changes, exc_type, message):
    constexprs = dict(WAIT, **changes)
    with raises(exc_type, message):
        compile_flagtree(compile_kernel, wait_refusal_kernel, {k: "constexpr" for k in constexprs}, constexprs)


@triton.jit
def rank_kernel(out, device_dptr: tl.constexpr, AXIS: tl.constexpr):
    tl.store(out, ft.shard_id(None, AXIS, device_dptr=device_dptr))


def test_other_refusals(compile_kernel):
    with raises(ValueError, r"device_dptr is required for axis 'node'"):
        compile_flagtree(compile_kernel, rank_kernel, {"out": "*i32", "device_dptr": "constexpr",
                                                       "AXIS": "constexpr"}, {"device_dptr": None, "AXIS": "node"})
    with raises(TypeError, r"mesh must be a device_mesh, got NoneType"):
        compile_flagtree(compile_kernel, rank_kernel, {"out": "*i32", "device_dptr": "constexpr",
                                                       "AXIS": "constexpr"}, {"device_dptr": CTX, "AXIS": 0})


def test_a_replaced_link_hook_is_reported(compile_kernel, monkeypatch):
    monkeypatch.setattr(triton.knobs.runtime, "add_stages_inspection_hook", None)
    # A context of its own: no cached kernel of another test can answer.
    ctx = DistContext(**dict(CTX.__dict__, comm_tag="hook"))
    with raises(ValueError, r"that hook was replaced after tle.flagtree was imported"):
        compile_flagtree(compile_kernel, world_kernel, CONTEXT_SIGNATURE, {"device_dptr": ctx, "mesh": NODE_MESH})
    # With extern_libs the kernel needs no hook.
    compile_kernel(world_kernel, CONTEXT_SIGNATURE, {"device_dptr": ctx, "mesh": NODE_MESH})


def test_the_hook_chains_a_hook_in_place(monkeypatch):
    seen = []
    monkeypatch.setattr(triton.knobs.runtime, "add_stages_inspection_hook",
                        lambda *args: seen.append(args))
    assert not _link.installed()
    _link.install()
    assert _link.installed()
    triton.knobs.runtime.add_stages_inspection_hook("backend", {}, "options", "language", 90)
    assert seen == [("backend", {}, "options", "language", 90)]


# ---- meshes, the context, the enums ----------------------------------------


def test_meshes():
    mesh = ft.device_mesh(ft.MeshConfig(node=[("rack", 2)], device=4, block=[("bx", 2), ("by", 3)]))
    assert mesh.shape == (2, 4, 2, 3) and mesh.dim_names == ("rack", "device", "bx", "by")
    assert mesh.size == 48 and mesh.ndim == 4
    sub = mesh[1, :, 0]
    assert sub.shape == (4, 3) and sub.dim_names == ("device", "by")
    assert sub.physical_ids[:4] == (24, 25, 26, 30)
    assert sub.launch_shape == mesh.shape
    assert mesh.flatten().dim_names == ("flat",) and mesh.reshape(8, 6).dim_names == ("dim0", "dim1")
    # Compile-time values: equal meshes are one key, different ones two.
    assert ft.device_mesh({"device": 2}) == MESH and hash(ft.device_mesh({"device": 2})) == hash(MESH)
    assert repr(mesh[0]) != repr(mesh[1]) and mesh[0] != mesh[1]
    assert copy.deepcopy(MESH) is MESH
    assert ft.MeshConfig(device=2).to_dict() == {"device": 2}
    with pytest.raises(TypeError):
        ft.device_mesh({"node": "2"})
    with pytest.raises(ValueError):
        ft.device_mesh({"node": []})
    with pytest.raises(ValueError):
        ft.device_mesh({"node": [("x", 0)]})
    with pytest.raises(IndexError):
        MESH[2]


def test_contexts_key_triton_caches_per_communicator():
    """Triton keys compiled kernels on a constexpr's repr (on disk) and its
    hash and equality (in memory): contexts of two communicators, of two
    ranks, of two buffers or of two bitcodes never share a kernel."""
    variants = [CTX, DistContext(CTX.mem, CTX.dev_comm, 0, 2, True, "1.2", "b"),
                DistContext(CTX.mem, CTX.dev_comm, 1, 2, True, "1.1", "b"),
                DistContext(CTX.mem + 64, CTX.dev_comm, 0, 2, True, "1.1", "b"),
                DistContext(CTX.mem, CTX.dev_comm, 0, 2, True, "1.1", "c")]
    assert len({repr(v) for v in variants}) == len(variants)
    assert len(set(variants)) == len(variants)
    same = DistContext(**CTX.__dict__)
    assert same == CTX and hash(same) == hash(CTX) and repr(same) == repr(CTX)
    assert CTX.cache_key == repr(CTX)
    assert (CTX[0], CTX[1]) == (CTX.mem, CTX.dev_comm) == CTX.get_packed_data()
    keys = {triton.compiler.ASTSource(fn=d2d_barrier_kernel, signature=CONTEXT_SIGNATURE,
                                      constexprs={"device_dptr": v, "mesh": MESH}).hash() for v in variants + [same]}
    assert len(keys) == len(variants)


def test_enums_are_flagtree_spellings():
    assert ft.MemoryOrder.ACQ_REL == "acqrel"
    assert [m.value for m in ft.GroupKind] == ["thread", "warp", "block", "tile_span", "lanes", "grid"]
    assert [m.value for m in ft.MemoryScope] == ["system", "device", "block", "thread"]
    assert [m.value for m in ft.BarrierKind] == ["arrive", "wait", "sync"]
    assert ft.device_type == "cuda"


def test_every_name_of_the_issue_is_exported():
    for name in ("distributed_barrier", "remote", "shard_id", "n_pes", "device_mesh", "MeshConfig", "device_type",
                 "BarrierKind", "MemoryOrder", "GroupKind", "MemoryScope", "get_mem_pool", "create_dist_tensor",
                 "cleanup_communicator", "signal", "signal_wait"):
        assert hasattr(ft, name), name
    for name in ("distributed_barrier", "remote", "shard_id", "n_pes", "signal", "signal_wait"):
        assert tl.core.is_builtin(getattr(ft, name)), name


# ---- on CPU ranks ------------------------------------------------------------

RANKS = "flagtree_ranks.py"


@pytest.mark.parametrize("case, passes, ranks", [("d2d", 3, 2), ("node", 1, 2), ("delay", 1, 2), ("coords", 4, 1),
                                                 ("signal", 2, 2), ("contexts", 2, 2), ("d2d world", 3, 2),
                                                 ("signal world", 2, 2)])
def test_on_cpu_ranks(case, passes, ranks):
    """The world cases use FlagTree's space='world', the world team: they
    skip, with the runtime's report as the reason, while the device
    library refuses that team, and run once it serves it."""
    from test_interpreter import PYTHON_DIR
    proc, _ = run_ranks(ranks, str(PYTHON_DIR / "tests" / RANKS), *case.split())
    # A rank refused the team (the others may then fail waiting for it).
    unsupported = [line for r in range(ranks) for line in rank_lines(proc.stdout, r) if line.startswith("UNSUPPORTED")]
    if unsupported:
        assert case.endswith(" world"), proc.stdout
        pytest.skip(f"the runtime does not serve FlagCX's WORLD team yet (issue 19): {unsupported[0]}")
    assert proc.returncode == 0, proc.stdout
    for rank in range(ranks):
        lines = rank_lines(proc.stdout, rank)
        assert not [line for line in lines if line.startswith("FAIL")], proc.stdout
        assert len([line for line in lines if line.startswith("PASS")]) >= passes, proc.stdout


def test_plain_memory_cannot_be_registered_across_processes():
    from test_interpreter import PYTHON_DIR
    proc, _ = run_ranks(2, str(PYTHON_DIR / "tests" / RANKS), "refuse")
    assert proc.returncode == 0, proc.stdout
    for rank in range(2):
        assert any("is not memory that another process can map" in line and "tle.cpu.shareable_array" in line
                   for line in rank_lines(proc.stdout, rank)), proc.stdout


def test_bitcode_digest_follows_the_file(tmp_path, monkeypatch):
    bc = tmp_path / "x.bc"
    bc.write_bytes(b"one")
    monkeypatch.setenv("TLE_DEVICE_BC", str(bc))
    first = _link.bitcode_digest()
    bc.write_bytes(b"two!")
    assert _link.bitcode_digest() != first
    monkeypatch.setenv("TLE_DEVICE_BC", str(tmp_path / "missing.bc"))
    assert _link.bitcode_digest() == "none"
    assert tle.EXTERN_LIB_NAME == "tle"


# ---- scripts/flagtree-tests.py: the one edit FlagTree's tests get -------------


def load_fetcher():
    import importlib.util
    from test_interpreter import PYTHON_DIR
    spec = importlib.util.spec_from_file_location("flagtree_tests", PYTHON_DIR.parent / "scripts" / "flagtree-tests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prepare_swaps_the_import_and_drops_only_flagcx_ptx_asserts(tmp_path, capsys):
    fetcher = load_fetcher()
    source = tmp_path / "in"
    source.mkdir()
    body = ("import os\nimport triton.experimental.tle.language as tle\n"
            "    assert \"distributed_barrier\" in compiled.asm[\"ttgir\"]\n"
            "    assert \"flagcxIntraBarrier\" in compiled.asm['ptx']\n"
            "    assert \"flagcxDevCommGetRank\" in compiled.asm[\"ptx\"]\n"
            "    assert \"tle_x\" in compiled.asm['ptx']\n"
            "    assert \"flagcxX\" in compiled.asm['ttgir']\n")
    for name in fetcher.MANIFEST:
        (source / name).write_text(body)
    fetcher.prepare(source, tmp_path / "out")
    for name in fetcher.MANIFEST:
        assert (tmp_path / "out" / name).read_text() == (
            "import os\nimport tle.flagtree as tle\n"
            "    assert \"distributed_barrier\" in compiled.asm[\"ttgir\"]\n"
            "    assert \"tle_x\" in compiled.asm['ptx']\n"
            "    assert \"flagcxX\" in compiled.asm['ttgir']\n")
    assert "removed assert \"flagcxIntraBarrier\"" in capsys.readouterr().out
    # The import must be there exactly once; the checksums catch any change.
    first = next(iter(fetcher.MANIFEST))
    (source / first).write_text("import triton\n")
    with pytest.raises(SystemExit, match="expected the line"):
        fetcher.prepare(source, tmp_path / "out")
    problems = fetcher.check(source)
    assert len(problems) == len(fetcher.MANIFEST) and "SHA-256" in problems[0]
    assert "missing" in fetcher.check(tmp_path / "nowhere")[0]


# ---- transfers between nodes, counters and shadows --------------------------
# Generated to TTIR only (test_onesided_language.ttir): the calls and their
# encodings, not the device library, are what these check.


@triton.jit
def node_transfer_kernel(device_dptr: tl.constexpr, mesh: tl.constexpr, peer, n):
    # FlagTree's inter-node all-gather shape: a put of this rank's block to
    # a world rank, then a signal there; the mirror-image get.
    ft.node_put(device_dptr, peer, 64, 0, 16, dtype=tl.float32)
    ft.node_put(device_dptr, 3, n, n, n, dtype=tl.bfloat16, netidx=1, signal=2, counter=0)
    ft.node_get(device_dptr, (1, 1), 8, 0, 4, dtype=tl.int64, scope=mesh)
    ft.signal_wait(device_dptr, 5, "counter", 2, context_idx=1)
    ft.signal_wait(device_dptr, 6, wait_kind="shadow", order="relaxed")


def test_node_transfers_and_waits_call_their_entry_points(bitcode):
    mesh = ft.device_mesh(ft.MeshConfig(node=2, device=2))
    calls = extern_calls(ttir(node_transfer_kernel, {"device_dptr": "constexpr", "mesh": "constexpr", "peer": "i32",
                                                     "n": "i64"}, {"device_dptr": CTX, "mesh": mesh}))
    assert [c.symbol for c in calls] == ["tleTritonPut", "tleTritonPut", "tleTritonGet", "tleTritonWaitCounter",
                                         "tleTritonWaitSignalShadow"]
    mem, comm = CTX.mem, CTX.dev_comm
    # Offsets and counts in bytes (elements x itemsize), team world (2),
    # no signal (-1), no counter (-1), context 0, block (2), relaxed (0).
    assert calls[0].operands == [comm, mem, 256, mem, 0, 64, 2, "arg:peer", -1, 0, 0, -1, 0, 2, 0]
    put = calls[1].operands
    assert put[:2] == [comm, mem] and put[6:] == [2, 3, 0, 2, 0, 0, 1, 2, 0]
    # A coordinate of the mesh is its physical id: (1, 1) of 2x2 is rank 3.
    assert calls[2].operands == [comm, mem, 64, mem, 0, 32, 2, 3, 0, 2, 0]
    assert calls[3].operands == [comm, 5, 2, 1, 2, 1]
    assert calls[4].operands == [comm, 6, 0, 2, 0]


@triton.jit
def node_refusal_kernel(device_dptr: tl.constexpr, DTYPE: tl.constexpr, NET: tl.constexpr, PEER: tl.constexpr,
                        N: tl.constexpr):
    ft.node_put(device_dptr, PEER, 0, 0, N, dtype=DTYPE, netidx=NET)


NODE = {"device_dptr": CTX, "DTYPE": tl.float32, "NET": 0, "PEER": 1, "N": 4}


@pytest.mark.parametrize("changes, exc_type, message", [
    ({"DTYPE": None}, ValueError, r"a node transfer needs dtype"),
    ({"NET": 4}, ValueError, r"netidx must be in \[0, 4\)"),
    ({"PEER": -1}, ValueError, r"shard_id must be >= 0"),
    ({"N": -1}, ValueError, r"nelems must be a non-negative number of elements"),
    ({"device_dptr": None}, ValueError, r"a node transfer needs the buffer"),
])
def test_node_transfer_refusals(compile_kernel, changes, exc_type, message):
    constexprs = dict(NODE, **changes)
    with raises(exc_type, message):
        compile_flagtree(compile_kernel, node_refusal_kernel, {k: "constexpr" for k in constexprs}, constexprs)
