# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""C = AllGather(A) @ B in Triton, the all-gather overlapped with the GEMM
through TLE's point-to-point signals.

A is sharded by rows: every rank holds its M x K shard, B (K x N) is
replicated, and every rank computes all of C ((size * M) x N). Each call:

1. ``push_kernel`` (a few programs, on a side stream) copies this rank's
   shard into every peer's copy of the symmetric gather buffer, one chunk
   (M / CHUNKS rows) at a time, and after each chunk signals the peer:
   word ``src * CHUNKS + chunk`` of the peer counts the chunks it received
   from ``src``. A signal is a release, so the rows stored before it are
   visible to a peer whose wait observed it.
2. ``gemm_kernel`` (on the caller's stream, at the same time) computes C
   tile by tile, this rank's own rows first (read straight from A, nothing
   to wait for), then the peers' in the order they are pushed; before the
   first load of a peer's chunk a tile waits for that chunk's word.
3. ``release_kernel`` (one program, after the GEMM) tells every peer that
   its rows in our gather buffer may be overwritten: the next call's push
   into a peer waits for that word, so a fast rank never overwrites rows a
   slow peer is still multiplying.

Every word grows by one per call, so call ``e`` (1, 2, ...) waits for
``e``: no reset, and the words carry across launches.

Run on one node, one process per GPU (bf16, checked against
``all_gather_into_tensor`` + ``torch.matmul``):

    torchrun --nproc-per-node 2 python/examples/ag_gemm.py [--m 1024 --k 8192 --n 1024]

The same kernels run on CPU ranks under Triton's interpreter (float32,
small shapes), through TLE's launcher:

    TRITON_INTERPRET=1 python -m tle.launch --ranks 2 python/examples/ag_gemm.py

python/tests_gpu/ag_gemm_bench.py measures it against PyTorch.

This file is the pattern written out by hand (a host-passed epoch, shapes
that are multiples of the tile). The supported operator, with its epochs
on the device (CUDA graphs), any shape, a configuration checked across
ranks and its GEMM + reduce-scatter and GEMM + all-reduce siblings, is
``tle.ops.Fused.ag_gemm`` (docs/ops.md, "Fused GEMMs").
"""

from __future__ import annotations

import argparse

import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.launch import launched

# Chunks per shard: the overlap's granularity. Fixed, so that every call
# adds exactly one to every chunk word and call e waits for e.
CHUNKS = 8


def signal_words(size: int) -> int:
    """Signal words per rank the kernels use: a chunk word per (source,
    chunk), then a release word per source."""
    return size * CHUNKS + size


@triton.jit(do_not_specialize=["epoch"])
def push_kernel(comm, ag, a, epoch, M, K, CHUNK: tl.constexpr, CHUNKS_: tl.constexpr, RB: tl.constexpr,
                KB: tl.constexpr):
    """Copies this rank's shard `a` (M x K) into rows rank*M.. of every
    peer's gather buffer `ag`, chunk by chunk, signalling each chunk."""
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dtype = a.dtype.element_ty
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    release_base = size * CHUNKS_
    for i in range(1, size):
        peer = (rank + i) % size
        # The peer has finished the previous call's GEMM over these rows.
        tlx.signal_wait(comm, release_base + peer, epoch - 1)
        dst = tlx.intra_pointer(ag, 0, peer, dtype=dtype)
        for c in range(pid, CHUNKS_, nprog):
            for r0 in range(0, CHUNK, RB):
                rows = c * CHUNK + r0 + tl.arange(0, RB)
                for k0 in range(0, K, KB):
                    cols = k0 + tl.arange(0, KB)
                    mask = (rows[:, None] < M) & (cols[None, :] < K)
                    v = tl.load(a + rows[:, None] * K + cols[None, :], mask=mask)
                    tl.store(dst + (rank * M + rows[:, None]) * K + cols[None, :], v, mask=mask)
            tlx.signal(comm, peer, rank * CHUNKS_ + c)


