# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""All-reduce on the GPUs of one node: three kernels and the host entry
point that picks one by size.

- ``oneshot_kernel``: every rank copies its input into its staging half,
  one barrier, then every rank reads every peer's copy and reduces all of
  it. One barrier per call; reads ``size x`` the message over the links.
- ``twoshot_kernel``: copy in, barrier, rank r reduces its ``1/size`` of
  every tile and stores the result into every peer's second region
  (a reduce-scatter by push), barrier, every rank copies the whole result
  out (the all-gather). Two barriers; moves ``2 (size-1)/size x`` the
  message: the large-message variant.
- ``ll_kernel``: the barrier-free one-shot for small messages: every
  element travels to every peer as one 64-bit word carrying the call's
  number in its high half (``device.ll_pack``); the reader polls its words
  until each carries the current number, so the data is its own signal and
  there is neither an entry nor an exit barrier.

The input is read once and never written before it is consumed, so
``out`` may be the input (in place). Epochs (the staging half, the LL
flag) live in the workspace's device counters: nothing is passed from the
host per call, so a captured CUDA graph replays correctly. docs/ops.md
gives the argument for each ordering.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

import tle.language as tlx

from ._host import ALIGN, Workspace, chunks, reduce_code
from .device import KIND_CALLS, advance, combine, epoch, half, identity, ll_pack, ll_store, ll_value, ll_wait, typed

#: The variants, by name (``variant=``).
VARIANTS = ("ll", "oneshot", "twoshot")


