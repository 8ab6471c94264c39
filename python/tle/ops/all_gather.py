# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""All-gather on the GPUs of one node: ``out`` holds every rank's input,
rank r's at row r (``torch.distributed.all_gather_into_tensor``'s layout:
``out`` has ``size x`` the input's elements, rank-major).

- ``push_kernel``: every rank stores its input into row ``rank`` of every
  peer's staging half (and its own row of ``out``), one barrier, then
  copies the peers' rows out of its own staging. Remote traffic is stores.
- ``pull_kernel``: every rank copies its input into its staging half, one
  barrier, then loads every peer's copy into ``out``. Remote traffic is
  loads.

Either way one barrier per call, and the staging half alternates with the
device counter (call e + 2 reuses call e's half only after call e + 1's
barrier, docs/ops.md). With the team transfers of the one-sided issue the
push's remote stores become puts (docs/ops.md, "Teams").
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

import tle.language as tlx

from ._host import Workspace, chunks
from .device import KIND_CALLS, advance, epoch, half, typed

#: The variants, by name (``variant=``).
VARIANTS = ("push", "pull")


@triton.jit
def push_kernel(comm, x, out, stage, state, n, out_stride, half_bytes, slot, BLOCK: tl.constexpr,
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
        v = tl.load(x + offs, mask=m)
        tl.store(out + rank * out_stride + offs, v, mask=m)
        for i in range(1, size):
            dst = typed(tlx.intra_pointer(stage, base, (rank + i) % size), state, dt) + rank * n
            tl.store(dst + offs, v, mask=m)
    # Every peer's row of this program's tiles is in our staging after it.
    tlx.distributed_barrier(comm, index=slot + pid)
    local = typed(tlx.local_pointer(stage, base), state, dt)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        for i in range(1, size):
            src = (rank + i) % size
            tl.store(out + src * out_stride + offs, tl.load(local + src * n + offs, mask=m), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


@triton.jit
def pull_kernel(comm, x, out, stage, state, n, out_stride, half_bytes, slot, BLOCK: tl.constexpr,
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
        v = tl.load(x + offs, mask=m)
        tl.store(local + offs, v, mask=m)
        tl.store(out + rank * out_stride + offs, v, mask=m)
    # Every peer's copy of this program's tiles is in its staging after it.
    tlx.distributed_barrier(comm, index=slot + pid)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        for i in range(1, size):
            src = (rank + i) % size
            peer = typed(tlx.intra_pointer(stage, base, src), state, dt)
            tl.store(out + src * out_stride + offs, tl.load(peer + offs, mask=m), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


def all_gather(ws: Workspace, x: Any, *, out: Any = None, variant: str = "push",
               programs: int | None = None) -> Any:
    """``out`` (new unless given: ``(size * x.shape[0], *x.shape[1:])``)
    = every rank's ``x``, rank-major. ``variant``: ``"push"`` or
    ``"pull"``. ``x`` may be ``out``'s row of this rank (in place)."""
    A = ws.arrays
    A.check("input", x)
    n, es, size = A.numel(x), A.element_size(x), ws.size
    if out is None:
        shape = tuple(x.shape)
        out = A.empty((size * shape[0], *shape[1:]) if shape else (size,), x.dtype)
    else:
        A.check("out", out)
        if A.dtype_name(out) != A.dtype_name(x) or A.numel(out) != size * n:
            raise ValueError(f"out must have the input's dtype and {size} x its elements ({A.dtype_name(x)}, "
                             f"{size * n}); got {A.dtype_name(out)}, {A.numel(out)}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(map(repr, VARIANTS))}; got {variant!r}")
    kernel = push_kernel if variant == "push" else pull_kernel
    cfg = ws.config
    xf, of = A.flat(x), A.flat(out)
    per = cfg.stage_bytes // (size * es) if variant == "push" else cfg.stage_bytes // es
    for start, length in chunks(n, per):
        ws.launch(kernel, programs or ws.programs_for(length), A.arg(xf[start:]), A.arg(of[start:]),
                  ws.stage.handle, ws.state_arg, length, n, cfg.stage_bytes, cfg.slot_base, BLOCK=cfg.block)
    return out
