# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test: tensors the program already has, registered as symmetric
buffers (tleMemRegister through tle.torch.Communicator.register).

    torchrun --nproc-per-node 2 python/tests_gpu/register.py [share|refuse]

share (the default): three tensors are registered on every rank: one from
PyTorch's default allocator, two from tle.torch.shareable_mem_pool() that
lie in one allocation of the pool (so the peers open one CUDA IPC handle
for both, at two offsets). For each, every rank writes its rank-stamped
values into the next rank's tensor through tle.language.intra_pointer,
barriers, and checks that its own tensor holds the previous rank's values.
The registrations are then closed and the tensors must still be usable.

refuse: run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, where the
default allocator maps memory with cuMem (virtual memory), which legacy CUDA
IPC cannot export: registering such a tensor must fail on every rank, with
TLE's explanation on the rank that registered it (or the peer's reason),
while a tensor of shareable_mem_pool() still registers.

Every check prints PASS or FAIL; the exit status is non-zero on a failure.
"""

from __future__ import annotations

import os
import sys

import torch
import triton
import triton.language as tl

import tle
import tle.language as tlx
from common import distributed, fail, log
from tle.torch import TLEError, shareable_mem_pool

N = 1024


@triton.jit
def put_next_kernel(comm, mem, stamp, N: tl.constexpr):
    rank = tlx.intra_rank(comm)
    peer = (rank + 1) % tlx.intra_size(comm)
    offs = tl.arange(0, N)
    tl.store(tlx.intra_pointer(mem, 0, peer, dtype=tl.int32) + offs, stamp + rank * N + offs)
    tlx.distributed_barrier(comm)


def check_share(comm, name: str, tensor: torch.Tensor, stamp: int):
    """Registers `tensor`, exchanges through it; (passed, the buffer)."""
    buf = comm.register(tensor)
    if buf.tensor is not tensor or not buf.registered:
        fail(f"{name}: the buffer is not the registered tensor")
    put_next_kernel[(1,)](comm.dev_comm, buf.handle, stamp, N=N, extern_libs=tle.extern_libs())
    comm.synchronize()
    prev = (comm.rank + comm.size - 1) % comm.size
    expected = stamp + prev * N + torch.arange(N, dtype=torch.int32, device="cuda")
    ok = torch.equal(tensor, expected)
    log(f"{'PASS' if ok else 'FAIL'} register [{name}]: the previous rank's values arrived in this rank's tensor "
        f"(0x{tensor.data_ptr():x})")
    return ok, buf


def share() -> bool:
    with distributed() as comm:
        default = torch.zeros(N, dtype=torch.int32, device="cuda")
        with torch.cuda.use_mem_pool(shareable_mem_pool()):
            first = torch.zeros(N, dtype=torch.int32, device="cuda")
            second = torch.zeros(N, dtype=torch.int32, device="cuda")
        results, bufs = [], []
        for name, tensor, stamp in (("default allocator", default, 10_000), ("shareable pool", first, 20_000),
                                    ("same pool allocation, second tensor", second, 30_000)):
            ok, buf = check_share(comm, name, tensor, stamp)
            results.append(ok)
            bufs.append(buf)
        torch.distributed.barrier()
        for buf in bufs:
            buf.close()
        torch.distributed.barrier()
        second += 1
        prev = (comm.rank + comm.size - 1) % comm.size
        still = torch.equal(second, 30_001 + prev * N + torch.arange(N, dtype=torch.int32, device="cuda"))
        log(f"{'PASS' if still else 'FAIL'} register: closing the registrations left the tensors usable")
        return all(results) and still


def refuse() -> bool:
    if "expandable_segments:True" not in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""):
        fail("run the refuse case with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    with distributed() as comm:
        vmm = torch.zeros(N, dtype=torch.int32, device="cuda")
        try:
            comm.register(vmm)
        except TLEError as e:
            text = str(e)
            ok = ("legacy CUDA IPC cannot share" in text and "expandable_segments" in text) or \
                ("failed:" in text and "legacy CUDA IPC cannot share" in text)
            log(f"{'PASS' if ok else 'FAIL'} refuse: a cuMem (expandable_segments) tensor is refused: {text}")
        else:
            ok = False
            log("FAIL refuse: a cuMem (expandable_segments) tensor was registered")
        with torch.cuda.use_mem_pool(shareable_mem_pool()):
            pooled = torch.zeros(N, dtype=torch.int32, device="cuda")
        pooled_ok, buf = check_share(comm, "shareable pool beside expandable segments", pooled, 40_000)
        torch.distributed.barrier()
        buf.close()
        return ok and pooled_ok


if __name__ == "__main__":
    case = sys.argv[1] if len(sys.argv) > 1 else "share"
    sys.exit(0 if {"share": share, "refuse": refuse}[case]() else 1)
