# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.language compiled for sm_90 without a GPU: every function emits a
non-pure call of its TLE entry point with the right arguments, the calls
resolve against the device bitcode, and the communicator stays a kernel
parameter."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
import triton
import triton.language as tl

import tle.language as tlx

# The ABI's encodings, written out by hand from docs/abi.md ("Encodings")
# and abi.def's tleTritonBarrier: never taken from tle.language, whose tables
# are what these tests check (test_abi.py checks abi.def against docs/abi.md
# the same way).
BARRIER_KINDS = {"arrive": 0, "wait": 1, "sync": 2}
GROUP_KINDS = {"thread": 0, "warp": 1, "block": 2, "grid": 5}
ORDERS = {"relaxed": 0, "acquire": 1, "release": 2, "acq_rel": 3, "seq_cst": 4}

ENTRY_POINTS = ("tleTritonBarrier", "tleTritonIntraRank", "tleTritonIntraSize", "tleTritonLocalPointer",
                "tleTritonIntraPointer")


@dataclass
class ExternCall:
    symbol: str
    pure: bool
    libname: str
    #: Each operand as an int (a constant), "arg:NAME" (a kernel argument),
    #: "program_id" (tl.program_id(0)) or the SSA name of another value.
    operands: list
    #: The call-site id the call passed last (tle.language calls the
    #: ``...At`` twin of each barrier and signal entry point, abi.def "Call
    #: sites"), None for a call without one; ``symbol`` and ``operands``
    #: are the original's, so that the tests below read as before.
    site: int | None = None


#: The entry points whose ``...At`` twin tle.language calls.
SITE_TWINS = {"tleTritonBarrier", "tleTritonTeamBarrier", "tleTritonSession", "tleTritonSignal",
              "tleTritonTeamSignal", "tleTritonSignalWait", "tleTritonContextSignal", "tleTritonContextSignalWait",
              "tleTritonWaitCounter", "tleTritonWaitSignalShadow"}


def extern_calls(ttir: str) -> list[ExternCall]:
    """The tt.extern_elementwise ops of a TTIR module, in program order."""
    constants = {m[1]: int(m[2]) for m in re.finditer(r"(%[\w.]+) = arith\.constant (-?\d+) : i(?:32|64)", ttir)}
    func = re.search(r"tt\.func public @\w+\((.*)\) attributes", ttir)
    assert func, ttir
    args = set(re.findall(r"(%[\w.]+): ", func[1]))
    pids = set(re.findall(r"(%[\w.]+) = tt\.get_program_id x", ttir))

    def resolve(name: str):
        if name in constants:
            return constants[name]
        if name in args:
            return f"arg:{name[1:]}"
        if name in pids:
            return "program_id"
        return name

    calls = []
    for m in re.finditer(r"tt\.extern_elementwise ([^{]*)\{([^}]*)\}", ttir):
        attrs = dict(re.findall(r'(\w+) = ("[^"]*"|\w+)', m[2]))
        call = ExternCall(symbol=attrs["symbol"].strip('"'), pure=attrs["pure"] == "true",
                          libname=attrs["libname"].strip('"'),
                          operands=[resolve(o.strip()) for o in m[1].split(",")])
        if call.symbol.endswith("At") and call.symbol[:-2] in SITE_TWINS:
            call.symbol, call.site = call.symbol[:-2], call.operands.pop()
        calls.append(call)
    return calls


def barrier_operands(kind: str, group: str, order: str, index) -> list:
    return ["arg:comm", BARRIER_KINDS[kind], GROUP_KINDS[group], index, ORDERS[order]]


@triton.jit
def default_barrier_kernel(comm):
    tlx.distributed_barrier(comm)


def test_bitcode_links_into_this_triton(compile_kernel, bitcode):
    """First of all: the bitcode must be linkable by the LLVM inside
    Triton's wheel, which predates the clang that builds it."""
    try:
        compile_kernel(default_barrier_kernel, {"comm": "i64"})
    except Exception as e:  # reported with the known causes
        pytest.fail(f"Triton {triton.__version__} cannot link {bitcode}: {e}\n"
                    "Known causes (docs/triton.md, 'The device bitcode'): the bitcode carries "
                    "nvvm-reflect-ftz=0 while Triton sets 1 (build it with -fcuda-flush-denormals-to-zero), "
                    "or optimized IR uses attributes newer than Triton's LLVM (build it with "
                    "-Xclang -disable-llvm-passes)")


