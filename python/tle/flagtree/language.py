# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""FlagTree's distributed builtins, in FlagTree's names and parameter
orders, on TLE's device library.

Each builtin checks its arguments while the kernel compiles, as FlagTree's
do, refuses what TLE cannot serve with a message that says why (pointers
between nodes, network contexts, CTA clusters), and emits one non-pure
``extern_elementwise`` call of a TLE entry point named after FlagTree's op
(``tle_distributed_barrier``, ``tle_remote_pointer``,
``tle_get_device_id``, ``tle_get_world_rank``, ``tle_get_num_pes``,
``tle_signal``, ``tle_signal_wait``; abi.def), so that FlagTree's checks
of the TTGIR find those names. Barriers and signals of FlagTree's inter
and world spaces (FlagCX's INTER and WORLD teams) call TLE's team entry
points, ``tleTritonTeamBarrier`` and ``tleTritonTeamSignal``, which have no
FlagTree spelling. The bitcode is
linked without ``extern_libs`` (``_link``). Under Triton's interpreter the
calls run on CPU ranks, as ``tle.language``'s do.

``device_dptr`` (and ``remote``'s ``tensor``) is what ``create_dist_tensor``
returned, a ``tl.constexpr`` kernel argument as in FlagTree; or, TLE's way,
a runtime kernel argument holding ``Communicator.dev_comm`` (a buffer's
``handle`` for ``remote``), which does not recompile the kernel per
communicator.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from triton.language import core

from .. import language as _tle
from .. import runtime
from . import _link
from .context import DistContext
from .mesh import device_mesh

__all__ = ["BarrierKind", "GroupKind", "MemoryOrder", "MemoryScope", "distributed_barrier", "flush", "n_pes",
           "node_get", "node_put", "remote", "session_close", "session_open", "shard_id", "signal", "signal_wait"]


class BarrierKind(str, enum.Enum):
    ARRIVE = "arrive"
    WAIT = "wait"
    SYNC = "sync"


class MemoryOrder(str, enum.Enum):
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acqrel"


class GroupKind(str, enum.Enum):
    THREAD = "thread"
    WARP = "warp"
    BLOCK = "block"
    TILE_SPAN = "tile_span"
    LANES = "lanes"
    GRID = "grid"


class MemoryScope(str, enum.Enum):
    SYSTEM = "system"
    DEVICE = "device"
    BLOCK = "block"
    THREAD = "thread"


#: FlagTree's barrier and signal spaces (FlagCX teams): its signal maps
#: them to teams as ``_SIGNAL_SPACE_TO_TEAM_KIND`` in FlagTree's
#: ``tle/language/distributed.py`` does (intra 0, inter 1, world 2).
_INTRA_SPACES = ("device", "intra", "intra_node")
_INTER_SPACES = ("inter", "inter_node", "node")
_WORLD_SPACE = "world"
#: "node" is FlagTree's signal spelling of INTER, but its barrier once ran
#: space="node" as "device": a barrier of either meaning under that name
#: would silently be the other for some kernel (an INTER barrier on one
#: node passes alone), so the barrier refuses it and asks for a spelling
#: that says which.
_AMBIGUOUS_BARRIER_SPACE = "node"
#: FlagTree's memory orders, as TLE spells them.
_ORDERS = {"relaxed": "relaxed", "acquire": "acquire", "release": "release", "acqrel": "acq_rel",
           "acq_rel": "acq_rel", "seq_cst": "seq_cst"}
#: Memory scopes TLE serves. The barrier orders memory at system scope,
#: which is at least what "device" asks for; "block" and "thread" would
#: order memory within one GPU, which no barrier between GPUs is for.
_SCOPES = ("system", "device")
_INT32_MAX = 2**31 - 1


def _text(name: str, value: Any) -> Any:
    """A compile-time string argument, FlagTree's enum members included."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, enum.Enum):
        value = value.value
    return value.lower() if isinstance(value, str) else value


def _context(value: Any) -> DistContext | None:
    value = core._unwrap_if_constexpr(value)
    return value if isinstance(value, DistContext) else None


def _comm(name: str, value: Any, _semantic) -> core.tensor:
    """The communicator: ``create_dist_tensor``'s context (its address is
    then a constant of the kernel) or a runtime kernel argument."""
    if core._unwrap_if_constexpr(value) is None:
        raise ValueError(f"{name} is required: pass the context tle.flagtree.create_dist_tensor returned (or a "
                         f"communicator's dev_comm as a kernel argument)")
    ctx = _context(value)
    if ctx is not None:
        return _semantic.scalar_constant(ctx.dev_comm, core.int64)
    return _tle._address(name, value, _semantic)


def _call(symbol: str, args: list[core.tensor], ret: core.dtype, _semantic) -> core.tensor:
    return _tle._call(symbol, args, ret, _semantic, _link.bitcode_path)


def _check_mesh_axis(mesh: Any, space: str, needed: str) -> None:
    """FlagTree requires a mesh naming the level a barrier spans; TLE takes
    one or none, and checks one that is given the same way."""
    mesh = core._unwrap_if_constexpr(mesh)
    if mesh is None:
        return
    if not isinstance(mesh, device_mesh):
        raise TypeError(f"mesh must be a device_mesh or None, got {type(mesh).__name__}")
    if not any(needed in name for name in mesh.launch_dim_names):
        raise ValueError(f"space={space!r} requires mesh to define a {needed!r} topology axis; "
                         f"this mesh has {mesh.launch_dim_names}")


def _check_context_id(context_id: Any, name: str = "context_id") -> None:
    """A barrier's network context: a compile-time int below TLE's most
    contexts. FlagCX's context picks the network channel that carries a
    barrier between nodes, and its words are the same in every context;
    TLE has one channel, so every context is the same barrier."""
    value = core._unwrap_if_constexpr(context_id)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a compile-time int, got {type(value).__name__}")
    if not 0 <= value < runtime.MAX_CONTEXTS:
        raise ValueError(f"{name} {value} is not a network context: expected 0..{runtime.MAX_CONTEXTS - 1}")


@_tle._builtin
def distributed_barrier(mesh=None, device_dptr=None, space=None, group_kind="block", barrier_kind="sync",
                        order="acqrel", index=0, context_id=0, memory_scope="system", session=None, _semantic=None):
    """FlagTree's ``tle.distributed_barrier`` with an explicit space: the
    barrier between the GPUs of a FlagCX team on slot ``index``.

    ``space``: ``"device"``, ``"intra"``, ``"intra_node"``: the GPUs of the
    node (``tle_distributed_barrier``); ``"inter"``, ``"inter_node"``: this
    GPU's local rank on every node (team inter); ``"world"``: every GPU of
    the communicator (team world); the last two through
    ``tleTritonTeamBarrier``. ``"node"`` is refused as ambiguous.
    ``group_kind``, ``barrier_kind``, ``order`` (FlagTree spells acq_rel
    ``"acqrel"``; enums accepted) and ``index`` as in
    ``tle.language.distributed_barrier`` (``group_kind="grid"`` is intra's
    only). ``context_id``: a compile-time network context (any is the same
    barrier: FlagCX's context picks the channel that carries it, and TLE
    has one); ``memory_scope`` ``"system"`` or
    ``"device"`` (served at system scope). ``mesh`` may be None; when given
    it must name the level of ``space`` (``"device"`` for the node's GPUs,
    ``"node"`` for inter and world).

    ``session`` (TLE's, FlagTree has none): the session that
    ``session_open`` or the previous barrier of the session returned, for
    a barrier in a loop that reads no epoch word; the slot is
    the session's (``index`` is ignored), the space must be the node's
    GPUs and the group block or warp; the call returns the next session.
    Without it the barrier is FlagTree's stateless one and returns None.
    """
    space_name = _text("space", space)
    if space_name is None:
        raise ValueError("distributed_barrier without a space is FlagTree's barrier inside one GPU (over a CTA "
                         "cluster or a cooperative grid, chosen from the mesh); tle.flagtree serves the barrier "
                         "between GPUs: pass space='device' (or 'inter_node', 'world') and device_dptr")
    if not isinstance(space_name, str):
        raise TypeError(f"space must be a compile-time string, got {_tle._describe(space_name)}")
    if space_name == _AMBIGUOUS_BARRIER_SPACE:
        raise ValueError("space 'node' is ambiguous: FlagTree's barrier once ran it as 'device' (the GPUs of this "
                         "node) and its signal reads it as FlagCX's INTER team (this GPU's local rank on every "
                         "node); say which: space='intra_node' or space='inter_node'")
    if space_name in _INTER_SPACES or space_name == _WORLD_SPACE:
        _check_mesh_axis(mesh, space_name, "node")
        team = "world" if space_name == _WORLD_SPACE else "inter"
    elif space_name in _INTRA_SPACES:
        _check_mesh_axis(mesh, space_name, "device")
        team = "intra"
    else:
        allowed = ", ".join(repr(s) for s in _INTRA_SPACES + _INTER_SPACES + (_WORLD_SPACE,))
        raise ValueError(f"unknown space {space_name!r}: expected one of {allowed}")
    _check_context_id(context_id)
    scope = _text("memory_scope", memory_scope)
    if scope not in _SCOPES:
        if scope in ("block", "thread"):
            raise ValueError(f"memory_scope {scope!r} would order memory within one GPU only, which a barrier "
                             f"between GPUs cannot be for; TLE's barrier orders memory at system scope: use "
                             f"'system' (or 'device')")
        raise ValueError(f"unknown memory_scope {scope!r}: expected 'system' or 'device'")
    group = _text("group_kind", group_kind)
    if group in ("tile_span", "lanes"):
        raise ValueError(f"group_kind {group!r} needs a group size, which Triton's builtins cannot pass; use "
                         f"'block' (or 'warp' with num_warps=1)")
    memory_order = _text("order", order)
    memory_order = _ORDERS.get(memory_order, memory_order) if isinstance(memory_order, str) else memory_order
    comm = _comm("device_dptr", device_dptr, _semantic)
    if core._unwrap_if_constexpr(index) is None:  # FlagTree reads None as slot 0
        index = 0
    if core._unwrap_if_constexpr(session) is not None:
        index = None  # the session's slot
    return _tle._barrier("tle_distributed_barrier", comm, _text("barrier_kind", barrier_kind), group, memory_order,
                         index, _semantic, _link.bitcode_path, team=team, session=session)


@_tle._builtin
def session_open(device_dptr, group_kind="block", index=0, _semantic=None) -> core.tensor:
    """TLE's barrier session (``tle.language.session_open``) on slot
    ``index`` (FlagTree's default 0) of the node's GPUs, for
    ``distributed_barrier(..., session=s)`` in a loop."""
    if core._unwrap_if_constexpr(index) is None:
        index = 0
    return _tle._session_open(_comm("device_dptr", device_dptr, _semantic), _text("group_kind", group_kind), index,
                              _semantic, _link.bitcode_path)


@_tle._builtin
def session_close(device_dptr, session, group_kind="block", _semantic=None) -> core.tensor:
    """Ends the session (``tle.language.session_close``): returns 0 or the
    status of its wait that gave up."""
    return _tle._session_close(_comm("device_dptr", device_dptr, _semantic), session,
                               _text("group_kind", group_kind), _semantic, _link.bitcode_path)


def _linear_shard(shard_id: Any, scope: Any) -> int:
    """A compile-time shard id (an int, or a coordinate of ``scope``) as a
    linear rank."""
    if isinstance(shard_id, core.tuple):
        shard_id = tuple(core._unwrap_if_constexpr(v) for v in shard_id)
    if isinstance(shard_id, int) and not isinstance(shard_id, bool):
        if shard_id < 0:
            raise ValueError(f"shard_id must be >= 0, got {shard_id}")
        linear = shard_id
    else:
        if not shard_id or not all(isinstance(v, int) and not isinstance(v, bool) for v in shard_id):
            raise TypeError(f"shard_id must be an int, a tuple of ints or a runtime int32, got {shard_id!r}")
        if scope is None:
            raise ValueError("a tuple shard_id needs scope=device_mesh to linearize it")
        if not isinstance(scope, device_mesh):
            raise TypeError(f"scope must be a device_mesh when shard_id is a tuple, got {type(scope).__name__}")
        if len(shard_id) != scope.ndim:
            raise ValueError(f"shard_id {shard_id} has {len(shard_id)} coordinates; the mesh has {scope.ndim} axes")
        linear = 0
        for coord, size in zip(shard_id, scope.shape):
            if not 0 <= coord < size:
                raise ValueError(f"shard_id coordinate {coord} out of range for an axis of size {size}")
            linear = linear * size + coord
    if linear > _INT32_MAX:
        raise ValueError(f"shard_id {linear} exceeds the int32 range")
    return linear


@_tle._builtin
def remote(tensor=None, shard_id=None, scope=None, space="cluster", dtype=None, offset=None, coopkind=None,
           netidx=0, context_id=0, _semantic=None) -> core.tensor:
    """FlagTree's ``tle.remote`` with ``space="device"``: a pointer to
    element ``offset`` of peer ``shard_id``'s copy of the registered buffer.

    ``tensor``: ``create_dist_tensor``'s context, or a symmetric buffer's
    ``handle`` as a runtime kernel argument. ``dtype``: the element type
    (required). ``offset``: in elements (an int or a runtime integer; None
    is 0). ``shard_id``: the peer's rank in the node: an int, a runtime
    int32, or a coordinate tuple of the mesh ``scope``. Returns a scalar
    ``tl.pointer_type(dtype)``. ``space="cluster"`` (a CTA cluster's shared
    memory) is FlagTree's alone. ``space="node"`` marks a pointer whose
    ``tl.load``/``tl.store`` pair FlagTree's compiler turns into a network
    transfer; on stock Triton that transfer is the call ``node_put`` /
    ``node_get``, and ``remote(space="node")`` says so.
    """
    space_name = _text("space", space)
    if space_name == "cluster":
        raise ValueError("remote(space='cluster') addresses the shared memory of a CTA cluster, which TLE does not "
                         "manage; tle.flagtree serves space='device' (a peer GPU's copy of a registered buffer)")
    if space_name == "node":
        raise ValueError(_NODE_REMOTE_REWRITE)
    if space_name != "device":
        raise ValueError(f"space must be 'cluster', 'device' or 'node', got {space_name!r}")
    node_only = [] if core._unwrap_if_constexpr(coopkind) is None else ["coopkind"]
    for name, value in (("netidx", netidx), ("context_id", context_id)):
        value = core._unwrap_if_constexpr(value)
        if not isinstance(value, int) or isinstance(value, bool) or value != 0:
            node_only.append(name)
    if node_only:
        raise TypeError(f"device space does not accept node-only argument(s): {', '.join(node_only)}")
    element = _tle._element_type(dtype)
    if element is None:
        raise ValueError("remote(space='device') needs dtype, the element type of the registered buffer (offset "
                         "counts elements of it)")
    ctx = _context(tensor)
    if ctx is not None:
        mem = _semantic.scalar_constant(ctx.mem, core.int64)
    elif core._unwrap_if_constexpr(tensor) is None:
        raise ValueError("remote needs the buffer: the context tle.flagtree.create_dist_tensor returned")
    else:
        mem = _tle._address("tensor", tensor, _semantic)
    scope = core._unwrap_if_constexpr(scope)
    if scope is not None and not isinstance(scope, device_mesh):
        raise TypeError(f"scope must be a device_mesh or None, got {type(scope).__name__}")
    peer = core._unwrap_if_constexpr(shard_id)
    if peer is None:
        raise ValueError("remote needs shard_id, the peer's rank")
    if isinstance(peer, core.tensor):
        peer = _tle._scalar("shard_id", peer)
        if not peer.dtype.is_int() or peer.dtype.primitive_bitwidth != 32:
            raise TypeError(f"a runtime shard_id must be a scalar int32; got {_tle._describe(peer)}")
        peer = _semantic.cast(peer, core.int32)
    else:
        peer = _semantic.scalar_constant(_linear_shard(peer, scope), core.int32)
    itemsize = element.primitive_bitwidth // 8
    offset = core._unwrap_if_constexpr(offset)
    if offset is None:
        offset = 0
    if isinstance(offset, core.tensor):
        offset = _tle._scalar("offset", offset)
        if not offset.dtype.is_int() or offset.dtype.is_bool():
            raise TypeError(f"offset must be an integer number of elements; got {_tle._describe(offset)}")
        nbytes = _semantic.mul(_semantic.cast(offset, core.int64), _semantic.scalar_constant(itemsize, core.int64),
                               sanitize_overflow=False)
    else:
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise TypeError(f"offset must be an integer number of elements; got {offset!r}")
        if not 0 <= offset * itemsize < 2**63:
            raise ValueError(f"offset must be a non-negative number of elements; got {offset}")
        nbytes = _semantic.scalar_constant(offset * itemsize, core.int64)
    address = _call("tle_remote_pointer", [mem, nbytes, peer], core.int64, _semantic)
    return _semantic.cast(address, core.pointer_type(element))


#: What a FlagTree node transfer is on stock Triton (docs/flagtree.md,
#: "Transfers between nodes").
_NODE_REMOTE_REWRITE = (
    "remote(space='node') marks a pointer whose tl.load/tl.store pair FlagTree's compiler fuses into a FlagCX "
    "node transfer (its TleFuseNodeRemoteTransfers pass), a compilation stage stock Triton does not have; "
    "tle.flagtree serves the same transfer as one call: tl.store(remote(ctx, peer, space='node', dtype=T) + "
    "dst_off + offs, tl.load(buf + src_off + offs, mask=offs < n), mask=offs < n) is "
    "node_put(ctx, peer, dst_off, src_off, n, dtype=T), and tl.store(buf + dst_off + offs, "
    "tl.load(remote(ctx, peer, space='node', dtype=T) + src_off + offs)) is "
    "node_get(ctx, peer, src_off, dst_off, N, dtype=T) (offsets and counts in elements of T; without a mask n "
    "is the tl.arange extent N; coopkind and netidx as on remote)")
#: FlagTree's network contexts (its _NODE_INTER_CONTEXT_COUNT): a
#: compile-time netidx must be below it; the device checks a runtime one
#: against the communicator's contexts.
_NODE_CONTEXTS = 4


def _node_handles(tensor: Any, device_dptr: Any, _semantic) -> tuple[core.tensor, core.tensor]:
    """(buffer, communicator) of a node transfer: create_dist_tensor's
    context, or a buffer handle and a communicator as runtime arguments."""
    ctx = _context(tensor)
    if ctx is not None:
        if core._unwrap_if_constexpr(device_dptr) is not None:
            raise ValueError("device_dptr is taken from the context create_dist_tensor returned; omit it")
        return (_semantic.scalar_constant(ctx.mem, core.int64), _semantic.scalar_constant(ctx.dev_comm, core.int64))
    if core._unwrap_if_constexpr(tensor) is None:
        raise ValueError("a node transfer needs the buffer: the context tle.flagtree.create_dist_tensor returned")
    if core._unwrap_if_constexpr(device_dptr) is None:
        raise ValueError("a node transfer on a buffer handle needs device_dptr, the communicator (or pass the "
                         "context create_dist_tensor returned)")
    return _tle._address("tensor", tensor, _semantic), _tle._address("device_dptr", device_dptr, _semantic)


def _node_peer(shard_id: Any, scope: Any, _semantic) -> Any:
    """FlagTree's node peer: a world rank (int or runtime int32), or a
    coordinate of ``scope`` resolved through its physical ids."""
    scope = core._unwrap_if_constexpr(scope)
    if scope is not None and not isinstance(scope, device_mesh):
        raise TypeError(f"scope must be a device_mesh or None, got {type(scope).__name__}")
    peer = core._unwrap_if_constexpr(shard_id)
    if peer is None:
        raise ValueError("a node transfer needs shard_id, the peer's world rank")
    if isinstance(peer, core.tensor):
        peer = _tle._scalar("shard_id", peer)
        if not peer.dtype.is_int() or peer.dtype.primitive_bitwidth != 32:
            raise TypeError(f"a runtime shard_id must be a scalar int32; got {_tle._describe(peer)}")
        return _semantic.cast(peer, core.int32)
    coordinate = isinstance(peer, (tuple, list, core.tuple))
    linear = _linear_shard(peer, scope)
    if coordinate:
        linear = scope.physical_ids[linear]
    return linear


def _node_context(netidx: Any) -> Any:
    value = core._unwrap_if_constexpr(netidx)
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value < _NODE_CONTEXTS:
        raise ValueError(f"netidx must be in [0, {_NODE_CONTEXTS}) (FlagTree's network contexts), got {value}")
    return value


def _elements(name: str, value: Any, itemsize: int, _semantic) -> Any:
    """An element count or offset as bytes (an int, or a runtime int64)."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, core.tensor):
        value = _tle._scalar(name, value)
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"{name} must be an integer number of elements; got {_tle._describe(value)}")
        return _semantic.mul(_semantic.cast(value, core.int64), _semantic.scalar_constant(itemsize, core.int64),
                             sanitize_overflow=False)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer number of elements; got {value!r}")
    if not 0 <= value * itemsize < 2**63:
        raise ValueError(f"{name} must be a non-negative number of elements; got {value}")
    return value * itemsize


def _node_dtype(dtype: Any) -> int:
    element = _tle._element_type(dtype)
    if element is None:
        raise ValueError("a node transfer needs dtype, the element type of the registered buffer (offsets and "
                         "counts are in its elements)")
    return element.primitive_bitwidth // 8


@_tle._builtin
def node_put(tensor, shard_id, dst_offset, src_offset, nelems, dtype=None, scope=None, coopkind="block", netidx=0,
             device_dptr=None, signal=None, signal_op="inc", signal_value=None, counter=None,
             _semantic=None) -> None:
    """FlagTree's node put (the ``tle.node_put`` its compiler makes of a
    ``tl.load`` of the local buffer stored through ``remote(...,
    space="node")``) as a call: copy ``nelems`` elements of ``dtype`` from
    element ``src_offset`` of this GPU's copy of the registered buffer to
    element ``dst_offset`` of world rank ``shard_id``'s copy, the program
    copying together (``tle.language.put`` with team ``"world"``: peer
    pointers on this node, the network past it).

    ``tensor``: create_dist_tensor's context (or a buffer handle, with
    ``device_dptr``). ``shard_id``: a world rank (int or runtime int32) or
    a coordinate of ``scope``. ``coopkind``: ``"block"`` (or ``"warp"`` with
    ``num_warps=1``). ``netidx``: the network context, in ``[0, 4)`` or a
    runtime int32. TLE's additions: ``signal`` / ``signal_op`` /
    ``signal_value`` attach a signal to the peer released after the data,
    ``counter`` a local counter that grows when the source may be reused.
    Like FlagTree's, a put without a signal tells the peer nothing: follow
    it with ``signal(..., space="world")``.
    """
    itemsize = _node_dtype(dtype)
    mem, comm = _node_handles(tensor, device_dptr, _semantic)
    _tle._put("tleTritonPut", comm, mem, _elements("dst_offset", dst_offset, itemsize, _semantic), mem,
              _elements("src_offset", src_offset, itemsize, _semantic),
              _elements("nelems", nelems, itemsize, _semantic), _node_peer(shard_id, scope, _semantic), "world",
              signal, signal_op, signal_value, counter, _node_context(netidx), _signal_group(coopkind), "relaxed",
              _semantic, _link.bitcode_path)


@_tle._builtin
def node_get(tensor, shard_id, src_offset, dst_offset, nelems, dtype=None, scope=None, coopkind="block", netidx=0,
             device_dptr=None, _semantic=None) -> None:
    """FlagTree's node get as a call: copy ``nelems`` elements of ``dtype``
    from element ``src_offset`` of world rank ``shard_id``'s copy of the
    registered buffer to element ``dst_offset`` of this GPU's copy
    (``tle.language.get`` with team ``"world"``). Between nodes the data
    has landed after ``flush(..., netidx)`` (TLE's, in ``tle.language``) or
    a signal the peer sends after it; the arguments are ``node_put``'s."""
    itemsize = _node_dtype(dtype)
    mem, comm = _node_handles(tensor, device_dptr, _semantic)
    _tle._get("tleTritonGet", comm, mem, _elements("src_offset", src_offset, itemsize, _semantic), mem,
              _elements("dst_offset", dst_offset, itemsize, _semantic),
              _elements("nelems", nelems, itemsize, _semantic), _node_peer(shard_id, scope, _semantic), "world",
              _node_context(netidx), _signal_group(coopkind), "relaxed", _semantic, _link.bitcode_path)


@_tle._builtin
def flush(device_dptr, netidx=0, coopkind="block", _semantic=None) -> None:
    """TLE's addition: return when every node transfer this program issued
    on network context ``netidx`` has completed (``tle.language.flush``,
    FlagCX's ``flagcxDevFlush``): a ``node_get``'s data has landed in this
    GPU's buffer. FlagTree has no such builtin; its node get is complete
    only when a signal from the peer says so."""
    comm = _comm("device_dptr", device_dptr, _semantic)
    args = [comm, _tle._int32("netidx", _node_context(netidx), _semantic),
            _semantic.scalar_constant(_tle._signal_group(_signal_group(coopkind), _semantic), core.int32),
            _semantic.scalar_constant(_tle.ORDERS["acq_rel"], core.int32)]
    _call("tleTritonFlush", args, core.int32, _semantic)


def _rank_query(symbol: str, device_dptr: Any, _semantic) -> core.tensor:
    return _call(symbol, [_comm("device_dptr", device_dptr, _semantic)], core.int32, _semantic)


@_tle._builtin
def n_pes(dev_mem_ptr, _semantic=None) -> core.tensor:
    """The number of GPUs of the node (the communicator's size), int32."""
    return _rank_query("tle_get_num_pes", dev_mem_ptr, _semantic)


def _axis_index(mesh: device_mesh, axis: Any) -> int:
    names = mesh.launch_dim_names
    if isinstance(axis, int) and not isinstance(axis, bool):
        index = axis + len(names) if axis < 0 else axis
        if not 0 <= index < len(names):
            raise IndexError(f"axis index {axis} out of range for a mesh of {len(names)} axes")
        return index
    if isinstance(axis, str):
        if axis not in names:
            raise ValueError(f"unknown mesh axis {axis!r}; the mesh's axes are {names}")
        return names.index(axis)
    raise TypeError(f"axis must be an int or a str, got {type(axis).__name__}")


@_tle._builtin
def shard_id(mesh, axis, device_dptr=None, _semantic=None) -> core.tensor:
    """This shard's coordinate on ``axis`` (int32).

    ``"device"``: this GPU's rank in the node; ``"node"``: the node's index
    (world rank // GPUs per node: 0 on one node); both need ``device_dptr``.
    Any other axis (a name or an index of ``mesh``): the program's
    coordinate in the mesh's launch shape, from ``tl.program_id(0)``
    (programs beyond the mesh's size wrap around; an axis of size 1 is 0).
    Unlike FlagTree, this sets no CTA cluster on the launch.
    """
    mesh = core._unwrap_if_constexpr(mesh)
    axis = core._unwrap_if_constexpr(axis)
    if axis in ("device", "node") and core._unwrap_if_constexpr(device_dptr) is None:
        raise ValueError(f"device_dptr is required for axis {axis!r}")
    if axis == "device":
        return _rank_query("tle_get_device_id", device_dptr, _semantic)
    if axis == "node":
        world_rank = _rank_query("tle_get_world_rank", device_dptr, _semantic)
        per_node = _rank_query("tle_get_num_pes", device_dptr, _semantic)
        return _semantic.floordiv(world_rank, per_node)
    if not isinstance(mesh, device_mesh):
        raise TypeError(f"mesh must be a device_mesh, got {type(mesh).__name__}")
    index = _axis_index(mesh, axis)
    shape = mesh.launch_shape
    size = math.prod(shape)
    dim = shape[index]
    if dim == 1:
        return _semantic.scalar_constant(0, core.int32)
    stride = math.prod(shape[index + 1:])
    coord = _semantic.mod(core.program_id(0, _semantic=_semantic), _semantic.scalar_constant(size, core.int32))
    if stride > 1:
        coord = _semantic.floordiv(coord, _semantic.scalar_constant(stride, core.int32))
    if stride * dim < size:
        coord = _semantic.mod(coord, _semantic.scalar_constant(dim, core.int32))
    return coord


#: FlagTree's signal spaces (FlagCX teams), every one served.
_SIGNAL_SPACES = _INTRA_SPACES + _INTER_SPACES + (_WORLD_SPACE,)
#: FlagTree's wait kinds, every one served.
_WAIT_KINDS = ("signal", "counter", "shadow")


def _signal_space(space: Any) -> str:
    """FlagTree's signal ``space`` as a TLE team, as FlagTree maps it: the
    intra spellings to intra, ``"inter"``, ``"inter_node"`` and ``"node"``
    to inter, ``"world"`` to world."""
    space_name = _text("space", space)
    if not isinstance(space_name, str):
        raise TypeError(f"space must be a compile-time string, got {_tle._describe(space_name)}")
    if space_name in _INTRA_SPACES:
        return "intra"
    if space_name in _INTER_SPACES:
        return "inter"
    if space_name == _WORLD_SPACE:
        return "world"
    allowed = ", ".join(repr(s) for s in _SIGNAL_SPACES)
    raise ValueError(f"unknown space {space_name!r}: expected one of {allowed}")


def _signal_group(group_kind: Any) -> Any:
    group = _text("group_kind", group_kind)
    if group in ("tile_span", "lanes"):
        raise ValueError(f"group_kind {group!r} needs a group size, which Triton's builtins cannot pass; use "
                         f"'block' (or 'warp' with num_warps=1)")
    return group


@_tle._builtin
def signal(device_dptr, peer, slot_id, value=None, op="inc", space="intra_node", group_kind="block", context_idx=0,
           scope="system", _semantic=None) -> None:
    """FlagTree's ``tle.signal``: add to signal word ``slot_id`` of GPU
    ``peer`` of the team ``space`` names, as a release
    (``tle.language.signal``; entry point ``tle_signal``, or
    ``tleTritonTeamSignal`` for the inter and world spaces).

    ``op``: ``"inc"`` adds 1, ``"add"`` adds ``value`` (an int or a runtime
    integer). ``peer`` and ``slot_id``: ints or runtime int32 (``slot_id``
    below the communicator's ``n_signals``, checked at run time).
    ``space``: ``"intra_node"`` (also ``"intra"``, ``"device"``): ``peer``
    is a GPU of this node; ``"inter_node"`` (also ``"inter"``, ``"node"``):
    a node (this GPU's local rank there); ``"world"``: a world rank.
    ``group_kind``: ``"block"`` or ``"warp"`` (``num_warps=1``).
    ``context_idx``: the network context whose word it adds to (an int or a
    runtime int32 below the communicator's contexts, checked at run time:
    each has its own signal words); ``scope`` (in FlagTree's documentation)
    ``"system"`` or ``"device"``: a signal is always system-wide.
    """
    team = _signal_space(space)
    _check_signal_scope(scope)
    op_name = _text("op", op)
    comm = _comm("device_dptr", device_dptr, _semantic)
    _tle._signal("tle_signal", comm, peer, slot_id, op_name, value, _signal_group(group_kind), _semantic,
                 _link.bitcode_path, index_name="slot_id", team=team, context=context_idx)


def _check_signal_scope(scope: Any) -> None:
    scope = _text("scope", scope)
    if scope not in _SCOPES:
        if scope in ("block", "thread"):
            raise ValueError(f"scope {scope!r} would make the signal visible within one GPU only; a signal is for "
                             f"another GPU and TLE's is system-wide: use 'system' (or 'device')")
        raise ValueError(f"unknown scope {scope!r}: expected 'system' or 'device'")


@_tle._builtin
def signal_wait(device_dptr, slot_id, wait_kind="signal", target=None, group_kind="block", context_idx=0,
                order="acquire", _semantic=None) -> None:
    """FlagTree's ``tle.signal_wait``: wait, with TLE's wait deadline, until

    - ``wait_kind="signal"``: this GPU's signal word ``slot_id`` is at least
      ``target`` (``tle_signal_wait``);
    - ``"counter"``: this GPU's counter word ``slot_id`` is at least
      ``target`` (FlagCX's ``flagcxDevWaitCounter``; a put with a counter
      adds 1 when its source may be reused);
    - ``"shadow"``: signal word ``slot_id`` reaches its shadow, the value
      the kernel expects it to reach (FlagCX's
      ``flagcxDevWaitSignalMeetShadow``; ``target`` must be omitted, and
      ``tle.language.shadow_increase`` raises the shadow).

    ``target``: an int or a runtime integer (unsigned 64-bit).
    ``group_kind`` as for ``signal``; ``context_idx``: the network context
    of the word (an int or a runtime int32, checked at run time). ``order``: ``"acquire"`` (default), ``"relaxed"``
    (FlagTree's two), or TLE's ``"acq_rel"`` / ``"acqrel"`` and ``"seq_cst"``.
    """
    kind = _text("wait_kind", wait_kind)
    if kind not in _WAIT_KINDS:
        raise ValueError(f"unknown wait_kind {kind!r}: expected 'signal', 'counter' or 'shadow'")
    has_target = core._unwrap_if_constexpr(target) is not None
    if kind == "shadow" and has_target:
        raise ValueError("wait_kind='shadow' waits for the word's shadow, the target the kernel keeps with "
                         "shadow_increase; omit target")
    if kind != "shadow" and not has_target:
        raise ValueError(f"wait_kind={kind!r} needs a target: the value the "
                         f"{'word' if kind == 'signal' else 'counter'} must reach")
    memory_order = _text("order", order)
    memory_order = _ORDERS.get(memory_order, memory_order) if isinstance(memory_order, str) else memory_order
    comm = _comm("device_dptr", device_dptr, _semantic)
    group = _signal_group(group_kind)
    if kind == "signal":
        _tle._signal_wait("tle_signal_wait", comm, slot_id, target, group, memory_order, _semantic,
                          _link.bitcode_path, index_name="slot_id", context=context_idx)
    elif kind == "counter":
        _tle._counter_wait("tleTritonWaitCounter", comm, slot_id, target, context_idx, group, memory_order,
                           _semantic, _link.bitcode_path, index_name="slot_id")
    else:
        _tle._shadow_wait("tleTritonWaitSignalShadow", comm, slot_id, context_idx, group, memory_order, _semantic,
                          _link.bitcode_path, index_name="slot_id")
