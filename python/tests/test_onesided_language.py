# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""tle.language's one-sided builtins (put, get, put_value, flush, the
counter and signal-shadow calls) generated for sm_90 without a GPU: each
emits one non-pure call of its Triton entry point with the arguments in the
entry point's order and the ABI's encodings, and bad arguments are
compile-time errors that say what to write. The kernels are generated to
TTIR only, so that these checks do not depend on the device library (the
CPU-rank tests in test_onesided_ranks.py run the calls)."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.compiler.errors import CompilationError

import tle
import tle.language as tlx

from test_language import extern_calls

# The ABI's encodings, written out by hand (docs/abi.md, "Encodings"):
# never taken from tle.language, whose tables are what is checked.
TEAMS = {"intra": 0, "inter": 1, "world": 2}
BLOCK, WARP = 2, 1
RELAXED, ACQUIRE, RELEASE, ACQ_REL, SEQ_CST = 0, 1, 2, 3, 4
NO_SIGNAL, SIGNAL_INC, SIGNAL_ADD = -1, 0, 1
NO_COUNTER = -1

TARGET = GPUTarget("cuda", 90, 32)
SIGNATURE = {"comm": "i64", "dst": "i64", "src": "i64", "n": "i64", "peer": "i32"}


def ttir(fn, signature=SIGNATURE, constexprs=None, **options) -> str:
    """The TTIR of ``fn`` (code generation only: nothing is linked)."""
    options.setdefault("extern_libs", tle.extern_libs())
    backend = make_backend(TARGET)
    opts = backend.parse_options(options)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs or {})
    text = str(src.make_ir(TARGET, opts, backend.get_codegen_implementation(opts), backend.get_module_map(),
                           context))
    # MLIR names a negative constant %c-1_i32, which extern_calls' value
    # names ([\w.]+) do not cover.
    return text.replace("%c-", "%cminus")


@pytest.fixture(autouse=True)
def _bitcode(bitcode):
    """extern_libs names the bitcode, so it must exist (CI builds it)."""


@triton.jit
def put_kernel(comm, dst, src, n, peer):
    tlx.put(comm, dst, 8, src, 0, n, peer)
    tlx.put(comm, dst, 0, src, 16, 64, 1, team="world", signal=3, counter=1, group_kind="block")
    tlx.put(comm, dst, 0, src, 0, n, peer, team="inter", signal=2, signal_op="add", signal_value=5, order="release",
            context=1)
    tlx.put(comm, dst, n, src, n, n, peer, signal=peer, signal_op="add", signal_value=n, counter=peer,
            order="acq_rel")


def test_put_encodes_every_combination():
    calls = [c for c in extern_calls(ttir(put_kernel)) if c.symbol == "tleTritonPut"]
    assert len(calls) == 4 and all(not c.pure and c.libname == "tle" for c in calls)
    # comm, dst, dstOffset, src, srcOffset, bytes, team, peer, signalOp,
    # signal, signalValue, counter, context, group, order
    assert calls[0].operands == ["arg:comm", "arg:dst", 8, "arg:src", 0, "arg:n", 0, "arg:peer", NO_SIGNAL, 0, 0,
                                 NO_COUNTER, 0, BLOCK, RELAXED]
    assert calls[1].operands == ["arg:comm", "arg:dst", 0, "arg:src", 16, 64, 2, 1, SIGNAL_INC, 3, 0, 1, 0, BLOCK,
                                 RELAXED]
    assert calls[2].operands == ["arg:comm", "arg:dst", 0, "arg:src", 0, "arg:n", 1, "arg:peer", SIGNAL_ADD, 2, 5,
                                 NO_COUNTER, 1, BLOCK, RELEASE]
    assert calls[3].operands == ["arg:comm", "arg:dst", "arg:n", "arg:src", "arg:n", "arg:n", 0, "arg:peer",
                                 SIGNAL_ADD, "arg:peer", "arg:n", "arg:peer", 0, BLOCK, ACQ_REL]


@triton.jit
def get_value_kernel(comm, dst, src, n, peer):
    tlx.get(comm, src, 4, dst, 12, n, peer, team="world", order="acquire", context=2)
    tlx.put_value(comm, dst, 0, -1, peer)
    tlx.put_value(comm, dst, n, n, peer, team="inter", signal=7, order="release")
    tlx.put_value(comm, dst, 8, 2**64 - 2, peer, signal=1, signal_op="add", signal_value=3)


