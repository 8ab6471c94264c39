# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The rank program of the team tests under Triton's interpreter
(test_teams.py): tle.language's team_rank / team_size, and a barrier and a
signal of one team, on CPU ranks of one node started by TLE's launcher:

    python -m tle.launch --ranks N python/tests/team_ranks.py TEAM

On one node INTRA and WORLD hold the same ranks (world rank = intra rank)
and INTER holds this rank alone (node 0 of 1). Each rank prints its team
rank and size, then, for intra and world, writes its rank into its right
neighbour's buffer, barriers (team TEAM), signals its right neighbour and
waits for its left one's signal, and checks what the left neighbour wrote;
for inter it barriers and signals itself. Lines:

    [rank r] QUERY TEAM rank=R size=S
    [rank r] PASS TEAM ...            the barrier and the signal worked
    [rank r] UNSUPPORTED TEAM: ...    the runtime refused the team kind
    [rank r] FAIL TEAM: ...
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import triton
import triton.language as tl

import tle
import tle.language as tlx
from tle.cpu import Communicator, Tensor
from tle.runtime import TLEError


@triton.jit
def team_query_kernel(comm, out, TEAM: tl.constexpr):
    tl.store(out, tlx.team_rank(comm, TEAM))
    tl.store(out + 1, tlx.team_size(comm, TEAM))


@triton.jit
def team_kernel(comm, mem, out, TEAM: tl.constexpr, EXCHANGE: tl.constexpr):
    rank = tlx.team_rank(comm, TEAM)
    size = tlx.team_size(comm, TEAM)
    peer = (rank + 1) % size
    if EXCHANGE:
        # One node: a world rank is an intra rank, so the pointer is the peer's.
        dst = tlx.intra_pointer(mem, 0, peer, dtype=tl.int32)
        tl.store(dst, rank + 100)
    tlx.distributed_barrier(comm, index=0, team=TEAM)
    tl.store(out, tl.load(tlx.local_pointer(mem, 0, dtype=tl.int32)))
    tlx.signal(comm, peer, 1, team=TEAM)
    tlx.signal_wait(comm, 1, 1)
    tl.store(out + 1, tlx.read_signal(comm, 1).to(tl.int32))


def log(comm: Communicator, message: str) -> None:
    sys.stdout.write(f"[rank {comm.rank}] {message}\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("team", choices=["intra", "inter", "world"])
    team = parser.parse_args().team
    with Communicator.from_launcher() as comm:
        out = Tensor(np.full(2, -1, np.int32))
        team_query_kernel[(1,)](comm.dev_comm, out, TEAM=team, extern_libs=tle.extern_libs())
        rank, size = (int(v) for v in out.numpy())
        log(comm, f"QUERY {team} rank={rank} size={size}")
        mem = comm.alloc((1,), np.int32)
        out = Tensor(np.full(2, -1, np.int32))
        try:
            team_kernel[(1,)](comm.dev_comm, mem.handle, out, TEAM=team, EXCHANGE=team != "inter",
                              extern_libs=tle.extern_libs())
            comm.synchronize()
        except Exception as e:  # InterpreterError around the device's TLEError
            err = TLEError.find(e)
            if err is not None and "team kind" in str(err):
                log(comm, f"UNSUPPORTED {team}: {err}")
                return 0
            log(comm, f"FAIL {team}: {e!r}")
            return 1
        seen, word = (int(v) for v in out.numpy())
        left = (rank + size - 1) % size
        expected = 0 if team == "inter" else left + 100
        ok = seen == expected and word == 1
        log(comm, f"{'PASS' if ok else 'FAIL'} {team} read={seen} (expected {expected}) signal={word}")
        mem.close()
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
