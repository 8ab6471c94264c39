# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The device-level building blocks of ``tle.ops``: ``@triton.jit``
functions a kernel author composes into a collective or fuses into a
compute kernel (``python/examples/ag_gemm.py`` is the pattern), each one
small and each one's ordering rule stated here once.

- Reductions: ``combine`` (sum/max/min, by a compile-time code) and
  ``identity`` (the value ``combine`` leaves unchanged).
- Epochs carried on the device (CUDA-graph safe, no host round trip):
  ``epoch`` reads this program's call counter from the state array and
  ``advance`` adds to it for the next call. Counter ``KIND`` of program ``p``
  is word ``KIND * MAXG + p``; a launch of ``G`` programs advances every one
  of the ``MAXG`` words of its kind (program ``p`` the words ``p, p + G,
  ...``), so that a later launch with another grid reads the same count in
  every program, and no word has two writers in one launch.
- Peer pointers: ``typed`` makes an address from ``tle.language`` a
  typed pointer with the alignment Triton needs to vectorize.
- Staging halves: ``half`` gives the byte offset of the half of a
  double-buffered symmetric buffer that call ``e`` uses (``e % 2``).
- Flag-in-data words (the low-latency protocol): ``ll_pack`` puts an
  element and a 32-bit flag into one 64-bit word, ``ll_store`` stores words
  into a peer's memory so that each arrives whole, ``ll_wait`` polls words
  until every one carries the expected flag and ``ll_value`` takes the
  element back out. A word is its own signal: no fence, no barrier.

Rank and size come from ``tle.language``; peers' memory from
``tle.language.intra_pointer``. See docs/ops.md for how the collectives in
this package compose these.
"""

from __future__ import annotations

import triton
import triton.language as tl

#: Reduction codes of ``combine`` (the ``OP`` constexpr of every kernel).
SUM: tl.constexpr = tl.constexpr(0)
MAX: tl.constexpr = tl.constexpr(1)
MIN: tl.constexpr = tl.constexpr(2)

#: Rows of the state array: the call counter that the staging halves and
#: the flag-in-data numbers follow (``epoch`` / ``advance``), and the words
#: MoE dispatch sets when a token did not fit its expert's capacity.
KIND_CALLS: tl.constexpr = tl.constexpr(0)
KIND_OVERFLOW: tl.constexpr = tl.constexpr(1)
#: Rows in the state array.
KINDS = 2


@triton.jit
def combine(a, b, OP: tl.constexpr):
    """``a`` combined with ``b`` elementwise: sum, max or min."""
    if OP == 0:
        return a + b
    elif OP == 1:
        return tl.maximum(a, b)
    else:
        return tl.minimum(a, b)


@triton.jit
def identity(BLOCK: tl.constexpr, OP: tl.constexpr):
    """A float32 block that ``combine`` leaves unchanged: 0, -inf or +inf."""
    if OP == 0:
        return tl.zeros([BLOCK], tl.float32)
    elif OP == 1:
        return tl.full([BLOCK], float("-inf"), tl.float32)
    else:
        return tl.full([BLOCK], float("inf"), tl.float32)


@triton.jit
def epoch(state, KIND: tl.constexpr, MAXG: tl.constexpr):
    """This program's count of calls of kind ``KIND`` (int64): every rank
    makes the same calls, so every rank reads the same count."""
    return tl.load(state + KIND * MAXG + tl.program_id(0))


@triton.jit
def advance(state, value, KIND: tl.constexpr, MAXG: tl.constexpr):
    """Sets the ``KIND`` counter of every program slot this program owns
    (``p, p + G, ...``) to ``value``; the last thing a program does, after
    every read of the counter."""
    offs = tl.arange(0, MAXG)
    mine = (offs % tl.num_programs(0)) == tl.program_id(0)
    tl.store(state + KIND * MAXG + offs, tl.full([MAXG], value, tl.int64), mask=mine)


@triton.jit
def typed(address, anchor, DTYPE: tl.constexpr):
    """``address`` (an int64 from ``intra_pointer`` / ``local_pointer``) as
    a pointer to ``DTYPE`` whose alignment Triton knows, so that its loads
    and stores are vectorized (16 bytes per thread, not one element).

    A pointer made from an integer has no known alignment; this one is
    ``anchor`` (a pointer argument into a symmetric buffer of this rank:
    Triton knows it is 16-byte aligned) plus a distance declared a multiple
    of 16 elements. That holds because symmetric buffers start at least
    256 bytes apart from each other (cudaMalloc, CUDA IPC and cuMem
    mappings, the emulator's pages) and the workspace puts every region at
    a multiple of 256 bytes (``_host.ALIGN``)."""
    base = anchor.to(tl.pointer_type(DTYPE))
    elem: tl.constexpr = DTYPE.primitive_bitwidth // 8
    return base + tl.multiple_of((address - anchor.to(tl.int64)) // elem, 16)


@triton.jit
def half(e, half_bytes):
    """Byte offset of call ``e``'s half of a double-buffered buffer. A
    writer of call ``e + 2`` reuses call ``e``'s half only after it met the
    reader in call ``e + 1`` (a barrier or a flag of that call), that is
    after the reader's kernel of call ``e`` had finished."""
    return (e % 2) * half_bytes


@triton.jit
def ll_pack(values, flag):
    """64-bit words holding ``values`` (fp32, bf16 or fp16) in the low bits
    and ``flag`` (the call's number, 1..2**32-1) in the high 32."""
    if values.dtype == tl.float32:
        bits = values.to(tl.uint32, bitcast=True).to(tl.uint64)
    else:
        bits = values.to(tl.uint16, bitcast=True).to(tl.uint64)
    return (bits | (flag.to(tl.uint64) << 32)).to(tl.int64, bitcast=True)


@triton.jit
def ll_value(words, DTYPE: tl.constexpr):
    """The elements of type ``DTYPE`` that ``ll_pack`` put into ``words``."""
    if DTYPE == tl.float32:
        return (words & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
    else:
        return (words & 0xFFFF).to(tl.uint16).to(DTYPE, bitcast=True)


@triton.jit
def ll_store(ptrs, words, mask, INTERP: tl.constexpr):
    """Stores each 64-bit word as one system-scope relaxed access, so that a
    reader on another GPU sees either the old word or the whole new one.
    (Under Triton's interpreter the same relaxed atomic, so that the race
    checks of tle.launch see what the GPU does: an atomic, which the
    readers' volatile loads do not race with.)"""
    if INTERP:
        tl.atomic_xchg(ptrs, words, mask=mask, sem="relaxed")
    else:
        tl.inline_asm_elementwise(
            "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p st.relaxed.sys.global.b64 [$1], $2; mov.u32 $0, 0; }",
            "=r,l,l,r", [ptrs, words, mask.to(tl.int32)], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def ll_wait(ptrs, mask, flag):
    """Polls the words at ``ptrs`` (volatile loads, never cached) until
    every one under ``mask`` carries ``flag``; returns them. The flag is in
    the word it guards, so the value that came with it is the fresh one.
    The words are loaded once more after the poll (the poll carries only
    a count, which Triton 3.6's layout passes need of a while loop); they
    cannot change in between: their writer's next store there is two calls
    later, after it has heard from this program's next call."""
    stale = 1
    while stale > 0:
        words = tl.load(ptrs, mask=mask, other=0, volatile=True)
        stale = tl.sum(((((words >> 32) & 0xFFFFFFFF) != flag) & mask).to(tl.int32), axis=0)
    return tl.load(ptrs, mask=mask, other=0, volatile=True)
