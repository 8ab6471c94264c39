# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Reduce-scatter on the GPUs of one node: the input's row d (of ``size``
equal rows, ``torch.distributed.reduce_scatter_tensor``'s layout) reduced
over every rank lands in rank d's ``out``.

- ``push_kernel``: every rank stores its row d into row ``rank`` of rank
  d's staging half, one barrier, then reduces the rows it received (its own
  row read from the input). Remote traffic is stores.
- ``pull_kernel``: every rank copies the rows the peers need into its
  staging half, one barrier, then loads its row from every peer and
  reduces. Remote traffic is loads.

Ranks are reduced in rank order, the same on every rank. In place: ``out``
may be the input's row of this rank.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

import tle.language as tlx

from ._host import Workspace, chunks, reduce_code
from .device import KIND_CALLS, advance, combine, epoch, half, identity, typed

#: The variants, by name (``variant=``).
VARIANTS = ("push", "pull")


@triton.jit
def push_kernel(comm, x, out, stage, state, n, in_stride, half_bytes, slot, OP: tl.constexpr, BLOCK: tl.constexpr,
                MAXG: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dt = x.dtype.element_ty
    e = epoch(state, KIND_CALLS, MAXG)
    base = half(e, half_bytes)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        for i in range(1, size):
            d = (rank + i) % size
            dst = typed(tlx.intra_pointer(stage, base, d), state, dt) + rank * n
            tl.store(dst + offs, tl.load(x + d * in_stride + offs, mask=m), mask=m)
    # Every peer's contribution to this program's tiles of our row is in
    # our staging after it.
    tlx.distributed_barrier(comm, index=slot + pid)
    local = typed(tlx.local_pointer(stage, base), state, dt)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        acc = identity(BLOCK, OP)
        for src in range(size):
            if src == rank:
                v = tl.load(x + rank * in_stride + offs, mask=m, other=0).to(tl.float32)
            else:
                v = tl.load(local + src * n + offs, mask=m, other=0).to(tl.float32)
            acc = combine(acc, v, OP)
        tl.store(out + offs, acc.to(dt), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


@triton.jit
def pull_kernel(comm, x, out, stage, state, n, in_stride, half_bytes, slot, OP: tl.constexpr, BLOCK: tl.constexpr,
                MAXG: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dt = x.dtype.element_ty
    e = epoch(state, KIND_CALLS, MAXG)
    base = half(e, half_bytes)
    local = typed(tlx.local_pointer(stage, base), state, dt)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        for i in range(1, size):
            d = (rank + i) % size
            tl.store(local + d * n + offs, tl.load(x + d * in_stride + offs, mask=m), mask=m)
    # Every peer's copy of the rows of this program's tiles is in its
    # staging after it.
    tlx.distributed_barrier(comm, index=slot + pid)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        acc = identity(BLOCK, OP)
        for src in range(size):
            if src == rank:
                v = tl.load(x + rank * in_stride + offs, mask=m, other=0).to(tl.float32)
            else:
                peer = typed(tlx.intra_pointer(stage, base, src), state, dt) + rank * n
                v = tl.load(peer + offs, mask=m, other=0).to(tl.float32)
            acc = combine(acc, v, OP)
        tl.store(out + offs, acc.to(dt), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


def reduce_scatter(ws: Workspace, x: Any, op: str = "sum", *, out: Any = None, variant: str = "push",
                   programs: int | None = None) -> Any:
    """``out`` (new unless given: ``(x.shape[0] // size, *x.shape[1:])``)
    = the ``op`` over every rank of row ``rank`` of ``x``, whose elements
    split into ``size`` equal rows. ``variant``: ``"push"`` or ``"pull"``."""
    A = ws.arrays
    A.check("input", x)
    size = ws.size
    total, es = A.numel(x), A.element_size(x)
    if total % size:
        raise ValueError(f"input has {total} elements, not a multiple of the {size} ranks: reduce_scatter "
                         f"splits it into {size} equal rows")
    n = total // size
    if out is None:
        shape = tuple(x.shape)
        out = A.empty((shape[0] // size, *shape[1:]) if shape and shape[0] % size == 0 else (n,), x.dtype)
    else:
        A.check("out", out)
        if A.dtype_name(out) != A.dtype_name(x) or A.numel(out) != n:
            raise ValueError(f"out must have the input's dtype and 1/{size} of its elements ({A.dtype_name(x)}, "
                             f"{n}); got {A.dtype_name(out)}, {A.numel(out)}")
    code = reduce_code(op)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(map(repr, VARIANTS))}; got {variant!r}")
    kernel = push_kernel if variant == "push" else pull_kernel
    cfg = ws.config
    xf, of = A.flat(x), A.flat(out)
    for start, length in chunks(n, cfg.stage_bytes // (size * es)):
        ws.launch(kernel, programs or ws.programs_for(length), A.arg(xf[start:]), A.arg(of[start:]),
                  ws.stage.handle, ws.state_arg, length, n, cfg.stage_bytes, cfg.slot_base, OP=code,
                  BLOCK=cfg.block)
    return out