def test_get_and_put_value_encode_their_arguments():
    calls = extern_calls(ttir(get_value_kernel))
    assert [c.symbol for c in calls] == ["tleTritonGet"] + ["tleTritonPutValue"] * 3
    # comm, src, srcOffset, dst, dstOffset, bytes, team, peer, context, group, order
    assert calls[0].operands == ["arg:comm", "arg:src", 4, "arg:dst", 12, "arg:n", 2, "arg:peer", 2, BLOCK, ACQUIRE]
    # comm, dst, dstOffset, value, team, peer, signalOp, signal, signalValue, context, group, order
    assert calls[1].operands == ["arg:comm", "arg:dst", 0, -1, 0, "arg:peer", NO_SIGNAL, 0, 0, 0, BLOCK, RELAXED]
    assert calls[2].operands == ["arg:comm", "arg:dst", "arg:n", "arg:n", 1, "arg:peer", SIGNAL_INC, 7, 0, 0, BLOCK,
                                 RELEASE]
    assert calls[3].operands == ["arg:comm", "arg:dst", 8, -2, 0, "arg:peer", SIGNAL_ADD, 1, 3, 0, BLOCK, RELAXED]


@triton.jit
def completion_kernel(comm, dst, src, n, peer):
    tlx.flush(comm)
    tlx.flush(comm, context=1, order="acquire")
    tlx.counter_wait(comm, 3, n)
    tlx.counter_wait(comm, peer, 5, context=1, order="relaxed")
    v = tlx.read_counter(comm, 3, order="relaxed")
    tlx.reset_counter(comm, 3, context=2)
    tlx.shadow_increase(comm, 4, v)
    tlx.shadow_wait(comm, 4, context=1, order="seq_cst")


def test_completion_calls_encode_their_arguments():
    calls = extern_calls(ttir(completion_kernel))
    assert [c.symbol for c in calls] == ["tleTritonFlush", "tleTritonFlush", "tleTritonWaitCounter",
                                         "tleTritonWaitCounter", "tleTritonReadCounter", "tleTritonResetCounter",
                                         "tleTritonIncreaseSignalShadow", "tleTritonWaitSignalShadow"]
    assert all(not c.pure for c in calls)
    assert calls[0].operands == ["arg:comm", 0, BLOCK, ACQ_REL]
    assert calls[1].operands == ["arg:comm", 1, BLOCK, ACQUIRE]
    assert calls[2].operands == ["arg:comm", 3, "arg:n", 0, BLOCK, ACQUIRE]
    assert calls[3].operands == ["arg:comm", "arg:peer", 5, 1, BLOCK, RELAXED]
    assert calls[4].operands == ["arg:comm", 3, 0, RELAXED]
    assert calls[5].operands == ["arg:comm", 3, 2]
    read = calls[4]
    assert calls[6].operands[:2] == ["arg:comm", 4] and calls[6].operands[3] == 0
    assert calls[6].operands[2] != read.operands[2]  # the value read, not a constant
    assert calls[7].operands == ["arg:comm", 4, 1, BLOCK, SEQ_CST]


def _error(body: str, signature=SIGNATURE, **options) -> str:
    """The message of the CompilationError that compiling ``body`` raises."""
    namespace = {"triton": triton, "tl": tl, "tlx": tlx}
    source = "@triton.jit\ndef kernel(comm, dst, src, n, peer):\n    " + body + "\n"
    path = f"<onesided-{abs(hash(body))}>"
    import linecache
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    exec(compile(source, path, "exec"), namespace)
    with pytest.raises(CompilationError) as info:
        ttir(namespace["kernel"], signature, **options)
    return str(info.value)


