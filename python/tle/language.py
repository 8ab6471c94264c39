# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE's device functions for ``@triton.jit`` kernels.

Each function is a Triton builtin that checks its arguments while the kernel
is being compiled and emits one non-pure ``extern_elementwise`` call into
TLE's device bitcode (``tleTritonBarrier``, ``tleTritonIntraRank``, ...).
Every launch of a kernel that uses them must link that bitcode::

    import tle
    import tle.language as tlx

    @triton.jit
    def kernel(comm, mem, ...):
        peer = (tlx.intra_rank(comm) + 1) % tlx.intra_size(comm)
        dst = tlx.intra_pointer(mem, 0, peer, dtype=tl.float32)
        ...
        tlx.distributed_barrier(comm, index=tl.program_id(0))

    kernel[grid](comm.dev_comm, buf.handle, ..., extern_libs=tle.extern_libs())

Point to point, a program tells one peer that data is ready and the peer
waits for exactly that::

    tl.store(dst + offs, data)               # into the peer's buffer
    tlx.signal(comm, peer, index=0)          # release: publishes the stores
    ...
    tlx.signal_wait(comm, index=0, target=k) # acquire: sees the peer's data

The communicator (``comm``) and buffer handles (``mem``) are ordinary kernel
arguments holding device addresses (Python ints, typed ``i64`` by Triton),
never ``tl.constexpr``: a new communicator reuses the compiled kernel.

Scalar code in a Triton program runs on every thread of the program, so every
call here is executed by all ``num_warps * 32`` threads of each program.
That is what the ``block`` group (the default) expects; see
``distributed_barrier`` for what it means for the other groups.

Any bad argument raises at compile time; Triton reports it as a
``triton.compiler.errors.CompilationError`` pointing at the call, with the
message of the ``ValueError``/``TypeError`` raised here.

Under Triton's interpreter (``TRITON_INTERPRET=1``) the same functions check
the same arguments and then call the host build of the device library
instead (``tle._interp``): the kernel runs unchanged on CPU ranks.
"""

from __future__ import annotations

import functools
import operator
import os
import re
import sys
from typing import Any, Callable

from triton.language import core

from . import EXTERN_LIB_NAME, _abigen, _interp, runtime

#: The device ABI's encodings and legality rules, generated from abi.def and
#: rules.def (tle/_abigen.py): every table and rule check below is read from
#: it, so that this front end, the dialect's verifiers and the device library
#: apply the same rules (python/tests/test_rules.py compares the verdicts).
_abi = _abigen.load()

#: Barrier kinds, encoded as tleTritonBarrier's ``barrierKind``.
BARRIER_KINDS = dict(_abi.BARRIER_KIND)
#: Cooperative groups of the barrier, encoded as tleTritonBarrier's
#: ``groupKind`` (FlagCX's coop kinds, plus TLE's grid = 5): the groups
#: rules.def's Barrier serves.
GROUP_KINDS = {group: _abi.COOP[group] for group in _abi.GROUP_RULES["barrier"]}
#: Memory orders, encoded as FlagCX's flagcxDeviceMemoryOrder_t.
ORDERS = dict(_abi.ORDER)
#: Teams, encoded as abi.def's TeamKind (tleTritonTeamBarrier's
#: ``teamKind``): the ranks of this node, the same local rank on every node
#: (a rail), every rank.
TEAMS = dict(_abi.TEAM)
#: Barrier spaces. FlagTree also named "node", and silently ran it as
#: "device"; TLE has only the intra-node (device) barrier and rejects it.
SPACES = ("device",)
#: What ``signal`` does to the word: add 1, or add ``value``.
SIGNAL_OPS = ("inc", "add")
#: Groups of the signal functions (FlagCX's coop kinds; there is no grid
#: signal): the encoding tleTritonSignal and tleTritonSignalWait take.
SIGNAL_GROUP_KINDS = {group: _abi.COOP[group] for group in _abi.GROUP_RULES["signal"]}
#: Orders of ``signal_wait``, ``read_signal`` and the counter and shadow
#: waits: they only observe, so "release" (whose half they would drop) is
#: refused (rules.def's Observe).
OBSERVER_ORDERS = {k: ORDERS[k] for k in _abi.ORDER_RULES["observe"]}

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


def _describe(value: Any) -> str:
    if isinstance(value, core.tensor):
        return f"a runtime value of type {value.type}"
    return repr(value)


def _choice(name: str, value: Any, table: dict[str, int] | tuple[str, ...]) -> str:
    """A compile-time string argument that must be one of ``table``."""
    value = core._unwrap_if_constexpr(value)
    allowed = ", ".join(repr(k) for k in table)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a compile-time string, one of {allowed}; got {_describe(value)}")
    if value not in table:
        raise ValueError(f"unknown {name} {value!r}: expected one of {allowed}")
    return value


def _scalar(name: str, value: Any) -> core.tensor:
    """A runtime scalar (not a block) argument."""
    if not isinstance(value, core.tensor):
        raise TypeError(f"{name} must be a runtime scalar; got {_describe(value)}")
    if value.type.is_block():
        shape = [core._unwrap_if_constexpr(d) for d in value.shape]
        raise TypeError(f"{name} must be a scalar, not a block of shape {shape}")
    return value


def _address(name: str, value: Any, _semantic) -> core.tensor:
    """A device address passed as a kernel argument, as an int64 scalar."""
    if not isinstance(core._unwrap_if_constexpr(value), core.tensor):
        raise TypeError(f"{name} must be a kernel argument holding a device address (an int such as "
                        f"Communicator.dev_comm or SymmetricBuffer.handle), not the compile-time constant "
                        f"{_describe(core._unwrap_if_constexpr(value))}: a constant would bake the address "
                        f"into the kernel; do not declare it tl.constexpr")
    value = _scalar(name, value)
    dtype = value.dtype
    if dtype.is_ptr() or (dtype.is_int() and not dtype.is_bool() and dtype.int_bitwidth in (32, 64)):
        return _semantic.cast(value, core.int64)
    raise TypeError(f"{name} must be an integer address (int64) or a pointer; got {_describe(value)}")


def _constant(value: int, dtype: core.dtype, _semantic) -> Any:
    """A compile-time argument of an entry point's call: the builder's
    scalar, or under the interpreter the value itself (``_interp.Constant``;
    making the interpreter's tensor was most of an interpreted call's
    time). Only calls take it (``_call``), never the builder's arithmetic."""
    if _interp.is_interpreter(_semantic):
        return _interp.Constant(value, dtype)
    return _semantic.scalar_constant(value, dtype)


