"""TLE in Triton, the smallest complete program: an all-gather in one kernel.

Every GPU stores its input into its row of every peer's symmetric buffer,
then one distributed_barrier makes all those stores visible everywhere.
Run on one node, one process per GPU:

    torchrun --nproc-per-node 2 python/examples/allgather.py
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.torch import Communicator


@triton.jit
def allgather_kernel(comm, out, x, N: tl.constexpr):
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    offs = tl.arange(0, N)
    values = tl.load(x + offs)
    for peer in range(size):
        row = tlx.intra_pointer(out, 0, peer, dtype=tl.float32) + rank * N
        tl.store(row + offs, values)
    # After the barrier every peer's stores into this GPU's buffer are visible.
    tlx.distributed_barrier(comm, space="device", barrier_kind="sync", group_kind="block", order="acq_rel")


def main() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    n = 1024
    with Communicator.from_process_group() as comm:
        out = comm.alloc((comm.size, n), torch.float32)
        x = torch.full((n,), float(comm.rank), device="cuda")
        allgather_kernel[(1,)](comm.dev_comm, out.handle, x, N=n, extern_libs=tle.extern_libs())
        comm.synchronize()  # raises tle.torch.TLEError with TLE's report if the barrier failed
        expected = torch.arange(comm.size, dtype=torch.float32, device="cuda")[:, None].expand(-1, n)
        ok = torch.equal(out.tensor, expected)
        print(f"rank {comm.rank} of {comm.size}: all-gather {'OK' if ok else 'WRONG'}", flush=True)
        dist.barrier()
    dist.destroy_process_group()
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