@pytest.mark.parametrize("body, message", [
    ("tlx.put(comm, dst, 0, src, 0, n, peer, order='acquire')",
     "put cannot use order 'acquire': a put only publishes, and FlagCX's put fences for release and acq_rel alone"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, order='seq_cst')", "put cannot use order 'seq_cst'"),
    ("tlx.get(comm, src, 0, dst, 0, n, peer, order='release')",
     "get cannot use order 'release': a get only observes"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, signal=1, signal_value=3)",
     "signal_op 'inc' adds 1 and takes no signal_value; use signal_op='add'"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, signal=1, signal_op='add')", "signal_op 'add' needs a signal_value"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, signal_value=3)", "signal_value needs a signal"),
    ("tlx.put(comm, dst, 0, src, 0, -8, peer)", "nbytes must be a non-negative number of bytes; got -8"),
    ("tlx.put(comm, dst, -1, src, 0, n, peer)", "dst_offset must be a non-negative number of bytes"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, team='node')", "unknown team 'node'"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, counter=-1)", "counter must be in [0, 2**31)"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, context=-2)", "context must be in [0, 2**31)"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, group_kind='grid')", "signals have no group_kind 'grid'"),
    ("tlx.put(comm, dst, 0, src, 0, n, peer, group_kind='thread')", "group_kind 'thread' is not available"),
    ("tlx.put(comm, dst, 0, src, 0, 1.5, peer)", "nbytes must be an integer number of bytes"),
    ("tlx.put_value(comm, dst, 0, 2**64, peer)", "value must fit in 64 bits"),
    ("tlx.put_value(comm, dst, 0, n, peer, order='acquire')", "put_value cannot use order 'acquire'"),
    ("tlx.counter_wait(comm, 0, 1, order='release')", "counter_wait cannot release"),
    ("tlx.counter_wait(comm, 0, -1)", "target must be in [0, 2**63)"),
    ("tlx.read_counter(comm, 0, order='release')", "read_counter cannot release"),
    ("tlx.shadow_wait(comm, 0, order='release')", "shadow_wait cannot release"),
    ("tlx.shadow_increase(comm, -1, 1)", "index must be in [0, 2**31)"),
    ("tlx.flush(comm, order='sideways')", "unknown order 'sideways'"),
])
def test_bad_arguments_are_compile_time_errors(body, message):
    assert message in _error(body)


def test_warp_group_needs_one_warp():
    assert "group_kind 'warp' needs num_warps=1" in _error("tlx.flush(comm, group_kind='warp')")


#: The Triton entry points the one-sided builtins call, with the signature
#: they are called with (result first; abi.def's types): the contract the
#: device library's definitions must meet.
CALLED = {
    "tleTritonPut": ["I32", "I64", "I64", "I64", "I64", "I64", "I64", "I32", "I32", "I32", "I32", "I64", "I32",
                     "I32", "I32", "I32"],
    "tleTritonGet": ["I32", "I64", "I64", "I64", "I64", "I64", "I64", "I32", "I32", "I32", "I32", "I32"],
    "tleTritonPutValue": ["I32", "I64", "I64", "I64", "I64", "I32", "I32", "I32", "I32", "I64", "I32", "I32",
                          "I32"],
    "tleTritonFlush": ["I32", "I64", "I32", "I32", "I32"],
    # The waits are called through their twins with the call site last.
    "tleTritonWaitCounterAt": ["I32", "I64", "I32", "I64", "I32", "I32", "I32", "I32"],
    "tleTritonReadCounter": ["I64", "I64", "I32", "I32", "I32"],
    "tleTritonResetCounter": ["I32", "I64", "I32", "I32"],
    "tleTritonIncreaseSignalShadow": ["I32", "I64", "I32", "I64", "I32"],
    "tleTritonWaitSignalShadowAt": ["I32", "I64", "I32", "I32", "I32", "I32", "I32"],
}


def test_called_entry_points_match_abi_def():
    """Each entry point abi.def defines has the signature the builtins call
    it with; the ones it does not define yet are listed in the skip."""
    from test_abi import FUNCTIONS
    wrong = {name: FUNCTIONS[name] for name, sig in CALLED.items() if name in FUNCTIONS and FUNCTIONS[name] != sig}
    assert not wrong, f"abi.def's signatures differ from the calls: {wrong}"
    missing = [name for name in CALLED if name not in FUNCTIONS]
    if missing:
        pytest.skip(f"abi.def does not define {', '.join(missing)} yet: kernels calling them do not link")


def test_called_signatures_are_what_the_kernels_emit():
    """CALLED is what the TTIR holds: every call's operand count and types."""
    text = ttir(put_kernel) + ttir(get_value_kernel) + ttir(completion_kernel)
    import re
    for name, sig in CALLED.items():
        m = re.search(rf'tt\.extern_elementwise [^{{]*\{{[^}}]*symbol = "{name}"[^}}]*\}} : \(([^)]*)\) -> (\w+)', text)
        assert m, name
        types = [t.strip() for t in m[1].split(",")]
        assert ["I" + m[2][1:]] + ["I" + t[1:] for t in types] == sig, name