def test_defaults_are_sync_block_acq_rel_and_a_slot_per_program(compile_kernel):
    """With no index, each program takes its own slot, its linear id
    (x + y * nx + z * nx * ny): two programs sharing one slot would corrupt
    each other's barrier."""
    out = compile_kernel(default_barrier_kernel, {"comm": "i64"})
    [call] = extern_calls(out.ttir)
    assert call.symbol == "tleTritonBarrier" and call.libname == "tle"
    slot = call.operands[3]
    assert call.operands == barrier_operands("sync", "block", "acq_rel", slot)
    assert isinstance(slot, str) and slot.startswith("%"), slot
    for axis in "xyz":
        assert re.search(rf"tt\.get_program_id {axis}", out.ttir), out.ttir
    for axis in "xy":
        assert re.search(rf"tt\.get_num_programs {axis}", out.ttir), out.ttir
    assert re.search(rf"{re.escape(slot)} = arith\.addi ", out.ttir), out.ttir


@triton.jit
def default_grid_barrier_kernel(comm):
    tlx.distributed_barrier(comm, group_kind="grid")


def test_the_grid_group_defaults_to_slot_0(compile_kernel):
    """The grid group is every program: they all take one slot."""
    out = compile_kernel(default_grid_barrier_kernel, {"comm": "i64"}, launch_cooperative_grid=True)
    [call] = extern_calls(out.ttir)
    assert call.operands == barrier_operands("sync", "grid", "acq_rel", 0)


#: The barrier halves and orders the ABI's rules refuse (rules.def, as the
#: dialect's verifier does): an order whose only half the call does not
#: perform.
REFUSED_HALVES = {("arrive", "acquire"), ("wait", "release")}


@triton.jit
def all_kinds_and_orders_kernel(comm):
    pid = tl.program_id(0)
    for kind in tl.static_range(3):
        for order in tl.static_range(5):
            # arrive + acquire and wait + release are refused (below).
            if (kind != 0 or order != 1) and (kind != 1 or order != 2):
                tlx.distributed_barrier(comm, space="device", barrier_kind=("arrive", "wait", "sync")[kind],
                                        order=("relaxed", "acquire", "release", "acq_rel", "seq_cst")[order],
                                        index=pid)


def test_every_barrier_kind_and_order_is_encoded(compile_kernel):
    out = compile_kernel(all_kinds_and_orders_kernel, {"comm": "i64"})
    calls = extern_calls(out.ttir)
    expected = [barrier_operands(k, "block", o, "program_id") for k in BARRIER_KINDS for o in ORDERS
                if (k, o) not in REFUSED_HALVES]
    assert len(expected) == 13
    assert [c.operands for c in calls] == expected
    assert all(c.symbol == "tleTritonBarrier" and not c.pure for c in calls)


@triton.jit
def half_kernel(comm, KIND: tl.constexpr, ORDER: tl.constexpr):
    tlx.distributed_barrier(comm, barrier_kind=KIND, order=ORDER)


@pytest.mark.parametrize("kind, order, message", [
    ("arrive", "acquire", "barrier_kind 'arrive' cannot acquire"),
    ("wait", "release", "barrier_kind 'wait' cannot release"),
])
def test_a_half_cannot_take_an_order_of_the_other_half(compile_kernel, kind, order, message):
    """As tle.device_intra_barrier's verifier: the order would silently be
    relaxed."""
    with pytest.raises(triton.compiler.errors.CompilationError) as e:
        compile_kernel(half_kernel, {"comm": "i64", "KIND": "constexpr", "ORDER": "constexpr"},
                       {"KIND": kind, "ORDER": order})
    assert message in str(e.value.__cause__ or e.value)


@triton.jit
def group_kernel(comm, GROUP: tl.constexpr):
    tlx.distributed_barrier(comm, group_kind=GROUP, index=tl.program_id(0))


def test_warp_group_with_one_warp(compile_kernel):
    out = compile_kernel(group_kernel, {"comm": "i64", "GROUP": "constexpr"}, {"GROUP": "warp"}, num_warps=1)
    [call] = extern_calls(out.ttir)
    assert call.operands == barrier_operands("sync", "warp", "acq_rel", "program_id")


