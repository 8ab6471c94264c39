# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Shared setup of the GPU tests (python/tests_gpu), each run with torchrun,
one process per GPU of the node: the process group, this rank's device, and
a TLE communicator over them.

Run through scripts/gpu-triton.sh, which sets PYTHONPATH to python/ and
TLE_DEVICE_BC / TLE_LIB to the carried bitcode and the CUDA build.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

import torch
import torch.distributed as dist

import tle
from tle.torch import Communicator


def log(message: str) -> None:
    """One line, prefixed with this rank, flushed at once."""
    rank = os.environ.get("RANK", "?")
    print(f"[rank {rank}] {message}", flush=True)


@contextmanager
def distributed(backend: str = "nccl", **comm_options) -> Iterator[Communicator]:
    """Initialize torch.distributed on this rank's GPU and yield a TLE
    communicator over the world; tear both down at the end."""
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    if backend == "nccl":
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    else:
        dist.init_process_group(backend)
    log(f"GPU {local_rank} ({torch.cuda.get_device_name(local_rank)}), torch {torch.__version__}, "
        f"triton {__import__('triton').__version__}, bitcode {tle.device_bitcode_path()}, "
        f"libtle {tle.host_library_path()}")
    comm = Communicator.from_process_group(**comm_options)
    try:
        yield comm
    finally:
        comm.close()
        dist.destroy_process_group()


def fail(message: str) -> None:
    """Report a failed check and exit non-zero."""
    log(f"FAIL: {message}")
    sys.exit(1)
