# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test 4: PyTorch symmetric memory synchronized by tle.distributed_barrier.

A tensor from ``torch.distributed._symmetric_memory.empty`` becomes a TLE
buffer with one call (``comm.import_symmetric``: rendezvous, then the peers'
buffer addresses from the symmetric-memory handle). Two kernels use it:
``peer_read_kernel`` stores into this rank's tensor and, after
distributed_barrier, reads the right neighbour's through intra_pointer;
``exchange_kernel`` stores into the neighbour's copy through intra_pointer
and reads its own. After the second, this rank's tensor must hold what the
left neighbour stored through TLE's pointers, which is only true if TLE's
pointers are the peers' symmetric-memory buffers themselves. Closing the
TLE buffer must leave the tensor usable.

    torchrun --nproc-per-node N python/tests_gpu/symm_import.py [--iters N]
"""

from __future__ import annotations

import argparse

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import tle
from common import distributed, fail, log
from kernels import BLOCK, exchange_kernel, peer_read_kernel

PROGRAMS = (1, 8, 32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000)
    args = parser.parse_args()
    failures = 0
    with distributed(n_barriers=64) as comm:
        size, rank = comm.size, comm.rank
        left = (rank + size - 1) % size
        for programs in PROGRAMS:
            n = programs * BLOCK
            tensor = symm_mem.empty(n, dtype=torch.int32, device=comm.torch_device)
            buf = comm.import_symmetric(tensor)
            assert buf.tensor is tensor
            errors = torch.full((programs,), -1, dtype=torch.int32, device=comm.torch_device)
            dist.barrier()
            peer_read_kernel[(programs,)](comm.dev_comm, buf.handle, errors, args.iters, BLOCK=BLOCK,
                                          extern_libs=tle.extern_libs())
            comm.synchronize()
            bad_read = int(errors.sum())
            dist.barrier()
            exchange_kernel[(programs,)](comm.dev_comm, buf.handle, errors, args.iters, BLOCK=BLOCK,
                                         GROUP="block", SHIFT=0, extern_libs=tle.extern_libs())
            comm.synchronize()
            bad_exchange = int(errors.sum())
            expected = ((args.iters - 1) * size + left) * n + torch.arange(n, dtype=torch.int32,
                                                                          device=comm.torch_device)
            wrong_final = int((tensor != expected).sum())
            buf.close()
            # Still PyTorch's memory after TLE's handle is gone.
            tensor.fill_(rank)
            torch.cuda.synchronize()
            ok = bad_read == 0 and bad_exchange == 0 and wrong_final == 0 and int((tensor != rank).sum()) == 0
            failures += not ok
            log(f"{'PASS' if ok else 'FAIL'} symm_mem import [{programs} programs]: {args.iters} iterations, "
                f"{bad_read} wrong peer reads, {bad_exchange} wrong exchanged values, "
                f"{wrong_final} wrong in the symm_mem tensor afterwards")
            dist.barrier()
    if failures:
        fail(f"{failures} of {len(PROGRAMS)} symmetric-memory cases failed")
    log(f"PASS symm_mem import: all {len(PROGRAMS)} cases")


if __name__ == "__main__":
    main()
