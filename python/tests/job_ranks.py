# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One CPU rank of the job-report tests (test_job_error.py), one process per
rank, started by the test (ranks fail on purpose):

    python job_ranks.py skip RANK ID     rank 1 skips barrier slot 3
    python job_ranks.py signal RANK ID   rank 1 never signals rank 0's word 3
    python job_ranks.py kill RANK ID     rank 1's process ends without a goodbye

Every rank that lives calls ``Communicator.job_error()`` (collective) and
prints ``JOB <json>``; the test checks the culprit.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.cpu import Communicator, Tensor
from tle.runtime import OnError, TLEError


@triton.jit
def barrier_slot_3(comm, mark):
    tlx.distributed_barrier(comm, index=3)
    tl.store(mark, 1)


@triton.jit
def wait_word_3(comm, mark):
    tlx.signal_wait(comm, 3, 1)
    tl.store(mark, 1)


def main() -> int:
    case, rank, uid = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
    timeout = 10000 if case == "kill" else 300
    comm = Communicator.init_rank(2, uid, rank, timeout_ms=timeout, bootstrap_timeout_ms=20000,
                                  on_error=OnError.RETURN)
    if case == "kill" and rank == 1:
        os._exit(0)  # no close, no goodbye: the watchdog's death
    if rank == 0:
        mark = Tensor(np.zeros(1, np.int32))
        kernel = wait_word_3 if case == "signal" else barrier_slot_3
        kernel[(1,)](comm.dev_comm, mark, extern_libs=tle.extern_libs())
        try:
            comm.synchronize()
            print("FAIL: the wait did not fail", flush=True)
            return 1
        except TLEError:
            pass  # the rank's own record: read, and still in the report
    print("JOB " + json.dumps(comm.job_error()), flush=True)
    comm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