def _int32(name: str, value: Any, _semantic) -> core.tensor:
    """A non-negative int32: a compile-time int or a runtime int32 scalar."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, core.tensor):
        value = _scalar(name, value)
        if value.dtype != core.int32:
            raise TypeError(f"{name} must be int32; got {_describe(value)} (convert it with .to(tl.int32))")
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or a runtime int32 scalar; got {_describe(value)}")
    if not 0 <= value <= _INT32_MAX:
        raise ValueError(f"{name} must be in [0, 2**31); got {value}")
    return _constant(value, core.int32, _semantic)


def _offset(value: Any, _semantic) -> core.tensor:
    """A byte offset: a non-negative compile-time int or a runtime integer scalar, as int64."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, core.tensor):
        value = _scalar("offset", value)
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"offset must be an integer (bytes); got {_describe(value)}")
        return _semantic.cast(value, core.int64)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"offset must be an integer number of bytes; got {_describe(value)}")
    if not 0 <= value < 2**63:
        raise ValueError(f"offset must be a non-negative number of bytes; got {value}")
    return _constant(value, core.int64, _semantic)


def _word_value(name: str, value: Any, _semantic) -> core.tensor:
    """A signal value (an addend or a target): a compile-time int in
    [0, 2**63) or a runtime integer scalar, as int64 (the device reads it as
    unsigned 64 bits)."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, core.tensor):
        value = _scalar(name, value)
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"{name} must be an integer; got {_describe(value)}")
        return _semantic.cast(value, core.int64)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or a runtime integer scalar; got {_describe(value)}")
    if not 0 <= value <= _INT64_MAX:
        raise ValueError(f"{name} must be in [0, 2**63); got {value}")
    return _constant(value, core.int64, _semantic)


def _signal_group(group_kind: Any, _semantic) -> int:
    """The encoding of a signal group, with the barrier's compile-time
    rules: no thread group in Triton, a warp group only for one warp, and no
    grid."""
    if core._unwrap_if_constexpr(group_kind) in GROUP_KINDS.keys() - SIGNAL_GROUP_KINDS.keys():
        raise ValueError(f"signals have no group_kind {core._unwrap_if_constexpr(group_kind)!r}: a signal is made "
                         f"by one program (block) or one warp; use 'block'")
    group = _choice("group_kind", group_kind, SIGNAL_GROUP_KINDS)
    if group == "thread":
        raise ValueError("group_kind 'thread' is not available in Triton: every thread of a program executes the "
                         "call, so each would signal (or poll) separately; use 'block'")
    options = getattr(_semantic.builder, "options", None)
    if (group == "warp" and not _interp.is_interpreter(_semantic) and options is not None
            and getattr(options, "num_warps", 1) != 1):
        raise ValueError(f"group_kind 'warp' needs num_warps=1 (every warp of the program executes the call, "
                         f"and this kernel has num_warps={options.num_warps}); use 'block'")
    return SIGNAL_GROUP_KINDS[group]


def _alternatives(names) -> str:
    """``names`` as prose: 'a', 'b' or 'c'."""
    names = [repr(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _observer_order(order: Any, call: str) -> int:
    if core._unwrap_if_constexpr(order) in ORDERS.keys() - OBSERVER_ORDERS.keys():
        raise ValueError(f"{call} cannot release (it only observes the word); use order "
                         f"{_alternatives(OBSERVER_ORDERS)}")
    return OBSERVER_ORDERS[_choice("order", order, OBSERVER_ORDERS)]


def check_barrier_rules(barrier_kind: str, order: str, group_kind: str, team: str = "intra",
                        session: bool = False) -> None:
    """rules.def's verdict on a barrier half ``barrier_kind`` with memory
    order ``order``, executed by group ``group_kind`` on team ``team`` (a
    session's with ``session``): raises ValueError where the dialect's
    verifier rejects the same barrier. Spellings as in abi.def. Triton's own
    limits (no thread group, warp only for one warp, grid only for a
    co-resident launch) are not rules of the ABI and are checked apart."""
    if order not in _abi.ORDER_RULES[barrier_kind]:
        half = "acquire" if _abi.ORDER_HALVES[order][0] else "release"
        raise ValueError(f"barrier_kind {barrier_kind!r} cannot {half} (order {order!r} has no half that "
                         f"{barrier_kind!r} performs, so it would silently be relaxed); use order "
                         f"{_alternatives(_abi.ORDER_RULES[barrier_kind])}")
    teams = _abi.GROUP_RULES["barrier"].get(group_kind, ())
    if team not in teams:
        why = " (the co-resident launch spans the GPUs of one node)" if group_kind == "grid" else ""
        raise ValueError(f"group_kind {group_kind!r} is only available with team {_alternatives(teams)}{why}; use "
                         f"group_kind 'block' for team {team!r}")
    if session:
        _check_session_rules(group_kind, team, "distributed_barrier")


def _check_session_rules(group: str, team: str, call: str) -> None:
    """rules.def's Session: which groups and teams a session serves."""
    rule = _abi.GROUP_RULES["session"]
    if team not in rule.get(group, (team,)):
        raise ValueError(f"{call}: sessions are team {_alternatives(rule[group])} barriers; team {team!r} has no "
                         f"session form")
    if group not in rule:
        served = sorted(g for g in rule if g != "thread")  # Triton has no thread group
        raise ValueError(f"{call}: sessions serve the {' and '.join(repr(g) for g in served)} groups; the "
                         f"{group} barrier keeps its own state: use a stateless barrier (session=None)")


def _element_type(dtype: Any) -> core.dtype | None:
    dtype = core._unwrap_if_constexpr(dtype)
    if dtype is None:
        return None
    if not isinstance(dtype, core.dtype) or isinstance(dtype, core.pointer_type) or dtype.is_block():
        raise TypeError(f"dtype must be a Triton element type such as tl.float32, or None; got {dtype!r}")
    return dtype


def _library_path(_semantic) -> str:
    """The bitcode path this compilation links. The launch must be CUDA and
    link TLE's bitcode: say so now rather than let ptxas report an
    unresolved function."""
    options = getattr(_semantic.builder, "options", None)
    if options is None:  # no compile options (e.g. a front end without them)
        return ""
    backend = getattr(options, "backend_name", "cuda")
    if backend != "cuda":
        raise ValueError(f"TLE supports Triton's CUDA backend only; this kernel is compiled for {backend!r}")
    libs = dict(getattr(options, "extern_libs", None) or ())
    if EXTERN_LIB_NAME not in libs:
        raise ValueError("this kernel calls TLE's device library, which is not linked: launch it with "
                         "extern_libs=tle.extern_libs() (or compile it with options={'extern_libs': "
                         "tle.extern_libs()})")
    return libs[EXTERN_LIB_NAME]


def _call(symbol: str, args: list[Any], ret: core.dtype, _semantic,
          library: Callable[[Any], str] = _library_path, result: bool = True) -> core.tensor | None:
    """One non-pure call of a TLE entry point with already-typed scalars
    (under the interpreter: the call itself, on the CPU). ``library`` gives
    the bitcode's path for this compilation (``tle.flagtree`` links it
    itself instead of requiring ``extern_libs``). ``result`` False: the
    caller drops the result (the interpreter then makes no tensor of it)."""
    if _interp.is_interpreter(_semantic):
        return _interp.call(symbol, args, ret, _semantic, result)
    signature = tuple(a.dtype for a in args)
    return core.extern_elementwise(EXTERN_LIB_NAME, library(_semantic), args, {signature: (symbol, ret)},
                                   is_pure=False, _semantic=_semantic)


#: The entry points that have an ``...At`` twin taking the call site last
#: (abi.def, "Call sites"); tle.language calls the twin.
_SITE_TWINS = frozenset({"tleTritonBarrier", "tleTritonTeamBarrier", "tleTritonSession", "tleTritonSignal",
                         "tleTritonTeamSignal", "tleTritonSignalWait", "tleTritonContextSignal",
                         "tleTritonContextSignalWait", "tleTritonWaitCounter", "tleTritonWaitSignalShadow"})


def _is_context_zero(context: Any) -> bool:
    """Whether ``context`` is the constant 0: the signal calls then keep
    their context-less entry points (and their code), as before contexts."""
    value = core._unwrap_if_constexpr(context)
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


_LOC = re.compile(r'"([^"]+)":(\d+):\d+')


def _site_text(_semantic) -> str | None:
    """The Python line of the call being compiled, "file:line": the
    location Triton's code generator set for it (the builder's current
    location), or under the interpreter the first frame of the kernel."""
    if _interp.is_interpreter(_semantic):
        frame = sys._getframe(1)
        while frame is not None:
            shown = _interp._shown(frame.f_code.co_filename)
            if shown is not None and not frame.f_code.co_filename.startswith(os.path.dirname(__file__) + os.sep):
                return f"{shown}:{frame.f_lineno}"
            frame = frame.f_back
        return None
    get_loc = getattr(_semantic.builder, "get_loc", None)
    match = _LOC.search(str(get_loc())) if get_loc is not None else None
    return f"{match.group(1)}:{match.group(2)}" if match else None


def _with_site(symbol: str, args: list, _semantic) -> str:
    """``symbol``'s ``...At`` twin, with the call site's id (a constant,
    registered with its text: runtime.register_site) appended to ``args``;
    ``symbol`` itself when it has no twin (FlagTree's spellings)."""
    if symbol not in _SITE_TWINS:
        return symbol
    text = _site_text(_semantic)
    args.append(_constant(runtime.register_site(text) if text else 0, core.int32, _semantic))
    return symbol + "At"


def _pointer(address: core.tensor, dtype: core.dtype | None, _semantic) -> core.tensor:
    if dtype is None:
        return address
    return _semantic.cast(address, core.pointer_type(dtype))


def _builtin(fn: Callable) -> Callable:
    """``core.builtin``, and under Triton's interpreter, which calls
    builtins outside ``triton.language`` without a ``_semantic``, the
    interpreter's semantic. Compilation passes ``_semantic`` and reaches
    ``fn`` exactly as through ``core.builtin``."""
    compiled = core.builtin(fn)

    @functools.wraps(fn)
    def wrapper(*args, _semantic=None, **kwargs):
        if _semantic is None and _interp.interpreting():
            _semantic = _interp.semantic()
        return compiled(*args, _semantic=_semantic, **kwargs)

    setattr(wrapper, core.TRITON_BUILTIN, True)
    return wrapper


def _program_slot(_semantic) -> core.tensor:
    """The program's linear id (x fastest), the default barrier slot: one
    slot per program, so no two programs share one (docs/triton.md).
    Under the interpreter it is computed on Python ints, the program and
    grid being known: the builder's arithmetic, which makes a tensor per
    step, was most of an interpreted barrier's time."""
    if _interp.is_interpreter(_semantic):
        ids, dims = _interp.program(_semantic)
        slot = _linear_program(ids.__getitem__, dims.__getitem__, operator.mul, operator.add)
        return _constant(slot, core.int32, _semantic)
    return _linear_program(
        _semantic.program_id, _semantic.num_programs,
        lambda a, b: _semantic.mul(a, b, sanitize_overflow=False),
        lambda a, b: _semantic.add(a, b, sanitize_overflow=False))


def _linear_program(pid: Callable, num: Callable, mul: Callable, add: Callable) -> Any:
    """``pid_x + pid_y * nx + pid_z * nx * ny`` from the program id and
    grid size of an axis (``pid``, ``num``), over Python ints or the
    builder's values alike."""
    slot = pid(0)
    for axis in (1, 2):
        stride = num(0)
        for inner in range(1, axis):
            stride = mul(stride, num(inner))
        slot = add(slot, mul(pid(axis), stride))
    return slot


@_builtin
def distributed_barrier(device_dptr, space="device", barrier_kind="sync", group_kind="block", order="acq_rel",
                        index=None, team="intra", session=None, _semantic=None):
    """Barrier with the other GPUs of the team ``team`` (by default the
    node) on barrier slot ``index``; with ``session``, the barrier of that
    session (``session_open``), which returns the next session.

    Args:
        device_dptr: the device communicator (``Communicator.dev_comm``), a
            kernel argument.
        space: ``"device"``, the only barrier TLE has (intra-node, all GPUs
            of the communicator).
        barrier_kind: ``"arrive"`` (signal the peers), ``"wait"`` (wait for
            their signals) or ``"sync"`` (both).
        group_kind: who executes the call together. ``"block"``: the whole
            program (the natural group in Triton, where every thread runs
            the call). ``"grid"``: every program of the launch on every GPU;
            the launch must be co-resident, so it must pass
            ``launch_cooperative_grid=True``. ``"warp"``: one warp; only for
            ``num_warps=1``, where the program is that warp. ``"thread"``:
            one thread per barrier; Triton runs the call on every thread of
            the program, so it is rejected.
        order: memory order, ``"relaxed"``, ``"acquire"``, ``"release"``,
            ``"acq_rel"`` or ``"seq_cst"``; arrive uses its release half and
            wait its acquire half.
        index: the barrier slot, an int or a runtime int32 scalar such as
            ``tl.program_id(0)``; it must be below the communicator's
            ``n_barriers`` (checked at run time, reported as an error). A
            slot serves one group at a time, so by default each program
            takes its own: the program's linear id (``pid_x + pid_y * nx +
            pid_z * nx * ny``) for ``block`` and ``warp`` groups, and 0 for
            ``grid``, whose one group is every program.
        team: ``"intra"`` (the default: the GPUs of this node),
            ``"inter"`` (this GPU's local rank on every node: a rail) or
            ``"world"`` (every GPU of every node). Each team has its own
            slots. ``group_kind="grid"`` is intra's only. A barrier of team
            intra calls ``tleTritonBarrier``; the others
            ``tleTritonTeamBarrier``.
        session: None (a stateless barrier, which reads the slot's epoch
            from memory and writes it back), or the session that
            ``session_open`` or the session's previous barrier returned; the
            slot is the session's (``index`` must be None) and the barrier
            returns the next session, which the loop carries to the next
            one (``tleTritonSession``). Team intra, block or warp group.

    Returns:
        None; with ``session``, the next session (``session_open``'s
        tuple: the int64 ``state`` and the int32 ``slot``).
    """
    _choice("space", space, SPACES)
    return _barrier("tleTritonBarrier", _address("device_dptr", device_dptr, _semantic), barrier_kind, group_kind,
                    order, index, _semantic, team=team, session=session)


def _team(team: Any) -> str:
    """A team name, checked."""
    return _choice("team", team, TEAMS)


def _barrier(symbol: str, comm: core.tensor, barrier_kind, group_kind, order, index, _semantic,
             library: Callable[[Any], str] = _library_path, team: Any = "intra", session: Any = None):
    """The checks and the call of a barrier entry point shaped as
    tleTritonBarrier, for an int64 communicator ``comm``; ``index`` None is
    the default slot of tle.language (tle.flagtree passes FlagTree's 0).
    A team other than intra calls tleTritonTeamBarrier instead of
    ``symbol``, with the team after the communicator; intra keeps
    ``symbol`` so that its kernels compile to the same code as before.
    With ``session``, tleTritonSession on it instead, returning the next
    session."""
    team = _team(team)
    kind_name = _choice("barrier_kind", barrier_kind, BARRIER_KINDS)
    kind = BARRIER_KINDS[kind_name]
    group = _choice("group_kind", group_kind, GROUP_KINDS)
    order_name = _choice("order", order, ORDERS)
    memory_order = ORDERS[order_name]
    check_barrier_rules(kind_name, order_name, group, team)
    options = getattr(_semantic.builder, "options", None)
    if group == "thread":
        raise ValueError("group_kind 'thread' is not available in Triton: every thread of a program executes the "
                         "call, so each would enter the barrier separately; use 'block'")
    if _interp.is_interpreter(_semantic):
        # The interpreter drops num_warps and launch_cooperative_grid; a
        # program is one thread there, its own warp and block.
        if group == "grid":
            _interp.check_grid_group(_semantic)
    elif group == "warp" and options is not None and getattr(options, "num_warps", 1) != 1:
        raise ValueError(f"group_kind 'warp' needs num_warps=1 (every warp of the program executes the call, "
                         f"and this kernel has num_warps={options.num_warps}); use 'block'")
    elif group == "grid" and options is not None and not getattr(options, "launch_cooperative_grid", False):
        raise ValueError("group_kind 'grid' needs a co-resident launch: pass launch_cooperative_grid=True")
    if core._unwrap_if_constexpr(session) is not None:
        return _session_barrier(comm, kind, group, memory_order, index, team, session, _semantic, library)
    if core._unwrap_if_constexpr(index) is not None:
        slot = _int32("index", index, _semantic)
    elif group == "grid":
        slot = _constant(0, core.int32, _semantic)
    else:
        slot = _program_slot(_semantic)
    args = [
        comm,
        _constant(kind, core.int32, _semantic),
        _constant(GROUP_KINDS[group], core.int32, _semantic),
        slot,
        _constant(memory_order, core.int32, _semantic),
    ]
    if team != "intra":
        symbol = "tleTritonTeamBarrier"
        args.insert(1, _constant(TEAMS[team], core.int32, _semantic))
    symbol = _with_site(symbol, args, _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)
    return None


def _session_group(group: str, team: str, call: str) -> int:
    """The encoding of a session's group: block or warp, team intra (the
    grid barrier keeps its own state, other teams their own slots)."""
    _check_session_rules(group, team, call)
    return GROUP_KINDS[group]


#: A session's fields: ``state``, the int64 of abi.def (the slot above the
#: epoch, or minus the status of a wait that gave up), and ``slot``, the
#: int32 slot. The slot travels beside the state so that Triton's loops
#: carry it as an invariant (scf.for drops an iter_arg yielded unchanged)
#: and the compiled loop computes the slot's words once: decoded from the
#: carried int64 in every round, it cost Triton's loop on one H200 0.01 us
#: per round at 1 CTA and 0.02 at 66 (docs/gpu-notes.md, run 39).
SESSION_FIELDS = ["state", "slot"]


def _session(state: core.tensor, slot: Any) -> core.tuple:
    """The session value a loop carries (SESSION_FIELDS). Under the
    interpreter the slot may be an ``_interp.Constant``."""
    return core.tuple([state, slot], core.tuple_type([state.type, slot.type], SESSION_FIELDS))


def _is_scalar(value: Any, dtype: core.dtype) -> bool:
    """A scalar of ``dtype``: the builder's, or the interpreter's constant."""
    if isinstance(value, core.tensor):
        return not value.type.is_block() and value.dtype == dtype
    return type(value) is _interp.Constant and value.dtype == dtype


def _session_value(value: Any) -> tuple[core.tensor, Any]:
    """A session, as session_open or a session barrier returned it: its
    int64 state and int32 slot."""
    value = core._unwrap_if_constexpr(value)
    parts = list(value) if isinstance(value, core.tuple) else []
    if len(parts) != 2 or not _is_scalar(parts[0], core.int64) or not _is_scalar(parts[1], core.int32):
        raise TypeError(f"session must be the value that session_open or the previous session barrier returned "
                        f"(its int64 state and int32 slot); got {_describe(value)}")
    return parts[0], parts[1]


def _session_barrier(comm: core.tensor, kind: int, group: str, memory_order: int, index, team: str, session,
                     _semantic, library: Callable[[Any], str]) -> core.tensor:
    """tleTritonSession: the half ``kind`` of ``session``; returns the next one."""
    coop = _session_group(group, team, "distributed_barrier")
    if core._unwrap_if_constexpr(index) is not None:
        raise ValueError("distributed_barrier with a session takes its slot from the session: leave index None "
                         "(give the index to session_open)")
    state, slot = _session_value(session)
    args = [
        comm,
        _constant(kind, core.int32, _semantic),
        _constant(coop, core.int32, _semantic),
        _constant(memory_order, core.int32, _semantic),
        state,
        slot,
    ]
    return _session(_call(_with_site("tleTritonSession", args, _semantic), args, core.int64, _semantic, library),
                    slot)


def _session_open(comm: core.tensor, group_kind, index, _semantic, library: Callable[[Any], str] = _library_path):
    group = _choice("group_kind", group_kind, GROUP_KINDS)
    coop = _session_group(group, "intra", "session_open")
    if group == "thread":
        raise ValueError("group_kind 'thread' is not available in Triton: every thread of a program executes the "
                         "call; use 'block'")
    options = getattr(_semantic.builder, "options", None)
    if (group == "warp" and not _interp.is_interpreter(_semantic) and options is not None
            and getattr(options, "num_warps", 1) != 1):
        raise ValueError(f"group_kind 'warp' needs num_warps=1 (every warp of the program executes the call, "
                         f"and this kernel has num_warps={options.num_warps}); use 'block'")
    slot = _program_slot(_semantic) if core._unwrap_if_constexpr(index) is None else _int32("index", index, _semantic)
    args = [comm, _constant(coop, core.int32, _semantic), slot]
    return _session(_call("tleTritonSessionOpen", args, core.int64, _semantic, library), slot)


def _session_close(comm: core.tensor, session, group_kind, _semantic, library: Callable[[Any], str] = _library_path):
    group = _choice("group_kind", group_kind, GROUP_KINDS)
    args = [comm, _constant(_session_group(group, "intra", "session_close"), core.int32, _semantic),
            _session_value(session)[0]]
    return _call("tleTritonSessionClose", args, core.int32, _semantic, library)


@_builtin
def session_open(device_dptr, group_kind="block", index=None, _semantic=None) -> core.tensor:
    """Opens a barrier session on slot ``index`` (by default the program's
    slot, as ``distributed_barrier``): checks the slot and reads its epoch
    once. Returns the session, a tuple of two scalars (``s.state``, an
    int64, and ``s.slot``, the int32 slot) to pass to
    ``distributed_barrier(..., session=s)``, which returns the next one;
    a loop carries it like any tuple, the slot as an invariant::

        s = tlx.session_open(comm)
        for i in range(n):
            s = tlx.distributed_barrier(comm, session=s)
        tlx.session_close(comm, s)

    Each barrier of the session then costs the flag exchange and one
    store: no epoch word is read; group rank 0 stores the next epoch into
    the slot's word before it polls, as ``tle::BarrierSession`` does, so
    the word is current when the session ends. Until the close the
    slot is used through the session only. ``group_kind``: ``"block"`` or
    ``"warp"`` (with ``num_warps=1``), the same in every call of the
    session. In a thread whose wait gave up (an abort, or a timeout under
    ``onError = return``) the session's state holds minus the status
    (``s.state < 0``) and its later barriers return it unchanged, taking
    part in the group's syncs only; the other threads of the group learn
    the status from ``session_close``, which returns it in every thread.
    """
    return _session_open(_address("device_dptr", device_dptr, _semantic), group_kind, index, _semantic)


@_builtin
def session_close(device_dptr, session, group_kind="block", _semantic=None) -> core.tensor:
    """Ends a session. The slot's word already holds its epoch (each wait
    stored it), so stateless barriers, later sessions and later launches
    continue from it. Returns 0, or (in every thread of the group) the
    status of a wait of the session that gave up (an int32)."""
    return _session_close(_address("device_dptr", device_dptr, _semantic), session, group_kind, _semantic)


@_builtin
def intra_rank(comm, _semantic=None) -> core.tensor:
    """This GPU's rank in the node (int32), from the communicator ``comm``."""
    return _call("tleTritonIntraRank", [_address("comm", comm, _semantic)], core.int32, _semantic)


@_builtin
def intra_size(comm, _semantic=None) -> core.tensor:
    """The number of GPUs of the communicator ``comm`` (int32)."""
    return _call("tleTritonIntraSize", [_address("comm", comm, _semantic)], core.int32, _semantic)


@_builtin
def team_rank(comm, team, _semantic=None) -> core.tensor:
    """This GPU's index in team ``team`` of the communicator ``comm``
    (int32): ``"intra"`` its rank in the node (as ``intra_rank``),
    ``"inter"`` its node's index, ``"world"`` its world rank (node *
    GPUs per node + rank in the node)."""
    return _team_query("tleTritonIntraRank", "tleTritonTeamRank", comm, team, _semantic)


@_builtin
def team_size(comm, team, _semantic=None) -> core.tensor:
    """The number of GPUs of team ``team`` of the communicator ``comm``
    (int32): ``"intra"`` the node's (as ``intra_size``), ``"inter"`` the
    number of nodes, ``"world"`` every GPU."""
    return _team_query("tleTritonIntraSize", "tleTritonTeamSize", comm, team, _semantic)


def _team_query(intra_symbol: str, team_symbol: str, comm, team, _semantic) -> core.tensor:
    """Intra's own query for team intra (the same code as intra_rank /
    intra_size), else the team query with the team's encoding."""
    team = _team(team)
    comm = _address("comm", comm, _semantic)
    if team == "intra":
        return _call(intra_symbol, [comm], core.int32, _semantic)
    return _call(team_symbol, [comm, _constant(TEAMS[team], core.int32, _semantic)], core.int32, _semantic)


@_builtin
def local_pointer(mem, offset=0, dtype=None, _semantic=None) -> core.tensor:
    """Address of byte ``offset`` of this GPU's copy of the symmetric buffer
    ``mem`` (``SymmetricBuffer.handle``): an int64, or a scalar
    ``tl.pointer_type(dtype)`` when ``dtype`` is given."""
    element = _element_type(dtype)
    address = _call("tleTritonLocalPointer", [_address("mem", mem, _semantic), _offset(offset, _semantic)],
                    core.int64, _semantic)
    return _pointer(address, element, _semantic)


@_builtin
def intra_pointer(mem, offset, peer, dtype=None, _semantic=None) -> core.tensor:
    """Address of byte ``offset`` of GPU ``peer``'s copy of the symmetric
    buffer ``mem``, as mapped on this GPU: an int64, or a scalar
    ``tl.pointer_type(dtype)`` when ``dtype`` is given. ``peer`` is an int or
    a runtime int32 below ``intra_size``."""
    element = _element_type(dtype)
    args = [_address("mem", mem, _semantic), _offset(offset, _semantic), _int32("peer", peer, _semantic)]
    address = _call("tleTritonIntraPointer", args, core.int64, _semantic)
    return _pointer(address, element, _semantic)


@_builtin
def signal(device_dptr, peer, index, op="inc", value=None, group_kind="block", team="intra", context=0,
           _semantic=None) -> None:
    """Add to signal word ``index`` of GPU ``peer`` (this one included), as
    a release: what the program wrote before the call is visible to a
    program of ``peer`` whose ``signal_wait`` (acquire) observed the new
    value.

    Args:
        device_dptr: the device communicator (``Communicator.dev_comm``), a
            kernel argument.
        peer: the GPU to signal, an int or a runtime int32 below
            ``intra_size``.
        index: the signal word, an int or a runtime int32 below the
            communicator's ``n_signals`` (checked at run time).
        op: ``"inc"`` adds 1 (no ``value``); ``"add"`` adds ``value``.
        value: for ``"add"``: a non-negative int or a runtime integer
            scalar (read as unsigned 64 bits).
        group_kind: who signals together: ``"block"`` (the program: it
            syncs, one thread signals, it syncs again) or ``"warp"`` (only
            for ``num_warps=1``). ``"thread"`` and ``"grid"`` are refused.
        team: how ``peer`` is numbered: ``"intra"`` (the default) a GPU of
            this node, ``"inter"`` a node (this GPU's local rank there),
            ``"world"`` a world rank. The words are one set per GPU
            whatever the team. Intra calls ``tleTritonSignal``, the others
            ``tleTritonTeamSignal``.
        context: the network context (FlagCX's ``contextId``), an int or a
            runtime int32 below the communicator's ``n_contexts`` (checked at
            run time): each context has its own signal words. Another than
            the constant 0 calls ``tleTritonContextSignal``.
    """
    _signal("tleTritonSignal", _address("device_dptr", device_dptr, _semantic), peer, index, op, value, group_kind,
            _semantic, team=team, context=context)


def _signal(symbol: str, comm: core.tensor, peer, index, op, value, group_kind, _semantic,
            library: Callable[[Any], str] = _library_path, index_name: str = "index", team: Any = "intra",
            context: Any = 0) -> None:
    """The checks and the call of a signal entry point shaped as
    tleTritonSignal, for an int64 communicator ``comm``; a team other than
    intra calls tleTritonTeamSignal, with the team after the
    communicator; a context other than the constant 0
    tleTritonContextSignal, with the team and the context last."""
    team = _team(team)
    kind = _choice("op", op, SIGNAL_OPS)
    value = core._unwrap_if_constexpr(value)
    if kind == "inc" and value is not None:
        raise ValueError("op 'inc' adds 1 and takes no value; use op='add' to add a value")
    if kind == "add" and value is None:
        raise ValueError("op 'add' needs a value")
    group = _signal_group(group_kind, _semantic)
    args = [
        comm,
        _int32("peer", peer, _semantic),
        _int32(index_name, index, _semantic),
        _word_value("value", 1 if kind == "inc" else value, _semantic),
        _constant(group, core.int32, _semantic),
    ]
    if not _is_context_zero(context):
        symbol = "tleTritonContextSignal"
        args.insert(1, _constant(TEAMS[team], core.int32, _semantic))
        args.append(_int32("context", context, _semantic))
    elif team != "intra":
        symbol = "tleTritonTeamSignal"
        args.insert(1, _constant(TEAMS[team], core.int32, _semantic))
    symbol = _with_site(symbol, args, _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)


@_builtin
def signal_wait(device_dptr, index, target, group_kind="block", order="acquire", context=0, _semantic=None) -> None:
    """Wait until this GPU's signal word ``index`` is at least ``target``
    (both unsigned 64-bit), with the barrier's deadline: a word that never
    gets there fails the launch with a report naming it and both values.

    Args:
        device_dptr: the device communicator, a kernel argument.
        index: the signal word, an int or a runtime int32.
        target: a non-negative int or a runtime integer scalar.
        group_kind: ``"block"`` (the program: it syncs, one thread polls,
            it syncs again) or ``"warp"`` (``num_warps=1`` only).
        order: ``"acquire"`` (the default), ``"acq_rel"``, ``"seq_cst"`` or
            ``"relaxed"``; ``"release"`` is refused.
        context: the network context whose word ``index`` it waits on (as
            for ``signal``; another than the constant 0 calls
            ``tleTritonContextSignalWait``).
    """
    _signal_wait("tleTritonSignalWait", _address("device_dptr", device_dptr, _semantic), index, target, group_kind,
                 order, _semantic, context=context)


def _signal_wait(symbol: str, comm: core.tensor, index, target, group_kind, order, _semantic,
                 library: Callable[[Any], str] = _library_path, index_name: str = "index",
                 context: Any = 0) -> None:
    """The checks and the call of a wait entry point shaped as
    tleTritonSignalWait, for an int64 communicator ``comm``; a context
    other than the constant 0 calls tleTritonContextSignalWait."""
    group = _signal_group(group_kind, _semantic)
    memory_order = _observer_order(order, "signal_wait")
    args = [
        comm,
        _int32(index_name, index, _semantic),
        _word_value("target", target, _semantic),
        _constant(group, core.int32, _semantic),
        _constant(memory_order, core.int32, _semantic),
    ]
    if not _is_context_zero(context):
        symbol = "tleTritonContextSignalWait"
        args.append(_int32("context", context, _semantic))
    symbol = _with_site(symbol, args, _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)


@_builtin
def read_signal(device_dptr, index, order="acquire", _semantic=None) -> core.tensor:
    """This GPU's signal word ``index`` (an int64; values of 2**63 and
    more read as negative), loaded by each thread with the acquire half of
    ``order`` (``"release"`` is refused). Reads are never merged: peers
    change the word at any time."""
    memory_order = _observer_order(order, "read_signal")
    args = [
        _address("device_dptr", device_dptr, _semantic),
        _int32("index", index, _semantic),
        _constant(memory_order, core.int32, _semantic),
    ]
    return _call("tleTritonReadSignal", args, core.int64, _semantic)


@_builtin
def reset_signal(device_dptr, index, _semantic=None) -> None:
    """Set this GPU's signal word ``index`` to 0. A reset racing with a
    peer's signal to the same word can lose that signal: reset between
    phases that a barrier or another signal separates."""
    args = [_address("device_dptr", device_dptr, _semantic), _int32("index", index, _semantic)]
    _call("tleTritonResetSignal", args, core.int32, _semantic, result=False)


@_builtin
def comm_failed(comm, _semantic=None) -> core.tensor:
    """0 (int32) while the communicator ``comm`` is usable, else the
    ``tleResult_t`` value its waits give up with: ``tleAborted`` (14) after
    ``tleCommAbort``, ``tlePeerFailure`` (8) when a peer process died, or
    ``tleTimeout`` (4) for a wait that failed under ``onError = return``
    (docs/runtime.md, "Faults"). A barrier or signal wait that gave up
    returns without a word to the kernel; this says so. One load of host
    memory: call it after the waits, not in a loop."""
    return _call("tleTritonCommFailed", [_address("comm", comm, _semantic)], core.int32, _semantic)


# One-sided data movement (FlagCX's put / get / put-value / flush, counters
# and signal shadows; docs/triton.md, "One-sided data movement").

#: What a put does to the attached signal word, encoded as tleTritonPut's
#: ``signalOp``: none (-1), or the dialect's signal kinds (abi.def).
PUT_SIGNAL_OPS = {None: -1, "inc": 0, "add": 1}
#: Orders a put (or put-value) serves: FlagCX's put fences for release and
#: acq_rel only, so acquire and seq_cst would be weakened silently
#: (rules.def's Publish).
PUBLISHER_ORDERS = {k: ORDERS[k] for k in _abi.ORDER_RULES["publish"]}
#: Orders a get serves (it fences for acquire and acq_rel only: Fetch).
GET_ORDERS = {k: ORDERS[k] for k in _abi.ORDER_RULES["fetch"]}


def _order_in(order: Any, table: dict[str, int], call: str, why: str) -> int:
    value = core._unwrap_if_constexpr(order)
    if isinstance(value, str) and value in ORDERS and value not in table:
        allowed = ", ".join(repr(k) for k in table)
        raise ValueError(f"{call} cannot use order {value!r}: {why}; use {allowed}")
    return table[_choice("order", order, table)]


def _size(name: str, value: Any, _semantic) -> core.tensor:
    """A byte count or byte offset: a compile-time int in [0, 2**63) or a
    runtime integer scalar, as int64 (read as unsigned by the device)."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, core.tensor):
        value = _scalar(name, value)
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"{name} must be an integer number of bytes; got {_describe(value)}")
        return _semantic.cast(value, core.int64)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer number of bytes; got {_describe(value)}")
    if not 0 <= value <= _INT64_MAX:
        raise ValueError(f"{name} must be a non-negative number of bytes; got {value}")
    return _constant(value, core.int64, _semantic)


def _attached_signal(signal, signal_op, signal_value, _semantic) -> list[core.tensor]:
    """[signalOp, signal, signalValue] of a put's attached signal, checked
    as ``signal`` checks its own."""
    signal = core._unwrap_if_constexpr(signal)
    signal_value = core._unwrap_if_constexpr(signal_value)
    if signal is None:
        if signal_value is not None:
            raise ValueError("signal_value needs a signal: pass signal=<word> with signal_op='add'")
        op = None
    else:
        op = _choice("signal_op", signal_op, SIGNAL_OPS)
        if op == "inc" and signal_value is not None:
            raise ValueError("signal_op 'inc' adds 1 and takes no signal_value; use signal_op='add'")
        if op == "add" and signal_value is None:
            raise ValueError("signal_op 'add' needs a signal_value")
    return [
        _constant(PUT_SIGNAL_OPS[op], core.int32, _semantic),
        _int32("signal", 0 if signal is None else signal, _semantic),
        _word_value("signal_value", 0 if signal_value is None else signal_value, _semantic),
    ]


def _counter(counter, _semantic) -> core.tensor:
    """A put's local counter word, or -1 for none."""
    if core._unwrap_if_constexpr(counter) is None:
        return _constant(-1, core.int32, _semantic)
    return _int32("counter", counter, _semantic)


def _transfer_tail(context, group_kind, order, table, call, why, _semantic):
    """[contextId, groupKind, order] of a transfer."""
    return [
        _int32("context", context, _semantic),
        _constant(_signal_group(group_kind, _semantic), core.int32, _semantic),
        _constant(_order_in(order, table, call, why), core.int32, _semantic),
    ]


def _put(symbol: str, comm: core.tensor, dst: core.tensor, dst_offset, src: core.tensor, src_offset, nbytes, peer,
         team, signal, signal_op, signal_value, counter, context, group_kind, order, _semantic,
         library: Callable[[Any], str] = _library_path) -> None:
    """The checks and the call of tleTritonPut for int64 handles."""
    args = [comm, dst, _size("dst_offset", dst_offset, _semantic), src, _size("src_offset", src_offset, _semantic),
            _size("nbytes", nbytes, _semantic),
            _constant(TEAMS[_team(team)], core.int32, _semantic),
            _int32("peer", peer, _semantic)]
    args += _attached_signal(signal, signal_op, signal_value, _semantic)
    args.append(_counter(counter, _semantic))
    args += _transfer_tail(context, group_kind, order, PUBLISHER_ORDERS, "put",
                           "a put only publishes, and FlagCX's put fences for release and acq_rel alone", _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)


def _get(symbol: str, comm: core.tensor, src: core.tensor, src_offset, dst: core.tensor, dst_offset, nbytes, peer,
         team, context, group_kind, order, _semantic, library: Callable[[Any], str] = _library_path) -> None:
    """The checks and the call of tleTritonGet for int64 handles."""
    args = [comm, src, _size("src_offset", src_offset, _semantic), dst, _size("dst_offset", dst_offset, _semantic),
            _size("nbytes", nbytes, _semantic),
            _constant(TEAMS[_team(team)], core.int32, _semantic),
            _int32("peer", peer, _semantic)]
    args += _transfer_tail(context, group_kind, order, GET_ORDERS, "get",
                           "a get only observes, and FlagCX's get fences for acquire and acq_rel alone", _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)


@_builtin
def put(device_dptr, dst, dst_offset, src, src_offset, nbytes, peer, team="intra", signal=None, signal_op="inc",
        signal_value=None, counter=None, context=0, group_kind="block", order="relaxed", _semantic=None) -> None:
    """Copy ``nbytes`` bytes from byte ``src_offset`` of this GPU's copy of
    the symmetric buffer ``src`` to byte ``dst_offset`` of GPU ``peer``'s
    copy of ``dst`` (FlagCX's ``flagcxDevPut``), the whole program copying
    together.

    Args:
        device_dptr: the device communicator, a kernel argument.
        dst, src: symmetric buffer handles (``SymmetricBuffer.handle``),
            kernel arguments.
        dst_offset, src_offset, nbytes: bytes, ints or runtime integers;
            the device reports a range past either buffer.
        peer: an int or a runtime int32, numbered in ``team``:
            ``"intra"`` (the default) a GPU of this node (peer pointers),
            ``"inter"`` a node, ``"world"`` a world rank (the network when
            the peer is on another node).
        signal: a signal word of ``peer`` to add to after the data has
            landed, as a release (``signal_op="inc"`` adds 1, ``"add"``
            adds ``signal_value``); None: no signal, the peer learns nothing
            until a later ``signal`` or barrier.
        counter: a counter word of this GPU that grows by 1 when ``src``
            may be overwritten (``counter_wait``); None: none.
        context: FlagCX's network context, an int or a runtime int32.
        group_kind: ``"block"`` or ``"warp"`` (``num_warps=1``).
        order: ``"relaxed"`` (the default), ``"release"`` or ``"acq_rel"``
            (what the program wrote before is visible before the data);
            ``"acquire"`` and ``"seq_cst"`` are refused.
    """
    _put("tleTritonPut", _address("device_dptr", device_dptr, _semantic), _address("dst", dst, _semantic),
         dst_offset, _address("src", src, _semantic), src_offset, nbytes, peer, team, signal, signal_op,
         signal_value, counter, context, group_kind, order, _semantic)


@_builtin
def get(device_dptr, src, src_offset, dst, dst_offset, nbytes, peer, team="intra", context=0, group_kind="block",
        order="relaxed", _semantic=None) -> None:
    """Copy ``nbytes`` bytes from byte ``src_offset`` of GPU ``peer``'s
    copy of the symmetric buffer ``src`` to byte ``dst_offset`` of this
    GPU's copy of ``dst`` (FlagCX's ``flagcxDevGet``; the remote side first,
    as there). Between nodes the data has landed only after ``flush`` of
    the same context; within a node when the call returns. ``team``,
    ``context``, ``group_kind`` as for ``put``; ``order``: ``"relaxed"``
    (the default), ``"acquire"`` or ``"acq_rel"`` (``"release"`` and
    ``"seq_cst"`` are refused)."""
    _get("tleTritonGet", _address("device_dptr", device_dptr, _semantic), _address("src", src, _semantic),
         src_offset, _address("dst", dst, _semantic), dst_offset, nbytes, peer, team, context, group_kind, order,
         _semantic)


@_builtin
def put_value(device_dptr, dst, dst_offset, value, peer, team="intra", signal=None, signal_op="inc",
              signal_value=None, context=0, group_kind="block", order="relaxed", _semantic=None) -> None:
    """Store the 8 bytes of ``value`` (an int or a runtime integer, as
    int64) at byte ``dst_offset`` of GPU ``peer``'s copy of ``dst``
    (FlagCX's ``flagcxDevPutValue``), optionally followed by a signal to
    ``peer`` released after it; the arguments are those of ``put`` (there
    is no counter)."""
    comm = _address("device_dptr", device_dptr, _semantic)
    args = [comm, _address("dst", dst, _semantic), _size("dst_offset", dst_offset, _semantic),
            _word_value_signed("value", value, _semantic),
            _constant(TEAMS[_team(team)], core.int32, _semantic),
            _int32("peer", peer, _semantic)]
    args += _attached_signal(signal, signal_op, signal_value, _semantic)
    args += _transfer_tail(context, group_kind, order, PUBLISHER_ORDERS, "put_value",
                           "a put only publishes, and FlagCX's put fences for release and acq_rel alone", _semantic)
    _call("tleTritonPutValue", args, core.int32, _semantic, result=False)


def _word_value_signed(name: str, value: Any, _semantic) -> core.tensor:
    """Any 64-bit value: a compile-time int in [-2**63, 2**64) or a runtime
    integer scalar, as int64 (its 8 bytes are stored as they are)."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, core.tensor):
        value = _scalar(name, value)
        if not value.dtype.is_int() or value.dtype.is_bool():
            raise TypeError(f"{name} must be an integer (its 8 bytes are stored); got {_describe(value)}")
        return _semantic.cast(value, core.int64)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or a runtime integer scalar; got {_describe(value)}")
    if not -2**63 <= value < 2**64:
        raise ValueError(f"{name} must fit in 64 bits; got {value}")
    return _constant(value - 2**64 if value > _INT64_MAX else value, core.int64, _semantic)


@_builtin
def flush(device_dptr, context=0, group_kind="block", order="acq_rel", _semantic=None) -> None:
    """Return when every ``put``, ``put_value`` and ``get`` this program
    issued on network context ``context`` has completed: a get's data has
    landed, a put's source may be reused (FlagCX's ``flagcxDevFlush``).
    ``order``: the fence's order (``"acq_rel"`` by default)."""
    args = [_address("device_dptr", device_dptr, _semantic), _int32("context", context, _semantic),
            _constant(_signal_group(group_kind, _semantic), core.int32, _semantic),
            _constant(ORDERS[_choice("order", order, ORDERS)], core.int32, _semantic)]
    _call("tleTritonFlush", args, core.int32, _semantic, result=False)


