# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test 2, the program under test: rank 1 skips the barrier that rank 0
enters, so rank 0's wait must end with TLE's timeout report (the launch
fails, and Communicator.synchronize raises TLEError with the device record)
instead of hanging. check_timeout.py runs it under torchrun and checks that.

Exit status: 3 when rank 0 got the report (what check_timeout.py expects),
0 on rank 1, 1 if rank 0's barrier returned.

    torchrun --nproc-per-node 2 python/tests_gpu/timeout_kernel.py
"""

from __future__ import annotations

import os
import time

import tle
from common import distributed, log
from kernels import maybe_barrier_kernel
from tle.torch import TLEError

TIMEOUT_MS = 2000


def main() -> None:
    with distributed(backend="gloo", timeout_ms=TIMEOUT_MS) as comm:
        skip = 1 if comm.rank == 1 else 0
        log(f"{'skipping' if skip else 'entering'} the barrier (timeout {TIMEOUT_MS} ms)")
        start = time.monotonic()
        maybe_barrier_kernel[(1,)](comm.dev_comm, skip, extern_libs=tle.extern_libs())
        try:
            comm.synchronize()
        except TLEError as e:
            log(f"TLE error report after {time.monotonic() - start:.1f} s: code={getattr(e.code, 'name', e.code)} {e}")
            if e.info is not None:
                log(f"record: rank={e.info.rank} slot={e.info.slot} epoch={e.info.epoch} "
                    f"missing_peers={list(e.info.missing_peers)} elapsed_ms={e.info.elapsed_ns / 1e6:.0f}")
            # The CUDA context is unusable after the failed launch: leave
            # without the usual teardown, which would touch it.
            os._exit(3)
        if skip:
            # Stay alive (and keep this rank's memory mapped) while rank 0
            # waits for its deadline, then leave without a collective.
            time.sleep(TIMEOUT_MS / 1000 + 5)
            log("done")
            os._exit(0)
        log("the barrier returned although rank 1 never arrived")
        os._exit(1)


if __name__ == "__main__":
    main()
