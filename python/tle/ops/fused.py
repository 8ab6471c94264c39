# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Communication fused with a GEMM, for tensor-parallel layers on the GPUs of
one node (and, under Triton's interpreter, on CPU ranks):

- ``ag_gemm``: ``C = AllGather(A) @ B``. A is sharded by rows (``M x K`` per
  rank), C is ``(size * M) x N``. ``push_kernel`` (a few programs, on a side
  stream) copies this rank's shard into every peer's gather buffer chunk by
  chunk, each program signalling each chunk it copied; ``ag_gemm_kernel``
  (persistent, on the caller's stream, on the SMs the push leaves free)
  computes this rank's own rows first (straight from A), then the peers'
  in the order they arrive, waiting for a chunk's word before its first
  load. ``release_kernel`` then tells every peer its rows in our buffer may
  be overwritten, which the next call's push waits for.
- ``gemm_rs``: ``C = ReduceScatter(A @ B)``. A is sharded by columns (``M x
  K`` per rank, the layer's K split), C is this rank's ``M / size`` rows of
  the sum. ``gemm_push_kernel`` (persistent) computes the tiles of the next
  rank's rows first and its own last, and stores each finished tile into
  slot ``rank`` of its owner's staging buffer, then signals the owner's
  word of that (source, chunk): one signal per tile, counted per chunk.
  ``reduce_kernel`` (after the GEMM, on the same stream) waits, per row
  block, for every source's chunk and sums the slots in rank order;
  ``release_kernel`` then frees the slots for the next call.
- ``gemm_ar``: ``C = AllReduce(A @ B)``: the same with every tile stored into
  every rank's staging buffer (one-shot), every rank reducing all of C.

Every word counts calls: call ``e`` (1, 2, ...; read from the plan's
device-side counters, ``device.epoch``) waits for ``e`` times the arrivals
of one call, so nothing is reset and nothing is passed from the host per
call: a captured CUDA graph replays correctly. The tile configuration of a
shape is derived only from the global shape, the world size, the dtype and
the device (``choose``), and the first call of a shape checks that every
rank derived the same (``digest_kernel``: a configuration that differs
between ranks would wait for words that never come), raising on every rank
before anything else is launched.

Below ``FusedConfig.min_flops`` the plan does not fuse: the GEMM is
``matmul`` and the communication the ``tle.ops`` collective (the result
says so: ``Plan.fused``). docs/ops.md gives the argument for each ordering.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

import triton
import triton.language as tl

import tle.language as tlx

from .._interp import interpreting
from ._host import MAXG, Arrays
from .device import advance, epoch, typed

#: The operators, by name.
OPS = ("ag_gemm", "gemm_rs", "gemm_ar")
#: Element types the fused operators take (float32 only on CPU ranks).
FUSED_DTYPES = ("bfloat16", "float16", "float32")

#: Rows of a plan's counter array: one per kernel that waits or signals, so
#: that kernels of one call that run at the same time (the push on its side
#: stream, the GEMM) never share a counter.
ROLE_PUSH: tl.constexpr = tl.constexpr(0)
ROLE_GEMM: tl.constexpr = tl.constexpr(1)
ROLE_REDUCE: tl.constexpr = tl.constexpr(2)
ROLES = 3


@triton.jit
def _grouped(t, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """(row tile, column tile) of tile ``t``: GROUP_M row tiles share B's
    column tiles while they are in L2."""
    per_group = GROUP_M * tiles_n
    first = (t // per_group) * GROUP_M
    rows = min(tiles_m - first, GROUP_M)
    return first + (t % per_group) % rows, (t % per_group) // rows


@triton.jit
def mma_tile(a, b, row0, m_end, col0, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             EVEN_K: tl.constexpr):
    """The float32 ``BM x BN`` tile ``A[row0:, :] @ B[:, col0:]`` of a
    row-major ``A`` (rows up to ``m_end``, K columns) and a row-major ``B``
    (K x N). Rows and columns past the end are read again from the last
    valid ones (the tile's store masks them), so only K needs masks, and
    only when ``K % BK``."""
    ra = row0 + tl.arange(0, BM) % (m_end - row0)
    cb = (col0 + tl.arange(0, BN)) % N
    ks = tl.arange(0, BK)
    a_ptrs = a + ra[:, None] * K + ks[None, :]
    b_ptrs = b + ks[:, None] * N + cb[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        if EVEN_K:
            x = tl.load(a_ptrs)
            y = tl.load(b_ptrs)
        else:
            x = tl.load(a_ptrs, mask=ks[None, :] < K - k0, other=0.0)
            y = tl.load(b_ptrs, mask=ks[:, None] < K - k0, other=0.0)
        acc = tl.dot(x, y, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    return acc


@triton.jit
def tma_tile(a_desc, b_desc, row0, col0, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``mma_tile`` through TMA: A's and B's tiles loaded by tensor
    descriptors (``FusedConfig.tma``), which fill what lies past the
    arrays' ends with zeros, so nothing is masked."""
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(a_desc.load([row0, k0]), b_desc.load([k0, col0]), acc)
    return acc


@triton.jit
def _store_tile(ptr, acc, row0, m_end, col0, N, BM: tl.constexpr, BN: tl.constexpr):
    """``acc`` into rows ``row0..`` (below ``m_end``), columns ``col0..``
    (below N) of the row-major ``ptr`` of N columns."""
    rows = row0 + tl.arange(0, BM)
    cols = col0 + tl.arange(0, BN)
    tl.store(ptr + rows[:, None] * N + cols[None, :], acc.to(ptr.dtype.element_ty),
             mask=(rows[:, None] < m_end) & (cols[None, :] < N))


@triton.jit
def push_kernel(comm, a, ag, ag_local, state, M, K, word0, chunk_rows, n_chunks, CHUNKS: tl.constexpr,
                BLOCK: tl.constexpr, MAXG: tl.constexpr):
    """ag_gemm: this rank's shard ``a`` (M x K) into rows ``rank * M ..`` of
    every peer's gather buffer, chunk by chunk; every program copies its
    slice of a chunk and signals the chunk's word (``word0 + rank * CHUNKS
    + chunk`` of the peer), so a chunk is complete at ``programs`` signals
    per call."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dt = a.dtype.element_ty
    e = epoch(state, ROLE_PUSH, MAXG) + 1
    release0 = word0 + size * CHUNKS
    for i in range(1, size):
        peer = (rank + i) % size
        # The peer's GEMM of the previous call has read these rows.
        tlx.signal_wait(comm, release0 + peer, e - 1)
        dst = typed(tlx.intra_pointer(ag, 0, peer), ag_local, dt) + rank * M * K
        for c in range(0, n_chunks):
            lo = c * chunk_rows * K
            hi = min(M, (c + 1) * chunk_rows) * K
            for start in range(lo + pid * BLOCK, hi, nprog * BLOCK):
                offs = start + tl.arange(0, BLOCK)
                m = offs < hi
                tl.store(dst + offs, tl.load(a + offs, mask=m), mask=m)
            # Release: the peer's wait that sees this count sees the rows.
            tlx.signal(comm, peer, word0 + rank * CHUNKS + c)
    advance(state, e, ROLE_PUSH, MAXG)


@triton.jit
def ag_gemm_kernel(comm, a, ag, b, c, state, M, N, K, word0, chunk_tiles, push_programs, a_d, ag_d, b_d,
                   CHUNKS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, WAIT: tl.constexpr, TMA: tl.constexpr,
                   MAXG: tl.constexpr):
    """ag_gemm: ``c`` ((size * M) x N) = the gathered A @ ``b``; program p
    takes tiles p, p + G, ... of the order own shard, then shard rank - 1,
    rank - 2, ... (the order the peers' pushes reach this rank). With WAIT
    false it is the same GEMM over an already gathered ``ag``: the lower
    bound of the fused call. With TMA, ``a_d``, ``ag_d``, ``b_d`` are
    descriptors of ``a``, ``ag`` and ``b`` and the loads go through them."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    e = epoch(state, ROLE_GEMM, MAXG) + 1
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_shard = tiles_m * tiles_n
    for t in range(pid, size * per_shard, nprog):
        i = t // per_shard
        pm, pn = _grouped(t % per_shard, tiles_m, tiles_n, GROUP_M)
        src = (rank + size - i) % size
        if WAIT:
            if src != rank:
                # Every push program's slice of the chunk holding this tile.
                tlx.signal_wait(comm, word0 + src * CHUNKS + pm // chunk_tiles, e * push_programs)
        if TMA:
            # Rows past a shard's end come from the next shard (or TMA's
            # zeros): the store masks them.
            if src == rank:
                acc = tma_tile(a_d, b_d, pm * BM, pn * BN, K, BM, BN, BK)
            else:
                acc = tma_tile(ag_d, b_d, src * M + pm * BM, pn * BN, K, BM, BN, BK)
        else:
            if src == rank:
                base = a
            else:
                base = ag + src * M * K
            acc = mma_tile(base, b, pm * BM, M, pn * BN, N, K, BM, BN, BK, EVEN_K)
        _store_tile(c + src * M * N, acc, pm * BM, M, pn * BN, N, BM, BN)
    if WAIT:
        advance(state, e, ROLE_GEMM, MAXG)


@triton.jit
def _deliver(comm, stage, stage_local, acc, owner, rank, e, pm, pn, MO, N, word0, release0, chunk_tiles,
             CHUNKS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Tile (pm, pn) of the product into slot ``rank`` of ``owner``'s
    staging buffer, then (a peer) its chunk's word there."""
    if owner != rank:
        # The owner's reduce of the previous call has read our slot.
        tlx.signal_wait(comm, release0 + owner, e - 1)
    dst = typed(tlx.intra_pointer(stage, 0, owner), stage_local, stage_local.dtype.element_ty) + rank * MO * N
    _store_tile(dst, acc, pm * BM, MO, pn * BN, N, BM, BN)
    if owner != rank:
        # Release: the owner's reduce that sees the count sees the tile.
        tlx.signal(comm, owner, word0 + rank * CHUNKS + pm // chunk_tiles)


@triton.jit
def gemm_push_kernel(comm, a, b, stage, stage_local, state, M, N, K, MO, word0, chunk_tiles, a_d, b_d,
                     CHUNKS: tl.constexpr, ALL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, TMA: tl.constexpr,
                     MAXG: tl.constexpr):
    """gemm_rs (ALL false): the ``M x N`` partial product ``a @ b`` in
    blocks of MO = M / size rows, block d owned by rank d; the next rank's
    block first, this rank's last. Each tile goes into slot ``rank`` of its
    owner's staging buffer ([source][MO][N]) and is signalled on the
    owner's word ``word0 + rank * CHUNKS + chunk``. gemm_ar (ALL true, MO =
    M): every tile to every rank (this one last)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    e = epoch(state, ROLE_GEMM, MAXG) + 1
    release0 = word0 + size * CHUNKS
    tiles_m = tl.cdiv(MO, BM)
    tiles_n = tl.cdiv(N, BN)
    per_block = tiles_m * tiles_n
    if ALL:
        blocks = 1
    else:
        blocks = size
    for t in range(pid, blocks * per_block, nprog):
        i = t // per_block
        pm, pn = _grouped(t % per_block, tiles_m, tiles_n, GROUP_M)
        if ALL:
            if TMA:
                acc = tma_tile(a_d, b_d, pm * BM, pn * BN, K, BM, BN, BK)
            else:
                acc = mma_tile(a, b, pm * BM, MO, pn * BN, N, K, BM, BN, BK, EVEN_K)
            for j in range(size):
                _deliver(comm, stage, stage_local, acc, (rank + 1 + j) % size, rank, e, pm, pn, MO, N, word0,
                         release0, chunk_tiles, CHUNKS, BM, BN)
        else:
            owner = (rank + 1 + i) % size
            if TMA:
                acc = tma_tile(a_d, b_d, owner * MO + pm * BM, pn * BN, K, BM, BN, BK)
            else:
                acc = mma_tile(a + owner * MO * K, b, pm * BM, MO, pn * BN, N, K, BM, BN, BK, EVEN_K)
            _deliver(comm, stage, stage_local, acc, owner, rank, e, pm, pn, MO, N, word0, release0, chunk_tiles,
                     CHUNKS, BM, BN)
    advance(state, e, ROLE_GEMM, MAXG)


@triton.jit
def reduce_kernel(comm, stage_local, out, state, MO, N, word0, chunk_tiles, BM: tl.constexpr, RB: tl.constexpr,
                  CB: tl.constexpr, CHUNKS: tl.constexpr, BN: tl.constexpr, MAXG: tl.constexpr):
    """gemm_rs / gemm_ar: ``out`` (MO x N) = the sum over sources, in rank
    order, of the staging slots; a row block (RB rows, inside one chunk)
    waits for every peer's tiles of its chunk (``e`` times the chunk's
    tiles), this rank's slot having been written by the GEMM before it on
    the same stream."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    e = epoch(state, ROLE_REDUCE, MAXG) + 1
    tiles_m = tl.cdiv(MO, BM)
    tiles_n = tl.cdiv(N, BN)
    n_rb = tl.cdiv(MO, RB)
    n_cb = tl.cdiv(N, CB)
    for w in range(pid, n_rb * n_cb, nprog):
        rb = w // n_cb
        cb = w % n_cb
        chunk = (rb * RB // BM) // chunk_tiles
        tiles = min(chunk_tiles, tiles_m - chunk * chunk_tiles) * tiles_n
        for src in range(size):
            if src != rank:
                tlx.signal_wait(comm, word0 + src * CHUNKS + chunk, e * tiles)
        rows = rb * RB + tl.arange(0, RB)
        cols = cb * CB + tl.arange(0, CB)
        m = (rows[:, None] < MO) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        acc = tl.zeros((RB, CB), dtype=tl.float32)
        for src in range(size):
            acc += tl.load(stage_local + src * MO * N + offs, mask=m, other=0.0).to(tl.float32)
        tl.store(out + offs, acc.to(out.dtype.element_ty), mask=m)
    advance(state, e, ROLE_REDUCE, MAXG)


@triton.jit
def release_kernel(comm, word0, CHUNKS: tl.constexpr):
    """After this rank's last read of the call (the ag_gemm GEMM, the
    reduce): every peer may overwrite what it put here (its word
    ``release0 + rank``)."""
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    for i in range(1, size):
        tlx.signal(comm, (rank + i) % size, word0 + size * CHUNKS + rank)


@triton.jit
def digest_kernel(comm, dig, dig_local, seen, value, seq, slot):
    """Every rank's plan digest into every rank's ``seen``: each rank stores
    its ``value`` into slot ``rank`` of half ``seq % 2`` of every peer's
    ``dig``, one barrier, each reads the ``size`` slots. Half ``seq % 2``
    is reused at ``seq + 2``, after the barrier of ``seq + 1``, which every
    rank reaches after reading ``seq``'s."""
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    base = (seq % 2) * size
    for d in range(size):
        tl.store(tlx.intra_pointer(dig, 0, d, dtype=tl.int64) + base + rank, value)
    tlx.distributed_barrier(comm, index=slot)
    for s in range(size):
        tl.store(seen + s, tl.load(dig_local + base + s))


@triton.jit
def reset_words_kernel(comm, word0, nwords, slot):
    """A new plan's words to 0 on this rank, between two barriers: the one
    before (``digest_kernel``'s, which every rank reaches after its
    earlier kernels, whose signals to these words have then landed) and
    the one after it here (no peer signals the new plan's words before
    every rank has reset them). Words may have served an earlier plan of
    the communicator (another ``Fused`` with the same ``signal_base``)."""
    for w in range(nwords):
        tlx.reset_signal(comm, word0 + w)
    tlx.distributed_barrier(comm, index=slot)


@dataclass(frozen=True)
class FusedConfig:
    """The tile configuration of one fused call (``choose`` makes it).

    ``bm``/``bn``/``bk``: the GEMM's tile; ``group_m``: row tiles that share
    B's columns; ``num_warps``/``num_stages``: the GEMM's launch;
    ``programs``: the persistent GEMM's programs; ``push_programs``:
    ag_gemm's push programs (the GEMM leaves their SMs free, or a push
    could wait for an SM held by a GEMM program waiting for a peer's push);
    ``chunks``: signal granularity, chunks per row block; ``block``: push
    elements per step; ``rb``/``cb``: the reduce's block; ``fused``: false
    below ``min_flops``: the unfused path (matmul + the collective);
    ``tma``: the GEMM loads A and B through TMA tensor descriptors (GPUs
    only; rows of 16-byte multiples) instead of pointers."""
    bm: int
    bn: int
    bk: int
    group_m: int
    num_warps: int
    num_stages: int
    programs: int
    push_programs: int
    chunks: int
    block: int
    rb: int
    cb: int
    fused: bool = True
    tma: bool = False

    def check(self) -> FusedConfig:
        for name in ("bm", "bn", "bk", "block", "rb", "cb"):
            v = getattr(self, name)
            if v < 1 or v & (v - 1):
                raise ValueError(f"FusedConfig.{name} must be a power of two; got {v}")
        if self.bm % self.rb:
            raise ValueError(f"FusedConfig.rb ({self.rb}) must divide bm ({self.bm}): a reduce block lies in "
                             f"one chunk")
        if not 1 <= self.programs <= MAXG or not 1 <= self.push_programs <= MAXG:
            raise ValueError(f"FusedConfig.programs and push_programs must be in 1..{MAXG}; got "
                             f"{self.programs}, {self.push_programs}")
        if self.chunks < 1:
            raise ValueError(f"FusedConfig.chunks must be positive; got {self.chunks}")
        return self


#: 2 * M * N * K below which fusing does not pay: the unfused path runs.
#: A prediction (a GEMM of ~50 µs on an H200, where the launches and
#: signals of the fused path no longer hide behind it) until the two-GPU
#: run measures it.
MIN_FLOPS = 1 << 35


#: Shared memory one block may opt into on Hopper (H100, H200): 227 KiB.
SMEM_PER_BLOCK = 232448


def choose(op: str, m: int, n: int, k: int, size: int, dtype: str, sms: int, interp: bool,
           min_flops: int = MIN_FLOPS, tma: bool = False) -> FusedConfig:
    """The configuration of ``op`` for the global problem ``m x n x k`` (C
    rows, C columns on this rank, the full reduction length), ``size`` ranks,
    ``dtype``, on devices of ``sms`` SMs: a function of those alone, so
    every rank of a homogeneous node gets the same one (``Fused`` checks).
    ``tma``: load through TMA where the rows allow it (K and N per rank
    multiples of 8 elements: 16-byte strides)."""
    if interp:
        # Small tiles: the interpreter runs each program's loop in NumPy.
        return FusedConfig(bm=16, bn=16, bk=16, group_m=2, num_warps=1, num_stages=1, programs=2, push_programs=2,
                           chunks=2, block=64, rb=8, cb=16, fused=2 * m * n * k >= min_flops).check()
    # Hopper, bf16/fp16 (wgmma): the sweep of the all-gather example on one
    # H200 (docs/gpu-notes.md): 128 x 256 x 64, 8 warps; narrow C (N <=
    # 1024) 128 x 128 to fill the SMs; 4 stages up to N = 2048.
    bn = 128 if n <= 1024 else 256
    stages = 4 if n <= 2048 else 3
    tma = tma and (k // (size if op != "ag_gemm" else 1)) % 8 == 0 and n % 8 == 0
    # Triton gives each K loop its own ring of stages; ag_gemm's TMA path has
    # two (one per descriptor: its own rows, the gathered ones), so 128 x 256
    # x 64 at 3 stages needs 288 KiB there (measured on the sm_90 compile,
    # 2026-12-02): fewer stages until the rings fit.
    loops = 2 if tma and op == "ag_gemm" else 1
    while stages > 2 and loops * stages * (128 * 64 + 64 * bn) * 2 > SMEM_PER_BLOCK:
        stages -= 1
    push = 8 if op == "ag_gemm" and size > 1 else 0
    return FusedConfig(bm=128, bn=bn, bk=64, group_m=8, num_warps=8, num_stages=stages,
                       programs=min(MAXG, sms - push), push_programs=max(push, 1), chunks=4, block=4096, rb=32,
                       cb=256, fused=2 * m * n * k >= min_flops, tma=tma).check()


class Plan:
    """One operator at one shape on one communicator: its configuration
    (agreed by every rank), its buffers, its signal words and counters.
    Made by ``Fused`` on the first call of a shape (collective)."""

    def __init__(self, fused: Fused, op: str, key: tuple, cfg: FusedConfig, word0: int, dtype: Any):
        self.op, self.key, self.config, self.word0 = op, key, cfg, word0
        self.owner = fused
        ws_arrays: Arrays = fused.arrays
        self.state = ws_arrays.empty((ROLES * MAXG,), ws_arrays.dtype_of("int64"))
        self.state[...] = 0
        self.state_arg = ws_arrays.arg(self.state)
        self.buffer = None
        if not cfg.fused:
            return
        size = fused.size
        _, shape_a, shape_b = key[0], key[1], key[2]
        if op == "ag_gemm":
            m, k = shape_a
            self.buffer = fused.comm.alloc((size * m, k), dtype)
        else:
            m, n = shape_a[0], shape_b[1]
            mo = m if op == "gemm_ar" else m // size
            self.buffer = fused.comm.alloc((size * mo, n), dtype)
        self.buffer_local = ws_arrays.arg(getattr(self.buffer, "tensor", None) if ws_arrays.torch is not None
                                          else self.buffer.array)

    @property
    def fused(self) -> bool:
        return self.config.fused

    def close(self) -> None:
        if self.buffer is not None:
            self.buffer.close()


class Fused:
    """The fused GEMM operators of one communicator (``tle.torch`` or
    ``tle.cpu``), also reached as ``tle.ops.Collectives.fused()``::

        f = tle.ops.Fused(comm)
        c = f.ag_gemm(a, b)     # (size * M) x N: AllGather(a) @ b
        c = f.gemm_rs(a, b)     # (M / size) x N: ReduceScatter(a @ b)
        c = f.gemm_ar(a, b)     # M x N: AllReduce(a @ b)

    Every rank makes the same calls in the same order, on one stream. The
    first call of a shape is collective and synchronizes with the host (it
    allocates and checks that every rank chose the same configuration): make
    it before capturing a CUDA graph; later calls launch only.

    Signal words ``signal_base ..`` (``size * (chunks + 1)`` per shape, below
    the communicator's ``n_signals``, given here as ``n_signals``) and
    barrier slot ``slot`` are this object's."""

    def __init__(self, comm: Any, *, signal_base: int = 4, n_signals: int = 64, slot: int = 0,
                 min_flops: int = MIN_FLOPS, tma: bool = False, collectives: Any = None):
        self.comm, self.rank, self.size = comm, comm.rank, comm.size
        self.arrays = Arrays(comm)
        self.interp = interpreting()
        self.signal_base, self.n_signals, self.slot, self.min_flops = signal_base, n_signals, slot, min_flops
        self.tma = tma and not self.interp
        self._next_word = signal_base
        self._plans: dict[tuple, Plan] = {}
        self._coll = collectives
        self._seq = 0
        A = self.arrays
        self._dig = comm.alloc((2 * self.size,), A.dtype_of("int64"))
        self._seen = A.empty((self.size,), A.dtype_of("int64"))
        self._dig_local = A.arg(self._dig.tensor if A.torch is not None else self._dig.array)
        from .. import extern_libs
        self._libs = extern_libs()
        self._side = None
        #: Under the interpreter only: called with "gemm" after ag_gemm's
        #: push and "reduce" before gemm_rs/gemm_ar's reduce, so a test can
        #: hold one rank there (a rank whose peers do not wait for it then
        #: overwrites what it has not read yet).
        self.pause = None
        if A.torch is not None:
            self.sms = A.torch.cuda.get_device_properties(comm.torch_device).multi_processor_count
        else:
            self.sms = 0

    # -- the operators --------------------------------------------------

    def ag_gemm(self, a: Any, b: Any, *, out: Any = None, config: FusedConfig | None = None) -> Any:
        """``AllGather(a) @ b``: ``a`` M x K (this rank's rows), ``b`` K x N;
        returns (or fills ``out``) (size * M) x N, rank r's rows at r * M."""
        plan = self._plan("ag_gemm", a, b, config)
        A, cfg = self.arrays, plan.config
        m, k = a.shape
        n = b.shape[1]
        out = self._out(out, (self.size * m, n), a)
        if not cfg.fused:
            return self._matmul(self._collectives().all_gather(a), b, out)
        e_k = k % cfg.bk == 0
        side = self._side_stream()
        if side is not None:
            torch = A.torch
            main = torch.cuda.current_stream()
            side.wait_stream(main)
            with torch.cuda.stream(side):
                self._push(plan, a, m, k)
        else:
            self._push(plan, a, m, k)
            self._hold("gemm")
        ag_gemm_kernel[(cfg.programs,)](self.comm.dev_comm, A.arg(a), plan.buffer_local, A.arg(b), A.arg(out),
                                        plan.state_arg, m, n, k, plan.word0, self._chunk_tiles(cfg, m),
                                        cfg.push_programs, *self._descs(cfg, a, plan.buffer_local, b),
                                        CHUNKS=cfg.chunks, BM=cfg.bm, BN=cfg.bn, BK=cfg.bk, GROUP_M=cfg.group_m,
                                        EVEN_K=e_k, WAIT=True, TMA=cfg.tma, MAXG=MAXG, **self._launch(cfg))
        release_kernel[(1,)](self.comm.dev_comm, plan.word0, CHUNKS=cfg.chunks, extern_libs=self._libs)
        if side is not None:
            main.wait_stream(side)
        return out

    def gemm_rs(self, a: Any, b: Any, *, out: Any = None, config: FusedConfig | None = None) -> Any:
        """``ReduceScatter(a @ b)``: ``a`` M x K (this rank's K columns),
        ``b`` K x N; returns (or fills ``out``) this rank's M / size rows of
        the sum over ranks."""
        return self._gemm_reduce("gemm_rs", a, b, out, config)

    def gemm_ar(self, a: Any, b: Any, *, out: Any = None, config: FusedConfig | None = None) -> Any:
        """``AllReduce(a @ b)``: ``a`` M x K, ``b`` K x N; returns (or fills
        ``out``) M x N, the sum over ranks, the same bits on every rank."""
        return self._gemm_reduce("gemm_ar", a, b, out, config)

    def gemm_only(self, op: str, a: Any, b: Any, out: Any) -> Any:
        """The fused call's own GEMM with no communication (ag_gemm: over the
        gather buffer as it is; the others: the partial product into this
        rank's staging buffer): the lower bound of the fused call. Needs a
        fused plan of the shape (call the operator once first)."""
        plan = self._plans[self._key(op, a, b)]
        A, cfg = self.arrays, plan.config
        m, k = a.shape
        n = b.shape[1]
        if op == "ag_gemm":
            ag_gemm_kernel[(cfg.programs,)](self.comm.dev_comm, A.arg(a), plan.buffer_local, A.arg(b), A.arg(out),
                                            plan.state_arg, m, n, k, plan.word0, self._chunk_tiles(cfg, m),
                                            cfg.push_programs, *self._descs(cfg, a, plan.buffer_local, b),
                                            CHUNKS=cfg.chunks, BM=cfg.bm, BN=cfg.bn, BK=cfg.bk, GROUP_M=cfg.group_m,
                                            EVEN_K=k % cfg.bk == 0, WAIT=False, TMA=cfg.tma, MAXG=MAXG,
                                            **self._launch(cfg))
        else:
            _gemm_tiles[(cfg.programs,)](A.arg(a), A.arg(b), A.arg(out), m, n, k, *self._descs(cfg, a, None, b),
                                         BM=cfg.bm, BN=cfg.bn, BK=cfg.bk, GROUP_M=cfg.group_m,
                                         EVEN_K=k % cfg.bk == 0, TMA=cfg.tma, **self._launch(cfg))
        return out

    # -- what they share ------------------------------------------------

    def _gemm_reduce(self, op: str, a: Any, b: Any, out: Any, config: FusedConfig | None) -> Any:
        plan = self._plan(op, a, b, config)
        A, cfg = self.arrays, plan.config
        m, k = a.shape
        n = b.shape[1]
        mo = m if op == "gemm_ar" else m // self.size
        out = self._out(out, (mo, n), a)
        if not cfg.fused:
            part = self._matmul(a, b, None)
            coll = self._collectives()
            return coll.all_reduce(part, out=out) if op == "gemm_ar" else coll.reduce_scatter(part, out=out)
        chunk_tiles = self._chunk_tiles(cfg, mo)
        gemm_push_kernel[(cfg.programs,)](self.comm.dev_comm, A.arg(a), A.arg(b), plan.buffer.handle,
                                          plan.buffer_local, plan.state_arg, m, n, k, mo, plan.word0, chunk_tiles,
                                          *self._descs(cfg, a, None, b), CHUNKS=cfg.chunks, ALL=op == "gemm_ar",
                                          BM=cfg.bm, BN=cfg.bn, BK=cfg.bk, GROUP_M=cfg.group_m,
                                          EVEN_K=k % cfg.bk == 0, TMA=cfg.tma, MAXG=MAXG, **self._launch(cfg))
        self._hold("reduce")
        reduce_kernel[(cfg.programs,)](self.comm.dev_comm, plan.buffer_local, A.arg(out), plan.state_arg, mo, n,
                                       plan.word0, chunk_tiles, BM=cfg.bm, RB=cfg.rb, CB=cfg.cb, CHUNKS=cfg.chunks,
                                       BN=cfg.bn, MAXG=MAXG, num_warps=4 if not self.interp else 1,
                                       extern_libs=self._libs)
        release_kernel[(1,)](self.comm.dev_comm, plan.word0, CHUNKS=cfg.chunks, extern_libs=self._libs)
        return out

    def _hold(self, stage: str) -> None:
        if self.pause is not None and self.interp:
            self.pause(stage)

    def _push(self, plan: Plan, a: Any, m: int, k: int) -> None:
        cfg = plan.config
        chunk_rows = self._chunk_tiles(cfg, m) * cfg.bm
        push_kernel[(cfg.push_programs,)](self.comm.dev_comm, self.arrays.arg(a), plan.buffer.handle,
                                          plan.buffer_local, plan.state_arg, m, k, plan.word0, chunk_rows,
                                          -(-m // chunk_rows), CHUNKS=cfg.chunks, BLOCK=cfg.block, MAXG=MAXG,
                                          num_warps=4 if not self.interp else 1, extern_libs=self._libs)

    @staticmethod
    def _descs(cfg: FusedConfig, a: Any, gathered: Any, b: Any) -> tuple:
        """The TMA descriptors of A (and the gather buffer, when given) and
        B for ``cfg.tma``; Nones (constexpr, unused) otherwise."""
        if not cfg.tma:
            return (None, None, None) if gathered is not None else (None, None)
        from triton.tools.tensor_descriptor import TensorDescriptor
        descs = [TensorDescriptor.from_tensor(a, [cfg.bm, cfg.bk])]
        if gathered is not None:
            descs.append(TensorDescriptor.from_tensor(gathered, [cfg.bm, cfg.bk]))
        descs.append(TensorDescriptor.from_tensor(b, [cfg.bk, cfg.bn]))
        return tuple(descs)

    @staticmethod
    def _chunk_tiles(cfg: FusedConfig, rows: int) -> int:
        """Row tiles per chunk: ``cfg.chunks`` chunks (or fewer) of a block
        of ``rows`` rows, each a whole number of tiles."""
        return -(-(-(-rows // cfg.bm)) // cfg.chunks)

    def _launch(self, cfg: FusedConfig) -> dict:
        extra = {"extern_libs": self._libs}
        if not self.interp:
            extra.update(num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        return extra

    def _side_stream(self):
        if self.arrays.torch is None:
            return None
        if self._side is None:
            self._side = self.arrays.torch.cuda.Stream(device=self.comm.torch_device)
        return self._side

    def _collectives(self):
        if self._coll is None:
            self._coll = self.comm.collectives()
        return self._coll

    def _matmul(self, a: Any, b: Any, out: Any) -> Any:
        A = self.arrays
        if A.torch is not None:
            return A.torch.matmul(a, b, out=out) if out is not None else A.torch.matmul(a, b)
        if out is None:
            return (a.astype(A.np.float32) @ b.astype(A.np.float32)).astype(a.dtype)
        out[...] = (a.astype(A.np.float32) @ b.astype(A.np.float32)).astype(a.dtype)
        return out

    def _out(self, out: Any, shape: tuple[int, int], like: Any) -> Any:
        A = self.arrays
        if out is None:
            return A.empty(shape, like.dtype)
        A.check("out", out, FUSED_DTYPES)
        if tuple(out.shape) != shape or A.dtype_name(out) != A.dtype_name(like):
            raise ValueError(f"out must be {shape[0]} x {shape[1]} of {A.dtype_name(like)}; got "
                             f"{' x '.join(map(str, out.shape))} of {A.dtype_name(out)}")
        return out

    def _key(self, op: str, a: Any, b: Any) -> tuple:
        return (op, tuple(a.shape), tuple(b.shape), self.arrays.dtype_name(a))

    def _check(self, op: str, a: Any, b: Any) -> tuple[int, int, int]:
        """The global (m, n, k) of ``op`` for these operands, or the error
        that names what is wrong with them."""
        A = self.arrays
        A.check("a", a, FUSED_DTYPES)
        A.check("b", b, FUSED_DTYPES)
        if len(a.shape) != 2 or len(b.shape) != 2:
            raise ValueError(f"{op}: a and b must be matrices; got shapes {tuple(a.shape)} and {tuple(b.shape)}")
        if A.dtype_name(a) != A.dtype_name(b):
            raise TypeError(f"{op}: a is {A.dtype_name(a)} but b is {A.dtype_name(b)}")
        if A.torch is None and A.dtype_name(a) != "float32":
            raise TypeError(f"{op}: CPU ranks take float32 (the interpreter's dot); got {A.dtype_name(a)}")
        m, k = a.shape
        if b.shape[0] != k:
            raise ValueError(f"{op}: a is {m} x {k}, so b must have {k} rows; got {b.shape[0]}")
        n = b.shape[1]
        if op == "gemm_rs" and m % self.size:
            raise ValueError(f"gemm_rs: a has {m} rows, not a multiple of the {self.size} ranks (each gets "
                             f"M / size rows of the result)")
        # The largest array a kernel indexes with int32 offsets.
        largest = {"ag_gemm": self.size * m * max(k, n), "gemm_rs": m * max(k, n),
                   "gemm_ar": max(m * k, self.size * m * n)}[op]
        if largest >= 1 << 31:
            raise ValueError(f"{op}: {m} x {k} x {n} on {self.size} ranks needs an array of {largest} elements; the "
                             f"kernels index with int32 (at most 2**31 - 1)")
        if op == "ag_gemm":
            return self.size * m, n, k
        return m, n, self.size * k

    def _plan(self, op: str, a: Any, b: Any, config: FusedConfig | None) -> Plan:
        key = self._key(op, a, b)
        plan = self._plans.get(key)
        if plan is not None and (config is None or config == plan.config):
            return plan
        gm, gn, gk = self._check(op, a, b)
        dtype = self.arrays.dtype_name(a)
        cfg = (config.check() if config is not None else
               choose(op, gm, gn, gk, self.size, dtype, self.sms, self.interp, self.min_flops, self.tma))
        if cfg.tma and self.interp:
            raise ValueError(f"{op}: FusedConfig.tma needs a GPU (Triton's interpreter runs the pointer GEMM)")
        self._agree(op, key, cfg)
        # Every rank has the same configuration now, so what follows (the
        # same on every rank) raises everywhere or nowhere.
        if plan is not None:
            plan.close()
            del self._plans[key]
        words = self.size * (cfg.chunks + 1) if cfg.fused else 0
        if self._next_word + words > self.n_signals:
            raise ValueError(f"{op}: this shape needs {words} signal words from {self._next_word}, beyond the "
                             f"communicator's {self.n_signals} (make it with a larger n_signals and pass it to "
                             f"Fused(n_signals=...))")
        if words:
            reset_words_kernel[(1,)](self.comm.dev_comm, self._next_word, words, self.slot, extern_libs=self._libs)
        plan = Plan(self, op, key, cfg, self._next_word, a.dtype)
        self._next_word += words
        self._plans[key] = plan
        return plan

    def _agree(self, op: str, key: tuple, cfg: FusedConfig) -> None:
        """Raises on every rank, before anything of the plan is launched, if
        any rank derived another configuration (or was called with another
        shape): the digest of (key, config, world size, SMs) of every rank,
        exchanged by ``digest_kernel``."""
        text = repr((key, sorted(asdict(cfg).items()), self.size, self.sms))
        digest = int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "little")
        seq = self._seq
        self._seq += 1
        A = self.arrays
        digest_kernel[(1,)](self.comm.dev_comm, self._dig.handle, self._dig_local, A.arg(self._seen), digest, seq,
                            self.slot, extern_libs=self._libs)
        seen = [int(v) for v in (self._seen.cpu().tolist() if A.torch is not None else self._seen.tolist())]
        if any(v != digest for v in seen):
            differ = [r for r, v in enumerate(seen) if v != digest]
            raise ValueError(f"{op}: the ranks chose different tile configurations or shapes for {key[1]} x "
                             f"{key[2]} ({key[3]}): ranks {differ} differ from rank {self.rank}, whose configuration "
                             f"is {cfg}. Every rank must derive it from the same global shape, world size and dtype "
                             f"(pass config= on every rank or on none); a mismatch would wait forever")

    def close(self) -> None:
        """Free the plans' buffers (not collective); idempotent."""
        for plan in self._plans.values():
            plan.close()
        self._plans.clear()
        self._dig.close()

    def __enter__(self) -> Fused:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@triton.jit
def _gemm_tiles(a, b, c, M, N, K, a_d, b_d, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, TMA: tl.constexpr):
    """The fused kernels' GEMM alone (persistent, the same tile order and
    inner loop): ``c = a @ b``."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    for t in range(pid, tiles_m * tiles_n, nprog):
        pm, pn = _grouped(t, tiles_m, tiles_n, GROUP_M)
        if TMA:
            acc = tma_tile(a_d, b_d, pm * BM, pn * BN, K, BM, BN, BK)
        else:
            acc = mma_tile(a, b, pm * BM, M, pn * BN, N, K, BM, BN, BK, EVEN_K)
        _store_tile(c, acc, pm * BM, M, pn * BN, N, BM, BN)


__all__ = ["Fused", "FusedConfig", "Plan", "choose", "OPS", "MIN_FLOPS"]