@triton.jit(do_not_specialize=["epoch"])
def gemm_kernel(comm, ag, a, b, c, epoch, M, N, K, CHUNK: tl.constexpr, CHUNKS_: tl.constexpr,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                WAIT: tl.constexpr):
    """C[(size*M) x N] = gathered A @ B, this rank's rows first. With WAIT
    false it is the same GEMM over an already gathered `ag` (no
    communication): the benchmark's lower bound."""
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    dtype = a.dtype.element_ty
    pid = tl.program_id(0)
    tiles_m = size * (M // BM)
    tiles_n = tl.cdiv(N, BN)
    # Grouped order (GROUP_M row tiles share B's columns in L2).
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    pm = first_m + (pid % per_group) % group_m
    pn = (pid % per_group) // group_m
    # Row tile pm of the rotated order: shard (rank + pm // tiles per shard).
    shard_tiles = M // BM
    src = (rank + pm // shard_tiles) % size
    row = (pm % shard_tiles) * BM
    rows = row + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    # The buffer's address comes from a library call, so Triton cannot know
    # its alignment: say it (symmetric buffers are at least 16-byte
    # aligned), or A is loaded 2 bytes at a time instead of by cp.async.
    elem: tl.constexpr = dtype.primitive_bitwidth // 8
    delta = tl.multiple_of((tlx.local_pointer(ag, 0) - a.to(tl.int64)) // elem, 16)
    gathered = a + delta
    if WAIT:
        if src == rank:
            base = a + rows[:, None] * K
        else:
            tlx.signal_wait(comm, src * CHUNKS_ + row // CHUNK, epoch)
            base = gathered + (src * M + rows[:, None]) * K
    else:
        base = gathered + (src * M + rows[:, None]) * K
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    # No masks: the host checks K % BK == 0 and N % BN == 0.
    for k0 in range(0, K, BK):
        x = tl.load(base + k0 + ks[None, :])
        y = tl.load(b + (k0 + ks[:, None]) * N + cols[None, :])
        acc = tl.dot(x, y, acc)
    out = c + (src * M + rows[:, None]) * N + cols[None, :]
    tl.store(out, acc.to(c.dtype.element_ty))


@triton.jit
def release_kernel(comm, CHUNKS_: tl.constexpr):
    """After this rank's GEMM: every peer may overwrite our gather rows."""
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    for i in range(1, size):
        tlx.signal(comm, (rank + i) % size, size * CHUNKS_ + rank)


class Config:
    """Tile shapes per problem. The defaults suit bf16 on H100/H200 (wgmma);
    the interpreter runs small float32 problems with small tiles."""

    def __init__(self, bm=128, bn=256, bk=64, group_m=8, num_warps=8, num_stages=3, push_programs=16, rb=16,
                 kb=512):
        self.bm, self.bn, self.bk, self.group_m = bm, bn, bk, group_m
        self.num_warps, self.num_stages = num_warps, num_stages
        self.push_programs, self.rb, self.kb = push_programs, rb, kb

    @classmethod
    def for_shape(cls, m: int, n: int) -> Config:
        """The best of a sweep on one H200 (docs/gpu-notes.md, 2026-12-01):
        128 x 256 x 64 tiles, 8 warps, except narrow C (N <= 1024: too few
        tiles to fill the SMs with 256-wide ones); 4 stages up to N = 2048."""
        if n <= 1024:
            return cls(bn=128, num_stages=4)
        return cls(num_stages=4 if n <= 2048 else 3)


class AgGemm:
    """The fused all-gather + GEMM over one communicator (tle.torch or
    tle.cpu): owns the gather buffer and the call count the signal words
    follow. Every rank must make the same calls in the same order."""

    def __init__(self, comm, m: int, k: int, dtype, config: Config | None = None, interpret: bool = False):
        if m % CHUNKS or (m // CHUNKS) % (config or Config()).bm:
            raise ValueError(f"M={m} must be a multiple of CHUNKS * BM = {CHUNKS} * {(config or Config()).bm}")
        self.comm, self.m, self.k = comm, m, k
        self.config = config or Config()
        self.interpret = interpret
        self.ag = comm.alloc((comm.size * m, k), dtype)
        self.epoch = 0

    def _grid(self, n: int) -> tuple[int]:
        cfg = self.config
        return (self.comm.size * (self.m // cfg.bm) * triton.cdiv(n, cfg.bn),)

    def _gemm(self, a, b, c, wait: bool):
        cfg = self.config
        n = b.shape[1]
        if self.k % cfg.bk or n % cfg.bn or tuple(b.shape) != (self.k, n) or tuple(c.shape) != (self.comm.size * self.m, n):
            raise ValueError(f"shapes: B must be {self.k} x N and C {self.comm.size * self.m} x N, with K % {cfg.bk} "
                             f"== 0 and N % {cfg.bn} == 0 (got B {tuple(b.shape)}, C {tuple(c.shape)})")
        extra = {} if self.interpret else {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
        gemm_kernel[self._grid(b.shape[1])](self.comm.dev_comm, self.ag.handle, a, b, c, self.epoch, self.m,
                                            b.shape[1], self.k, CHUNK=self.m // CHUNKS, CHUNKS_=CHUNKS, BM=cfg.bm,
                                            BN=cfg.bn, BK=cfg.bk, GROUP_M=cfg.group_m, WAIT=wait,
                                            extern_libs=tle.extern_libs(), **extra)

    def push(self, a):
        cfg = self.config
        push_kernel[(min(cfg.push_programs, CHUNKS),)](self.comm.dev_comm, self.ag.handle, a, self.epoch, self.m,
                                                       self.k, CHUNK=self.m // CHUNKS, CHUNKS_=CHUNKS, RB=cfg.rb,
                                                       KB=cfg.kb, extern_libs=tle.extern_libs())

    def release(self):
        release_kernel[(1,)](self.comm.dev_comm, CHUNKS_=CHUNKS, extern_libs=tle.extern_libs())

    def __call__(self, a, b, c, side_stream=None):
        """c = AllGather(a) @ b. With torch on GPUs, `side_stream` (a
        torch.cuda.Stream) runs the push while the caller's stream runs
        the GEMM; without it (the interpreter) the kernels run in turn."""
        self.epoch += 1
        if side_stream is None:
            self.push(a)
            self._gemm(a, b, c, wait=True)
            self.release()
            return c
        import torch
        main = torch.cuda.current_stream()
        side_stream.wait_stream(main)  # `a` and the previous call are done here
        with torch.cuda.stream(side_stream):
            self.push(a)
        self._gemm(a, b, c, wait=True)
        self.release()
        main.wait_stream(side_stream)
        return c

    def gemm_only(self, b, c):
        """The same GEMM over the gather buffer as it is (no waits): the
        lower bound for the fused call."""
        self._gemm(self.ag.tensor if hasattr(self.ag, "tensor") else self.ag, b, c, wait=False)
        return c

    def close(self):
        self.ag.close()


def main_torch(m: int, k: int, n: int) -> bool:
    import os

    import torch
    import torch.distributed as dist

    from tle.torch import Communicator

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    world = dist.get_world_size()
    ok = True
    with Communicator.from_process_group(n_signals=signal_words(world)) as comm:
        torch.manual_seed(1234 + comm.rank)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        dist.broadcast(b, 0)
        op = AgGemm(comm, m, k, torch.bfloat16, Config.for_shape(m, n))
        c = torch.empty(world * m, n, device="cuda", dtype=torch.bfloat16)
        side = torch.cuda.Stream()
        gathered = torch.empty(world * m, k, device="cuda", dtype=torch.bfloat16)
        dist.all_gather_into_tensor(gathered, a)
        ref = gathered.float() @ b.float()
        for _ in range(3):  # several calls: the words carry over
            op(a, b, c, side_stream=side)
            comm.synchronize()
            err = ((c.float() - ref).norm() / ref.norm()).item()
            ok &= err < 1e-2
        print(f"rank {comm.rank}: ag_gemm {m}x{k}x{n} relative error {err:.2e}: {'OK' if ok else 'WRONG'}",
              flush=True)
        op.close()
        dist.barrier()
    dist.destroy_process_group()
    return ok


def main_numpy(m: int, k: int, n: int, late: float = 0.0) -> bool:
    """CPU ranks. With `late`, the last rank starts its first call `late`
    seconds after the others, whose GEMMs must then wait for its rows."""
    import time

    import numpy as np

    from tle.cpu import Communicator, Tensor

    size_hint = 8  # signal words for up to 8 ranks
    with Communicator.from_launcher(n_signals=signal_words(size_hint)) as comm:
        rng = np.random.default_rng(7)
        shards = [rng.standard_normal((m, k)).astype(np.float32) for _ in range(comm.size)]
        b_host = rng.standard_normal((k, n)).astype(np.float32)
        a, b = Tensor(shards[comm.rank]), Tensor(b_host)
        c = Tensor(np.zeros((comm.size * m, n), np.float32))
        cfg = Config(bm=16, bn=16, bk=16, group_m=2, push_programs=2, rb=8, kb=16)
        op = AgGemm(comm, m, k, np.float32, cfg, interpret=True)
        ref = np.concatenate(shards) @ b_host
        ok = True
        for call in range(2):
            if call == 0 and late and comm.rank == comm.size - 1:
                time.sleep(late)
            op(a, b, c)
            comm.synchronize()
            ok &= bool(np.allclose(c.numpy(), ref, rtol=1e-4, atol=1e-3))
        print(f"rank {comm.rank} of {comm.size}: ag_gemm {m}x{k}x{n} {'OK' if ok else 'WRONG'}", flush=True)
        op.close()
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=None, help="rows of A per rank")
    parser.add_argument("--k", type=int, default=None)
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--late", type=float, default=0.0,
                        help="CPU ranks: the last rank starts this many seconds late")
    args = parser.parse_args()
    if launched():
        ok = main_numpy(args.m or 128, args.k or 32, args.n or 48, args.late)
    else:
        ok = main_torch(args.m or 1024, args.k or 8192, args.n or 1024)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
