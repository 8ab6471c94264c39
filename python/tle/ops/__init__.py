# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""``tle.ops``: the collectives a user calls, written in Triton on TLE's
barriers, signals and peer pointers, for the GPUs of one node (and, under
Triton's interpreter, for CPU ranks).

Two levels (docs/ops.md):

- Device level, for kernel authors: ``tle.ops.device`` (reductions, epochs
  carried on the device, staging halves, flag-in-data words) and the
  kernels of each family (``all_reduce``, ``all_gather``,
  ``reduce_scatter``, ``all_to_all``, ``moe``), each a ``@triton.jit``
  function with its protocol in its docstring.
- Host level, for PyTorch (or NumPy) users: ``Collectives`` over a
  ``tle.torch.Communicator`` (torch tensors) or a ``tle.cpu.Communicator``
  (NumPy arrays on CPU ranks), also reached as ``comm.collectives()``::

      coll = comm.collectives()                 # or tle.ops.Collectives(comm, Config(...))
      y = coll.all_reduce(x)                    # out of place, variant by size
      coll.all_reduce_(x, op="max")             # in place
      g = coll.all_gather(x)                    # (size * x.shape[0], ...)
      r = coll.reduce_scatter(g, variant="pull")
      t = coll.all_to_all(x)
      moe = coll.moe(num_experts=256, hidden=7168, max_tokens=128, topk=8, dtype=torch.bfloat16)
      recv, count = moe.dispatch(tokens, topk_idx)   # no host sync
      out = moe.combine(expert_out, topk_weights)
      f = coll.fused()                          # or tle.ops.Fused(comm): GEMMs fused with communication
      c = f.ag_gemm(a, b)                       # AllGather(a) @ b
      c = f.gemm_rs(a, b)                       # ReduceScatter(a @ b); f.gemm_ar(a, b): AllReduce(a @ b)

Every call is asynchronous on the device and keeps its epochs on the
device, so it can be captured in a CUDA graph and replayed.
"""

from __future__ import annotations

from typing import Any

from . import all_gather as _ag
from . import all_reduce as _ar
from . import all_to_all as _a2a
from . import reduce_scatter as _rs
from ._host import DTYPES, REDUCE_OPS, Config, Workspace
from .fused import Fused, FusedConfig

__all__ = ["Collectives", "Config", "DTYPES", "Fused", "FusedConfig", "REDUCE_OPS"]


class Collectives:
    """The collectives of one communicator: a workspace (two staging halves
    of ``Config.stage_bytes``, the flag-in-data buffer, device counters;
    collective to create) and one method per operation. ``x_`` methods are
    in place. Calls must be made by every rank, in the same order, on one
    stream."""

    def __init__(self, comm: Any, config: Config | None = None):
        self.ws = Workspace(comm, config)
        self.comm = comm
        self.config = self.ws.config
        self._moes: list[Any] = []
        self._fused: list[Fused] = []

    def all_reduce(self, x: Any, op: str = "sum", *, out: Any = None, variant: str | None = None) -> Any:
        """A new array (or ``out``) holding the ``op`` (``"sum"``,
        ``"max"``, ``"min"``) over every rank of ``x``; ``variant``
        ``"ll"`` (flag-in-data, no barrier), ``"oneshot"`` or
        ``"twoshot"``, or None to pick by size."""
        return _ar.all_reduce(self.ws, x, op, out=out, variant=variant)

    def all_reduce_(self, x: Any, op: str = "sum", *, variant: str | None = None) -> Any:
        """``all_reduce`` into ``x`` itself; returns ``x``."""
        return _ar.all_reduce(self.ws, x, op, out=x, variant=variant)

    def all_gather(self, x: Any, *, out: Any = None, variant: str = "push") -> Any:
        """Every rank's ``x``, rank-major (``all_gather_into_tensor``);
        ``variant`` ``"push"`` or ``"pull"``."""
        return _ag.all_gather(self.ws, x, out=out, variant=variant)

    def all_gather_(self, out: Any, *, variant: str = "push") -> Any:
        """In place: this rank's row of ``out`` (``size`` equal rows) is the
        input; fills the others."""
        rows = self._rows("out", out)
        return _ag.all_gather(self.ws, rows[self.ws.rank], out=out, variant=variant)

    def reduce_scatter(self, x: Any, op: str = "sum", *, out: Any = None, variant: str = "push") -> Any:
        """Row ``rank`` (of ``size`` equal rows of ``x``) reduced over every
        rank (``reduce_scatter_tensor``); ``variant`` ``"push"`` or
        ``"pull"``."""
        return _rs.reduce_scatter(self.ws, x, op, out=out, variant=variant)

    def reduce_scatter_(self, x: Any, op: str = "sum", *, variant: str = "push") -> Any:
        """In place: the result replaces this rank's row of ``x``; returns
        that row."""
        rows = self._rows("input", x)
        return _rs.reduce_scatter(self.ws, x, op, out=rows[self.ws.rank], variant=variant)

    def all_to_all(self, x: Any, *, out: Any = None) -> Any:
        """Equal-split all-to-all (``all_to_all_single``): row d of ``x``
        goes to rank d, row s of the result came from rank s."""
        return _a2a.all_to_all(self.ws, x, out=out)

    def all_to_all_(self, x: Any) -> Any:
        """``all_to_all`` into ``x`` itself; returns ``x``."""
        return _a2a.all_to_all(self.ws, x, out=x)

    def moe(self, num_experts: int, hidden: int, max_tokens: int, topk: int, dtype: Any = None,
            programs: int | None = None) -> Any:
        """A MoE dispatch/combine pair over this communicator
        (``tle.ops.moe.MoE``; collective)."""
        from .moe import MoE
        m = MoE(self.ws, num_experts, hidden, max_tokens, topk, dtype, programs=programs)
        self._moes.append(m)
        return m

    def fused(self, **options) -> Fused:
        """The fused GEMM operators (``ag_gemm``, ``gemm_rs``, ``gemm_ar``)
        over this communicator, with these collectives as their unfused
        path (``tle.ops.fused.Fused``; ``options`` go to it). Collective."""
        f = Fused(self.comm, collectives=self, **options)
        self._fused.append(f)
        return f

    def _rows(self, name: str, a: Any) -> Any:
        A = self.ws.arrays
        A.check(name, a)
        n = A.numel(a)
        if n % self.ws.size:
            raise ValueError(f"{name} has {n} elements, not a multiple of the {self.ws.size} ranks")
        return A.flat(a).reshape(self.ws.size, n // self.ws.size)

    def close(self) -> None:
        """Free the workspace (not collective); idempotent."""
        for m in [*self._moes, *self._fused]:
            m.close()
        self._moes.clear()
        self._fused.clear()
        self.ws.close()
        if getattr(self.comm, "_collectives", None) is self:
            self.comm._collectives = None

    def __enter__(self) -> Collectives:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
