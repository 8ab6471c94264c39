# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""All-to-all with equal splits on the GPUs of one node
(``torch.distributed.all_to_all_single`` without split sizes): the input's
row d (of ``size`` equal rows) goes to rank d, where it becomes row
``rank`` of ``out``.

``push_kernel``: every rank stores its row d into row ``rank`` of rank d's
staging half (its own row straight into ``out``), one barrier, then copies
the rows it received out. ``out`` may be the input (in place): each tile
of a row is read before the barrier and written after it, by the same
program. The all-to-all-v of MoE is ``tle.ops.moe``.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

import tle.language as tlx

from ._host import Workspace, chunks
from .device import KIND_CALLS, advance, epoch, half, typed


@triton.jit
def push_kernel(comm, x, out, stage, state, n, stride, half_bytes, slot, BLOCK: tl.constexpr, MAXG: tl.constexpr,
                INTERP: tl.constexpr):
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
        tl.store(out + rank * stride + offs, tl.load(x + rank * stride + offs, mask=m), mask=m)
        for i in range(1, size):
            d = (rank + i) % size
            dst = typed(tlx.intra_pointer(stage, base, d), state, dt) + rank * n
            tl.store(dst + offs, tl.load(x + d * stride + offs, mask=m), mask=m)
    # Every peer's row for us, of this program's tiles, is in our staging.
    tlx.distributed_barrier(comm, index=slot + pid)
    local = typed(tlx.local_pointer(stage, base), state, dt)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        for i in range(1, size):
            src = (rank + i) % size
            tl.store(out + src * stride + offs, tl.load(local + src * n + offs, mask=m), mask=m)
    advance(state, e + 1, KIND_CALLS, MAXG)


def all_to_all(ws: Workspace, x: Any, *, out: Any = None, programs: int | None = None) -> Any:
    """``out`` (new unless given; may be ``x``): row s is rank s's row
    ``rank`` of ``x``, whose elements split into ``size`` equal rows."""
    A = ws.arrays
    A.check("input", x)
    size = ws.size
    total, es = A.numel(x), A.element_size(x)
    if total % size:
        raise ValueError(f"input has {total} elements, not a multiple of the {size} ranks: all_to_all splits "
                         f"it into {size} equal rows")
    n = total // size
    if out is None:
        out = A.empty(tuple(x.shape), x.dtype)
    else:
        A.check("out", out)
        if A.dtype_name(out) != A.dtype_name(x) or A.numel(out) != total:
            raise ValueError(f"out must have the input's dtype and number of elements ({A.dtype_name(x)}, "
                             f"{total}); got {A.dtype_name(out)}, {A.numel(out)}")
    cfg = ws.config
    xf, of = A.flat(x), A.flat(out)
    for start, length in chunks(n, cfg.stage_bytes // (size * es)):
        ws.launch(push_kernel, programs or ws.programs_for(length), A.arg(xf[start:]), A.arg(of[start:]),
                  ws.stage.handle, ws.state_arg, length, n, cfg.stage_bytes, cfg.slot_base, BLOCK=cfg.block)
    return out