@_builtin
def counter_wait(device_dptr, index, target, context=0, group_kind="block", order="acquire", _semantic=None) -> None:
    """Wait until this GPU's counter word ``index`` (of network context
    ``context``) is at least ``target``, with the signal wait's deadline
    (FlagCX's ``flagcxDevWaitCounter``): ``put(..., counter=index)`` adds 1
    when its source may be reused. ``group_kind`` and ``order`` as for
    ``signal_wait``."""
    _counter_wait("tleTritonWaitCounter", _address("device_dptr", device_dptr, _semantic), index, target, context,
                  group_kind, order, _semantic)


def _counter_wait(symbol, comm, index, target, context, group_kind, order, _semantic, library=_library_path,
                  index_name="index"):
    args = [comm, _int32(index_name, index, _semantic), _word_value("target", target, _semantic),
            _int32("context", context, _semantic),
            _constant(_signal_group(group_kind, _semantic), core.int32, _semantic),
            _constant(_observer_order(order, "counter_wait"), core.int32, _semantic)]
    symbol = _with_site(symbol, args, _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)


@_builtin
def read_counter(device_dptr, index, context=0, order="acquire", _semantic=None) -> core.tensor:
    """This GPU's counter word ``index`` (an int64), loaded by each thread
    with the acquire half of ``order`` (FlagCX's ``flagcxDevReadCounter``)."""
    args = [_address("device_dptr", device_dptr, _semantic), _int32("index", index, _semantic),
            _int32("context", context, _semantic),
            _constant(_observer_order(order, "read_counter"), core.int32, _semantic)]
    return _call("tleTritonReadCounter", args, core.int64, _semantic)