def test_grid_group_with_cooperative_launch(compile_kernel):
    out = compile_kernel(group_kernel, {"comm": "i64", "GROUP": "constexpr"}, {"GROUP": "grid"},
                         launch_cooperative_grid=True)
    [call] = extern_calls(out.ttir)
    # TLE's grid encoding is 5; 3 would be FlagCX's TILE_SPAN.
    assert call.operands == ["arg:comm", 2, 5, "program_id", 3]


@triton.jit
def runtime_index_kernel(comm, slot, base):
    tlx.distributed_barrier(comm, index=slot)
    tlx.distributed_barrier(comm, index=tl.program_id(0) * 2 + base)
    tlx.distributed_barrier(comm, index=7)


def test_index_may_be_a_runtime_value(compile_kernel):
    out = compile_kernel(runtime_index_kernel, {"comm": "i64", "slot": "i32", "base": "i32"})
    slots = [c.operands[3] for c in extern_calls(out.ttir)]
    assert slots[0] == "arg:slot"
    assert isinstance(slots[1], str) and slots[1].startswith("%")  # computed from program_id at run time
    assert re.search(rf"{re.escape(slots[1])} = arith\.addi .*%base", out.ttir)
    assert slots[2] == 7


def test_comm_is_a_kernel_parameter(compile_kernel):
    out = compile_kernel(default_barrier_kernel, {"comm": "i64"})
    assert re.search(r"tt\.func public @default_barrier_kernel\(%comm: i64", out.ttir)
    assert extern_calls(out.ttir)[0].operands[0] == "arg:comm"
    # In the PTX the communicator is the first kernel parameter and is loaded
    # from it, not a constant folded into the code.
    assert re.search(r"\.param \.u64 default_barrier_kernel_param_0", out.ptx)
    assert re.search(r"ld\.param\.(?:b|u)64\s+%rd\d+, \[default_barrier_kernel_param_0\]", out.ptx)


@triton.jit
def pointer_comm_kernel(comm):
    tlx.distributed_barrier(comm)


def test_comm_may_be_passed_as_a_pointer(compile_kernel):
    out = compile_kernel(pointer_comm_kernel, {"comm": "*i8"})
    [call] = extern_calls(out.ttir)
    assert re.search(rf"{re.escape(call.operands[0])} = tt\.ptr_to_int %comm", out.ttir)


@triton.jit
def two_barriers_kernel(comm, N: tl.constexpr):
    for _ in tl.static_range(N):
        tlx.distributed_barrier(comm, index=tl.program_id(0))


def barrier_instances(out) -> int:
    """Barriers in the final code: call sites of tleTritonBarrier when the
    optimizer kept the function, else inlined copies of its release signal
    (one per barrier: the poll loops' acquires may share code, the signal
    may not)."""
    calls = len(re.findall(r"call .*@tleTritonBarrier\(", out.llir))
    return calls or len(re.findall(r"red\.release\.sys", out.ptx))


def test_barrier_calls_are_not_pure_and_not_merged(compile_kernel):
    one = compile_kernel(two_barriers_kernel, {"comm": "i64", "N": "constexpr"}, {"N": 1})
    two = compile_kernel(two_barriers_kernel, {"comm": "i64", "N": "constexpr"}, {"N": 2})
    calls = extern_calls(two.ttir)
    assert len(calls) == 2 and not any(c.pure for c in calls)
    # The results are unused, yet both barriers survive to the end.
    assert barrier_instances(one) >= 1
    assert barrier_instances(two) == 2 * barrier_instances(one)


