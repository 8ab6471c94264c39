# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""MoE dispatch and combine on the GPUs of one node, driven by the routing
on the device (the all-to-all-v of ``torch.ops.symm_mem.all_to_all_vdev``
and DeepEP's low-latency mode): no split sizes ever reach the host.

``dispatch(x, topk_idx)``: token t of this rank goes to each of its ``K``
experts; expert ``ex`` lives on rank ``ex // E_local`` as its local expert
``ex % E_local``. The receiver gets, per local expert, the tokens packed in
(source rank, token order) order, as ``all_to_all_vdev`` packs them, and
their count:

1. Counts: every rank counts its (token, expert) pairs per expert and
   stores the counts into every rank's ``counts[source]`` row, then
   signals every rank (a release: word COUNT). Every rank waits until all
   ``G x size`` programs have signalled it (the words only grow; the
   target is carried on the device).
2. Tokens: pair i goes to slot ``sum(counts[s][ex] for s < rank) + (pairs
   before i with the same expert)`` of its expert at its rank, with its
   origin (``rank * P_max + i``) beside it; the receiver's per-expert count
   is summed from the counts. Then a signal to every rank (word DATA) and
   the same wait: the receiver's programs leave only when every token for
   it has arrived.

``combine(y, topk_weights)``: the expert outputs ``y`` (the received
layout; by default the receive buffer itself, computed in place) go back to
their origin's combine buffer at the pair's index (word COMB), and every
rank sums ``weight[t, k] * y[t, k]`` for its tokens.

Buffers are single (no halves): a writer of call c + 1 stores into a peer
only after that peer's COUNT signal of call c + 1, which the peer sends
after it finished call c's combine and every read of call c's buffers
(docs/ops.md). The received tensors stay valid until the next dispatch.
Capacity: ``size x max_tokens`` slots per local expert, enough when a
token's K experts are distinct; a token that does not fit is dropped and
``overflowed()`` says so.
"""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl

import tle.language as tlx

from ._host import MAXG, Workspace
from .device import KIND_OVERFLOW, typed

_OVERFLOW = int(KIND_OVERFLOW)

@triton.jit
def dispatch_kernel(comm, x, idx, counts, recv, recv_src, recv_count, state, T, H, slot, K: tl.constexpr,
                    E: tl.constexpr, ELOC: tl.constexpr, CAP: tl.constexpr, PMAX: tl.constexpr, BH: tl.constexpr,
                    BP: tl.constexpr, BE: tl.constexpr, MAXG: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    G = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dt = x.dtype.element_ty
    P = T * K
    # 1. Every program counts all of this rank's pairs per expert and stores
    # the counts into its own region of every rank: `counts[pid][rank]`.
    # Each program then needs only its peers' same program (one barrier
    # slot per program; programs need not be co-resident).
    for e0 in range(0, E, BE):
        ex = e0 + tl.arange(0, BE)
        cnt = tl.zeros([BE], tl.int32)
        for p0 in range(0, P, BP):
            pi = p0 + tl.arange(0, BP)
            ids = tl.load(idx + pi, mask=pi < P, other=-1).to(tl.int32)
            cnt += tl.sum((ids[None, :] == ex[:, None]).to(tl.int32), axis=1)
        for peer in range(size):
            dst = tlx.intra_pointer(counts, 0, peer, dtype=tl.int32) + (pid * size + rank) * E
            tl.store(dst + ex, cnt, mask=ex < E)
    # Every rank's counts, in this program's region, before the reads.
    tlx.distributed_barrier(comm, index=slot + pid)
    mine = tlx.local_pointer(counts, 0, dtype=tl.int32) + pid * size * E
    # 2. This program's pairs, each into its slot at its expert's rank.
    for i in range(pid, P, G):
        ex = tl.load(idx + i).to(tl.int32)
        pos = 0
        for p0 in range(0, i, BP):
            pi = p0 + tl.arange(0, BP)
            ids = tl.load(idx + pi, mask=pi < i, other=-1).to(tl.int32)
            pos += tl.sum((ids == ex).to(tl.int32), axis=0)
        before = 0
        for s in range(rank):
            before += tl.load(mine + s * E + ex)
        here = before + pos
        owner = ex // ELOC
        row = (ex % ELOC) * CAP + here
        t = i // K
        if here < CAP:
            dst = typed(tlx.intra_pointer(recv, 0, owner), state, dt) + row * H
            for h0 in range(0, H, BH):
                hs = h0 + tl.arange(0, BH)
                tl.store(dst + hs, tl.load(x + t * H + hs, mask=hs < H), mask=hs < H)
            tl.store(tlx.intra_pointer(recv_src, 0, owner, dtype=tl.int32) + row, rank * PMAX + i)
        else:
            tl.store(state + KIND_OVERFLOW * MAXG + pid, 1)
    # Tokens per local expert (program 0; every program has the counts).
    if pid == 0:
        for l0 in range(0, ELOC, BE):
            le = l0 + tl.arange(0, BE)
            tot = tl.zeros([BE], tl.int32)
            for s in range(size):
                tot += tl.load(mine + s * E + rank * ELOC + le, mask=le < ELOC, other=0)
            tl.store(recv_count + le, tl.minimum(tot, CAP), mask=le < ELOC)
    # Every peer's program pid has stored its pairs for us; when the kernel
    # is over, every program has passed this, so every token is here. Our
    # arrival also tells the peers that we read our counts region.
    tlx.distributed_barrier(comm, index=slot + pid)


@triton.jit
def combine_send_kernel(comm, y, recv_src, recv_count, comb, slot, H, ELOC: tl.constexpr, CAP: tl.constexpr,
                        PMAX: tl.constexpr, BH: tl.constexpr, MAXG: tl.constexpr, INTERP: tl.constexpr):
    pid = tl.program_id(0)
    G = tl.num_programs(0)
    dt = y.dtype.element_ty
    # Every received row back to its origin, at its pair's index.
    for le in range(pid, ELOC, G):
        cnt = tl.load(recv_count + le)
        for r in range(0, cnt):
            info = tl.load(recv_src + le * CAP + r)
            dst = typed(tlx.intra_pointer(comb, 0, info // PMAX), recv_count, dt) + (info % PMAX) * H
            row = y + (le * CAP + r) * H
            for h0 in range(0, H, BH):
                hs = h0 + tl.arange(0, BH)
                tl.store(dst + hs, tl.load(row + hs, mask=hs < H), mask=hs < H)
    # When this kernel is over on a rank, every peer's programs have sent
    # it every row: the reduction (the next kernel) may read them.
    tlx.distributed_barrier(comm, index=slot + pid)


@triton.jit
def combine_reduce_kernel(w, out, comb, T, H, K: tl.constexpr, BH: tl.constexpr):
    pid = tl.program_id(0)
    G = tl.num_programs(0)
    for t in range(pid, T, G):
        for h0 in range(0, H, BH):
            hs = h0 + tl.arange(0, BH)
            acc = tl.zeros([BH], tl.float32)
            for k in tl.static_range(K):
                wt = tl.load(w + t * K + k).to(tl.float32)
                v = tl.load(comb + (t * K + k) * H + hs, mask=hs < H, other=0)
                acc += wt * v.to(tl.float32)
            tl.store(out + t * H + hs, acc.to(out.dtype.element_ty), mask=hs < H)


class MoE:
    """Dispatch and combine for ``num_experts`` experts split evenly over
    the ranks, tokens of ``hidden`` elements of ``dtype``, at most
    ``max_tokens`` tokens per rank and call, ``topk`` experts per token.
    Collective to create (allocates symmetric buffers); made by
    ``Collectives.moe``. ``programs``: fixed for the object (the signal
    targets count them)."""

    def __init__(self, ws: Workspace, num_experts: int, hidden: int, max_tokens: int, topk: int, dtype: Any = None,
                 programs: int | None = None):
        A = ws.arrays
        size = ws.size
        for name, v in (("num_experts", num_experts), ("hidden", hidden), ("max_tokens", max_tokens),
                        ("topk", topk)):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name} must be a positive int; got {v!r}")
        if num_experts % size:
            raise ValueError(f"num_experts ({num_experts}) must be a multiple of the {size} ranks")
        if topk > num_experts:
            raise ValueError(f"topk ({topk}) cannot exceed num_experts ({num_experts})")
        if dtype is None:
            dtype = A.dtype_of("bfloat16" if A.torch is not None else "float32")
        name = A.dtype_name(A.empty((1,), dtype))
        if name not in ("float32", "bfloat16", "float16"):
            raise TypeError(f"dtype must be float32, bfloat16 or float16; got {name}")
        if (num_experts // size) * size * max_tokens * hidden >= 2**31:
            raise ValueError(f"the receive buffer ({num_experts // size} local experts x {size * max_tokens} "
                             f"slots x {hidden}) must hold fewer than 2**31 elements (32-bit offsets)")
        self.ws, self.A = ws, A
        self.E, self.H, self.T, self.K = num_experts, hidden, max_tokens, topk
        self.ELOC = num_experts // size
        self.CAP = size * max_tokens
        self.PMAX = max_tokens * topk
        self.dtype, self.dtype_name = dtype, name
        self.programs = programs or ws.config.programs
        comm = ws.comm
        i32 = A.dtype_of("int32")
        self.counts = comm.alloc((self.programs, size, num_experts), i32)
        self.recv = comm.alloc((self.ELOC, self.CAP, hidden), dtype)
        self.recv_src = comm.alloc((self.ELOC, self.CAP), i32)
        self.recv_count = comm.alloc((self.ELOC,), i32)
        self.comb = comm.alloc((self.PMAX, hidden), dtype)
        self._bufs = (self.counts, self.recv, self.recv_src, self.recv_count, self.comb)
        cpu = ws.interp
        # Tiles: a row of BH elements per step; the counts compare BE
        # experts with BP pairs at a time (BE x BP values in registers).
        self.BH = min(triton.next_power_of_2(hidden), 64 if cpu else 2048)
        self.BP = min(triton.next_power_of_2(self.PMAX), 64 if cpu else 256)
        self.BE = min(triton.next_power_of_2(num_experts), 64 if cpu else 32)

    def _view(self, buf: Any) -> Any:
        return buf.tensor if self.A.torch is not None else buf.array

    def _launch(self, kernel, *args, **constexprs) -> None:
        self.ws.launch(kernel, self.programs, *args, **constexprs)

    def dispatch(self, x: Any, topk_idx: Any) -> tuple[Any, Any]:
        """Sends token t of ``x`` (``(T, hidden)``, T <= max_tokens) to the
        experts ``topk_idx[t]`` (``(T, topk)``, int32 or int64). Returns
        ``(recv, count)``: ``recv`` is ``(E_local, size * max_tokens,
        hidden)``, local expert l's tokens in ``recv[l, :count[l]]``,
        ordered by source rank then token; valid until the next dispatch."""
        A = self.A
        A.check("x", x, (self.dtype_name,))
        A.check("topk_idx", topk_idx, ("int32", "int64"))
        if len(x.shape) != 2 or x.shape[1] != self.H:
            raise ValueError(f"x must be (tokens, {self.H}); got {tuple(x.shape)}")
        tokens = x.shape[0]
        if tokens > self.T:
            raise ValueError(f"x has {tokens} tokens; this MoE takes at most max_tokens={self.T}")
        if tuple(topk_idx.shape) != (tokens, self.K):
            raise ValueError(f"topk_idx must be ({tokens}, {self.K}) (tokens, topk); got {tuple(topk_idx.shape)}")
        ws = self.ws
        self._launch(dispatch_kernel, A.arg(x), A.arg(topk_idx), self.counts.handle, self.recv.handle,
                     self.recv_src.handle, A.arg(self._view(self.recv_count)), ws.state_arg, tokens, self.H,
                     ws.config.slot_base, K=self.K, E=self.E, ELOC=self.ELOC, CAP=self.CAP, PMAX=self.PMAX, BH=self.BH,
                     BP=self.BP, BE=self.BE)
        return self._view(self.recv), self._view(self.recv_count)

    def combine(self, y: Any, topk_weights: Any, *, out: Any = None) -> Any:
        """Returns ``out`` (``(T, hidden)``, new unless given): token t is
        ``sum_k topk_weights[t, k] * y[its k-th expert's slot]``, where
        ``y`` has ``recv``'s layout (``recv`` itself when computed in
        place) and ``topk_weights`` is ``(T, topk)`` float32, T the last
        dispatch's tokens."""
        A = self.A
        A.check("y", y, (self.dtype_name,))
        A.check("topk_weights", topk_weights, ("float32",))
        if tuple(y.shape) != (self.ELOC, self.CAP, self.H):
            raise ValueError(f"y must have the received layout ({self.ELOC}, {self.CAP}, {self.H}); "
                             f"got {tuple(y.shape)}")
        if len(topk_weights.shape) != 2 or topk_weights.shape[1] != self.K or topk_weights.shape[0] > self.T:
            raise ValueError(f"topk_weights must be (tokens, {self.K}) with tokens <= {self.T}; "
                             f"got {tuple(topk_weights.shape)}")
        tokens = topk_weights.shape[0]
        if out is None:
            out = A.empty((tokens, self.H), self.dtype)
        else:
            A.check("out", out, (self.dtype_name,))
            if tuple(out.shape) != (tokens, self.H):
                raise ValueError(f"out must be ({tokens}, {self.H}); got {tuple(out.shape)}")
        ws = self.ws
        self._launch(combine_send_kernel, A.arg(y), A.arg(self._view(self.recv_src)),
                     A.arg(self._view(self.recv_count)), self.comb.handle, ws.config.slot_base, self.H, ELOC=self.ELOC,
                     CAP=self.CAP, PMAX=self.PMAX, BH=self.BH)
        # The sum reads only this rank's memory: a plain kernel.
        combine_reduce_kernel[(self.programs,)](A.arg(topk_weights), A.arg(out), A.arg(self._view(self.comb)),
                                                tokens, self.H, K=self.K, BH=self.BH, num_warps=ws.config.num_warps)
        return out

    def overflowed(self) -> bool:
        """Whether a dispatch dropped a token for want of capacity (reads
        the device: synchronizes)."""
        state = self._view(self.ws.state)
        return bool((state[_OVERFLOW * MAXG:(_OVERFLOW + 1) * MAXG] != 0).any())

    def close(self) -> None:
        for b in self._bufs:
            b.close()