@_builtin
def reset_counter(device_dptr, index, context=0, _semantic=None) -> None:
    """Set this GPU's counter word ``index`` to 0 (FlagCX's
    ``flagcxDevResetCounter``): after ``counter_wait`` saw every put of the
    phase, or an increment in flight is lost."""
    args = [_address("device_dptr", device_dptr, _semantic), _int32("index", index, _semantic),
            _int32("context", context, _semantic)]
    _call("tleTritonResetCounter", args, core.int32, _semantic, result=False)


@_builtin
def shadow_increase(device_dptr, index, delta, context=0, _semantic=None) -> None:
    """Add ``delta`` to the shadow of this GPU's signal word ``index``: the
    value the kernel expects the word to reach (FlagCX's
    ``flagcxDevIncreaseSignalShadow``; no peer sees the shadow)."""
    args = [_address("device_dptr", device_dptr, _semantic), _int32("index", index, _semantic),
            _word_value("delta", delta, _semantic), _int32("context", context, _semantic)]
    _call("tleTritonIncreaseSignalShadow", args, core.int32, _semantic, result=False)


@_builtin
def shadow_wait(device_dptr, index, context=0, group_kind="block", order="acquire", _semantic=None) -> None:
    """Wait until this GPU's signal word ``index`` reaches its shadow
    (``shadow_increase``), with the signal wait's deadline (FlagCX's
    ``flagcxDevWaitSignalMeetShadow``)."""
    _shadow_wait("tleTritonWaitSignalShadow", _address("device_dptr", device_dptr, _semantic), index, context,
                 group_kind, order, _semantic)


def _shadow_wait(symbol, comm, index, context, group_kind, order, _semantic, library=_library_path,
                 index_name="index"):
    args = [comm, _int32(index_name, index, _semantic), _int32("context", context, _semantic),
            _constant(_signal_group(group_kind, _semantic), core.int32, _semantic),
            _constant(_observer_order(order, "shadow_wait"), core.int32, _semantic)]
    symbol = _with_site(symbol, args, _semantic)
    _call(symbol, args, core.int32, _semantic, library, result=False)


__all__ = ["distributed_barrier", "intra_rank", "intra_size", "team_rank", "team_size", "local_pointer",
           "intra_pointer", "signal", "signal_wait", "read_signal", "reset_signal", "comm_failed", "put", "get",
           "put_value", "flush", "counter_wait", "read_counter", "reset_counter", "shadow_increase", "shadow_wait"]