@triton.jit
def everything_kernel(comm, mem, out, peer, offset, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    offs = tl.arange(0, BLOCK)
    mine = tlx.local_pointer(mem, 64, dtype=tl.float32)
    theirs = tlx.intra_pointer(mem, offset, peer, dtype=tl.float32)
    raw = tlx.intra_pointer(mem, 0, (rank + 1) % size)
    tl.static_assert(raw.dtype == tl.int64)
    tl.store(theirs + offs, tl.load(mine + offs) + 1.0)
    tlx.distributed_barrier(comm, index=pid)
    tl.store(out + pid, rank * 1000 + size)
    tl.store(out + 1 + pid, raw)


EVERYTHING_SIGNATURE = {"comm": "i64", "mem": "i64", "out": "*i64", "peer": "i32", "offset": "i32",
                        "BLOCK": "constexpr"}


@triton.jit
def two_lines_kernel(comm):
    tlx.distributed_barrier(comm)
    tlx.distributed_barrier(comm, barrier_kind="arrive", order="release")


def test_each_call_passes_its_python_line_as_a_site(compile_kernel):
    """Each barrier calls tleTritonBarrierAt with the id of its Python
    file:line (tle::abi::siteId, written out here as FNV-1a), a constant,
    registered in this process's table for the job's report."""
    from tle import runtime
    out = compile_kernel(two_lines_kernel, {"comm": "i64"})
    assert "tleTritonBarrierAt" in out.ttir and '"tleTritonBarrier"' not in out.ttir
    calls = extern_calls(out.ttir)
    first = two_lines_kernel.fn.__code__.co_firstlineno
    for call, line in zip(calls, (first + 2, first + 3)):
        assert call.symbol == "tleTritonBarrier"
        text = f"{__file__}:{line}"
        h = 2166136261
        for byte in text.encode():
            h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
        assert call.site == ((h & 0x7FFFFFFF) or 1) == runtime.site_id(text), (call, text)
        assert runtime.site_text(call.site) == text


def test_every_function_calls_its_entry_point(compile_kernel):
    out = compile_kernel(everything_kernel, EVERYTHING_SIGNATURE, {"BLOCK": 128})
    calls = {c.symbol: c for c in extern_calls(out.ttir)}
    assert set(calls) == set(ENTRY_POINTS)
    assert all(not c.pure and c.libname == "tle" for c in calls.values())
    assert calls["tleTritonIntraRank"].operands == ["arg:comm"]
    assert calls["tleTritonIntraSize"].operands == ["arg:comm"]
    assert calls["tleTritonLocalPointer"].operands == ["arg:mem", 64]
    # Several intra_pointer calls: find the one with the runtime offset and peer.
    runtime = [c for c in extern_calls(out.ttir) if c.symbol == "tleTritonIntraPointer" and c.operands[2] == "arg:peer"]
    assert len(runtime) == 1
    offset = runtime[0].operands[1]
    assert re.search(rf"{re.escape(offset)} = arith\.extsi %offset : i32 to i64", out.ttir)
    assert re.search(r"tt\.int_to_ptr %\w+ : i64 -> !tt\.ptr<f32>", out.ttir)


def test_entry_points_are_linked_from_the_bitcode(compile_kernel):
    out = compile_kernel(everything_kernel, EVERYTHING_SIGNATURE, {"BLOCK": 128})
    for name in ENTRY_POINTS:
        # Resolved: neither declared-only in the LLVM IR nor an external
        # function in the PTX (it was linked in, and is defined or inlined).
        assert not re.search(rf"declare .*@{name}\(", out.llir), name
        assert not re.search(rf"\.extern \.func .*{name}", out.ptx), name
        assert re.search(rf"define .*@{name}\(", out.llir) or not re.search(rf"call .*@{name}\(", out.llir), name
    # The library's barrier is in the code: a system-scope acquire for the
    # wait, and a system-scope release (store, reduction or fence) for the
    # arrive.
    assert re.search(r"ld\.acquire\.sys", out.ptx)
    assert re.search(r"(?:st|red|atom)\.release\.sys|fence\.(?:acq_rel|sc)\.sys", out.ptx)


@triton.jit
def comm_failed_kernel(comm, out):
    before = tlx.comm_failed(comm)
    tlx.distributed_barrier(comm)
    tl.store(out, before * 100 + tlx.comm_failed(comm))


def test_comm_failed_calls_its_entry_point_each_time(compile_kernel):
    # Not pure: the fault word changes while the kernel runs, so the call
    # after the barrier is not the one before it.
    out = compile_kernel(comm_failed_kernel, {"comm": "i64", "out": "*i32"})
    calls = [c for c in extern_calls(out.ttir) if c.symbol == "tleTritonCommFailed"]
    assert len(calls) == 2
    assert all(not c.pure and c.libname == "tle" and c.operands == ["arg:comm"] for c in calls)
    assert not re.search(r"declare .*@tleTritonCommFailed\(", out.llir)
    assert not re.search(r"\.extern \.func .*tleTritonCommFailed", out.ptx)
    # The fault word is host memory, read at system scope, relaxed.
    assert re.search(r"ld\.relaxed\.sys", out.ptx)