@triton.jit
def oneshot_kernel(comm, x, out, stage, state, n, half_bytes, slot, OP: tl.constexpr, BLOCK: tl.constexpr,
                   MAXG: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    size = tlx.intra_size(comm)
    dt = x.dtype.element_ty
    e = epoch(state, KIND_CALLS, MAXG)
    base = half(e, half_bytes)
    mine = typed(tlx.local_pointer(stage, base), state, dt)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(mine + offs, tl.load(x + offs, mask=m), mask=m)
    # Orders every rank's copy of this program's tiles before every read of
    # them below (the programs of all ranks split the message alike).
    tlx.distributed_barrier(comm, index=slot + pid)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        acc = identity(BLOCK, OP)
        # Ranks in the same order everywhere: every rank gets the same bits.
        for peer in range(size):
            src = typed(tlx.intra_pointer(stage, base, peer), state, dt)
            acc = combine(acc, tl.load(src + offs, mask=m, other=0).to(tl.float32), OP)
        tl.store(out + offs, acc.to(dt), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


@triton.jit
def twoshot_kernel(comm, x, out, stage, state, n, half_bytes, b_off, slot, OP: tl.constexpr, BLOCK: tl.constexpr,
                   MAXG: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dt = x.dtype.element_ty
    e = epoch(state, KIND_CALLS, MAXG)
    base = half(e, half_bytes)
    a_mine = typed(tlx.local_pointer(stage, base), state, dt)
    b_mine = typed(tlx.local_pointer(stage, base + b_off), state, dt)
    # A span is `size` blocks: block r of every span is rank r's to reduce.
    span = size * BLOCK
    step = tl.num_programs(0) * span
    for first in range(pid * span, n, step):
        for s in range(size):
            offs = first + s * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(a_mine + offs, tl.load(x + offs, mask=m), mask=m)
    # 1: every rank's input copy of this program's spans, before the reads.
    tlx.distributed_barrier(comm, index=slot + pid)
    for first in range(pid * span, n, step):
        offs = first + rank * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        acc = identity(BLOCK, OP)
        for peer in range(size):
            src = typed(tlx.intra_pointer(stage, base, peer), state, dt)
            acc = combine(acc, tl.load(src + offs, mask=m, other=0).to(tl.float32), OP)
        v = acc.to(dt)
        for peer in range(size):
            dst = typed(tlx.intra_pointer(stage, base + b_off, peer), state, dt)
            tl.store(dst + offs, v, mask=m)
    # 2: every rank's reduced blocks, pushed into our B, before the copy out.
    tlx.distributed_barrier(comm, index=slot + pid)
    for first in range(pid * span, n, step):
        for s in range(size):
            offs = first + s * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out + offs, tl.load(b_mine + offs, mask=m), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


@triton.jit
def ll_kernel(comm, x, out, ll, state, n, words, OP: tl.constexpr, BLOCK: tl.constexpr, MAXG: tl.constexpr,
              INTERP: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dt = x.dtype.element_ty
    e = epoch(state, KIND_CALLS, MAXG)
    flag = (e + 1) & 0xFFFFFFFF
    # The LL buffer of every rank: [half][source][words]. Call e + 2 reuses
    # call e's half: its kernel starts after this rank's call e + 1, whose
    # program 0 read every peer's words of call e + 1, so every peer had
    # finished call e (docs/ops.md).
    hbase = (e % 2) * size * words
    ours = hbase + rank * words
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        w = ll_pack(tl.load(x + offs, mask=m, other=0), flag)
        for i in range(1, size):
            dst = typed(tlx.intra_pointer(ll, 0, (rank + i) % size), state, tl.int64) + ours
            ll_store(dst + offs, w, m, INTERP)
    local = typed(tlx.local_pointer(ll, 0), state, tl.int64) + hbase
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        acc = identity(BLOCK, OP)
        for src in range(size):
            if src == rank:
                v = tl.load(x + offs, mask=m, other=0).to(tl.float32)
            else:
                v = ll_value(ll_wait(local + src * words + offs, m, flag), dt).to(tl.float32)
            acc = combine(acc, v, OP)
        tl.store(out + offs, acc.to(dt), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


def pick(ws: Workspace, n: int, element_size: int) -> str:
    """The variant ``all_reduce`` runs for ``n`` elements when none is
    asked: flag-in-data up to ``Config.ll_max_bytes``, one-shot up to
    ``Config.oneshot_max_bytes``, two-shot above."""
    cfg = ws.config
    if n * element_size <= cfg.ll_max_bytes and n <= ws.ll_words:
        return "ll"
    if n * element_size <= cfg.oneshot_max_bytes:
        return "oneshot"
    return "twoshot"


def all_reduce(ws: Workspace, x: Any, op: str = "sum", *, out: Any = None, variant: str | None = None,
               programs: int | None = None) -> Any:
    """``out`` (a new array unless given; may be ``x``) = the elementwise
    ``op`` of every rank's ``x``. ``variant``: ``"ll"``, ``"oneshot"`` or
    ``"twoshot"``; None picks by size (``pick``)."""
    A = ws.arrays
    A.check("input", x)
    if out is None:
        out = A.empty(tuple(x.shape), x.dtype)
    else:
        A.check("out", out)
        if A.dtype_name(out) != A.dtype_name(x) or A.numel(out) != A.numel(x):
            raise ValueError(f"out must have the input's dtype and number of elements ({A.dtype_name(x)}, "
                             f"{A.numel(x)}); got {A.dtype_name(out)}, {A.numel(out)}")
    code = reduce_code(op)
    n, es = A.numel(x), A.element_size(x)
    variant = variant or pick(ws, n, es)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(map(repr, VARIANTS))} (or None: by size); "
                         f"got {variant!r}")
    xf, of = A.flat(x), A.flat(out)
    cfg = ws.config
    if variant == "ll":
        if n > ws.ll_words:
            raise ValueError(f"input has {n} elements; the flag-in-data all-reduce ('ll') takes at most "
                             f"{ws.ll_words} (Config.ll_bytes = {cfg.ll_bytes} bytes, 4 per element): use "
                             f"'oneshot' or a larger Config.ll_bytes")
        ws.launch(ll_kernel, programs or ws.programs_for(n), A.arg(xf), A.arg(of), ws.ll.handle, ws.state_arg, n,
                  ws.ll_words, OP=code, BLOCK=cfg.block)
    elif variant == "oneshot":
        for start, length in chunks(n, cfg.stage_bytes // es):
            ws.launch(oneshot_kernel, programs or ws.programs_for(length), A.arg(xf[start:]), A.arg(of[start:]),
                      ws.stage.handle, ws.state_arg, length, cfg.stage_bytes, cfg.slot_base, OP=code, BLOCK=cfg.block)
    else:
        per = (cfg.stage_bytes // 2 - ALIGN) // es
        for start, length in chunks(n, per):
            b_off = (length * es + ALIGN - 1) // ALIGN * ALIGN
            ws.launch(twoshot_kernel, programs or ws.programs_for(length, ws.size), A.arg(xf[start:]),
                      A.arg(of[start:]), ws.stage.handle, ws.state_arg, length, cfg.stage_bytes, b_off,
                      cfg.slot_base, OP=code, BLOCK=cfg.block)
    return out
