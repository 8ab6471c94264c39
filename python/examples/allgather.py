# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE in Triton, the smallest complete program: an all-gather in one kernel.

Every GPU stores its input into its row of every peer's symmetric buffer,
then one distributed_barrier makes all those stores visible everywhere.
Run on one node, one process per GPU:

    torchrun --nproc-per-node 2 python/examples/allgather.py

The same program runs on CPU ranks under Triton's interpreter, with the
kernel unchanged: with PyTorch (a gloo group, CPU tensors)

    TRITON_INTERPRET=1 torchrun --nproc-per-node 2 python/examples/allgather.py

or without it, through TLE's launcher (NumPy buffers)

    python -m tle.launch --ranks 2 python/examples/allgather.py
"""

from __future__ import annotations

import os

import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.launch import launched


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


def main_torch(n: int) -> bool:
    """torchrun: NCCL on GPUs; gloo and CPU tensors under the interpreter."""
    import torch
    import torch.distributed as dist

    from tle.torch import Communicator

    if triton.knobs.runtime.interpret:
        device = "cpu"
        dist.init_process_group("gloo")
    else:
        local_rank = int(os.environ["LOCAL_RANK"])
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", device_id=torch.device(device))
    with Communicator.from_process_group() as comm:
        out = comm.alloc((comm.size, n), torch.float32)
        x = torch.full((n,), float(comm.rank), device=device)
        allgather_kernel[(1,)](comm.dev_comm, out.handle, x, N=n, extern_libs=tle.extern_libs())
        comm.synchronize()  # raises tle.torch.TLEError with TLE's report if the barrier failed
        expected = torch.arange(comm.size, dtype=torch.float32, device=device)[:, None].expand(-1, n)
        ok = torch.equal(out.tensor, expected)
        print(f"rank {comm.rank} of {comm.size}: all-gather {'OK' if ok else 'WRONG'}", flush=True)
        dist.barrier()
    dist.destroy_process_group()
    return ok


def main_numpy(n: int) -> bool:
    """python -m tle.launch: CPU ranks under the interpreter, no PyTorch."""
    import numpy as np

    from tle.cpu import Communicator, Tensor

    with Communicator.from_launcher() as comm:
        out = comm.alloc((comm.size, n), np.float32)
        x = Tensor(np.full(n, comm.rank, np.float32))
        allgather_kernel[(1,)](comm.dev_comm, out.handle, x, N=n, extern_libs=tle.extern_libs())
        comm.synchronize()
        expected = np.repeat(np.arange(comm.size, dtype=np.float32)[:, None], n, axis=1)
        ok = np.array_equal(out.array, expected)
        print(f"rank {comm.rank} of {comm.size}: all-gather {'OK' if ok else 'WRONG'}", flush=True)
    return ok


def main() -> None:
    ok = main_numpy(1024) if launched() else main_torch(1024)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
