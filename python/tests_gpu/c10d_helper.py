# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test 5: tle/c10d.hpp, a TLE communicator from a c10d process group in C++.

A small PyTorch C++ extension, compiled here with
``torch.utils.cpp_extension.load_inline``, calls
``tle::commFromProcessGroup(group, device)`` on the world group; its
``tleComm_t`` is then used from Python like any other (the extension and
``tle.runtime`` share one libtle.so) and runs the neighbour-exchange cases.
The communicator exchanges through the group's NCCL communicator.

    torchrun --nproc-per-node N python/tests_gpu/c10d_helper.py [--iters N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
from torch.utils.cpp_extension import load_inline

import tle
from common import fail, log
from exchange import run_case
from kernels import EXCHANGE_CASES
from tle.runtime import Comm, library
from tle.torch import Communicator

SOURCE = r"""
#include <torch/extension.h>

#include "tle/c10d.hpp"

// The new communicator's tleComm_t as an integer; Python owns it after.
int64_t commFromGroup(const c10::intrusive_ptr<c10d::ProcessGroup> &group,
                      int64_t device) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.backend = tleBackendCuda;
  config.nBarriers = 128;
  tle::Comm comm = tle::commFromProcessGroup(*group, int(device), &config);
  return reinterpret_cast<int64_t>(comm.release());
}
"""


def build_extension():
    root = Path(__file__).resolve().parents[2]
    lib = Path(tle.host_library_path()).resolve()
    build = lib.parent.parent  # build-gpu/lib/libtle.so -> build-gpu
    # Every rank compiles into its own folder: torch's build lock is per folder.
    folder = Path(tempfile.gettempdir()) / f"tle-c10d-ext-{os.environ.get('RANK', '0')}"
    folder.mkdir(exist_ok=True)
    includes = [str(root / "runtime/include"), str(build / "generated/include")]
    # ProcessGroupNCCL.hpp includes nccl.h: PyTorch's wheel has it beside its libnccl.
    try:
        import nvidia.nccl
        includes += [str(Path(p) / "include") for p in nvidia.nccl.__path__ if (Path(p) / "include/nccl.h").exists()]
    except ImportError:
        pass
    return load_inline(
        name="tle_c10d_test", cpp_sources=[SOURCE], functions=["commFromGroup"], with_cuda=True,
        extra_include_paths=includes,
        extra_ldflags=[f"-L{lib.parent}", "-ltle", f"-Wl,-rpath,{lib.parent}"], build_directory=str(folder),
        verbose=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=500)
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    library()  # libtle first: the extension's libtle.so is then the same instance
    log("compiling the tle/c10d.hpp extension")
    ext = build_extension()
    handle = ext.commFromGroup(dist.group.WORLD, local_rank)
    comm = Communicator(Comm(handle), local_rank, dist.group.WORLD)
    log(f"communicator from tle::commFromProcessGroup: {comm}")
    results = [run_case(comm, *case, iters=args.iters, launches=2) for case in EXCHANGE_CASES[:3]]
    dist.barrier()
    comm.close()
    dist.destroy_process_group()
    if not all(results):
        fail(f"{results.count(False)} of {len(results)} cases failed")
    log(f"PASS c10d helper: all {len(results)} cases")


if __name__ == "__main__":
    main()
