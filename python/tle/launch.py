# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE's launcher: N CPU ranks of a Python program, for Triton kernels that
run under Triton's interpreter where PyTorch (and torchrun) is not at hand.

    python -m tle.launch --ranks 2 script.py [args...]
    python -m tle.launch --ranks 4 -m package.module [args...]
    python -m tle.launch --nodes 2 --ranks 4 script.py [args...]

With ``--nodes M`` the ranks form M simulated nodes of ``--ranks`` ranks
each (M x N processes; ``TLE_LAUNCH_RANKS_PER_NODE`` tells each rank), so
that the INTER and WORLD teams cross nodes.

Every rank is a process running the program with ``TLE_LAUNCH_RANK``,
``TLE_LAUNCH_SIZE`` and ``TLE_LAUNCH_UNIQUE_ID`` (a fresh bootstrap id), from
which ``tle.cpu.Communicator.from_launcher()`` builds its rank of an
emulator-backend communicator, and with ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` as torchrun sets them.
``TRITON_INTERPRET`` is set to 1 unless it is set already: emulator memory
is host memory, which only interpreted kernels can address.

The launcher waits for every rank. When one fails, the others get
``--grace`` seconds to finish on their own (a rank waiting for the failed
one reports the barrier's timeout, naming it) before they are terminated.
Exit status: 0 when every rank succeeded, else the status of the first rank
that failed (a rank killed by a signal counts as 128 + the signal), or 124
when ``--timeout`` expired first.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO, Mapping, Sequence

from . import runtime
from .runtime import get_unique_id

__all__ = ["LaunchResult", "launched", "main", "run"]

#: What a rank learns from the launcher (read by
#: tle.cpu.Communicator.from_launcher). This module needs no NumPy, so that
#: programs that also run under torchrun can import it on any machine.
ENV_RANK = "TLE_LAUNCH_RANK"
ENV_SIZE = "TLE_LAUNCH_SIZE"
ENV_UNIQUE_ID = "TLE_LAUNCH_UNIQUE_ID"
#: Set with ``nodes`` > 1: the ranks per simulated node.
ENV_RANKS_PER_NODE = "TLE_LAUNCH_RANKS_PER_NODE"

#: Exit status of a launch whose --timeout expired.
TIMEOUT_STATUS = 124
_POLL_S = 0.02
_TERMINATE_S = 5.0


def launched() -> bool:
    """Whether this process is a rank started by ``tle.launch``."""
    return ENV_RANK in os.environ


@dataclass
class LaunchResult:
    """How the ranks ended: ``returncodes[r]`` is rank r's exit status (a
    negative number: killed by that signal), None if it was still running
    when the launcher stopped it."""
    returncodes: list[int | None]
    first_failure: int | None
    timed_out: bool

    @property
    def returncode(self) -> int:
        """The launcher's exit status (see the module's documentation)."""
        if self.timed_out:
            return TIMEOUT_STATUS
        if self.first_failure is None:
            return 0
        code = self.returncodes[self.first_failure]
        return 128 - code if code is not None and code < 0 else (code or 1)


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM every rank still running, SIGKILL those that ignore it."""
    alive = [p for p in procs if p.poll() is None]
    for p in alive:
        p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + _TERMINATE_S
    for p in alive:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run(argv: Sequence[str], ranks: int, *, timeout: float | None = None, grace: float = 30.0,
        env: Mapping[str, str] | None = None, stdout: IO | None = None, stderr: IO | None = None,
        nodes: int = 1) -> LaunchResult:
    """Runs ``python *argv`` (a script and its arguments, or ``-m module
    ...``) as ``ranks`` ranks and waits for them; ``timeout`` (seconds) ends
    the whole run, ``grace`` how long the others may run after a rank
    failed. ``stdout``/``stderr`` default to this process's. ``nodes`` > 1:
    ``ranks`` ranks on each of that many simulated nodes (the emulator's
    teams INTER and WORLD cross them), ``nodes * ranks`` processes in all."""
    if not 1 <= nodes <= runtime.MAX_RANKS:
        raise ValueError(f"nodes must be in 1..{runtime.MAX_RANKS}; got {nodes}")
    if not 1 <= ranks <= runtime.MAX_RANKS // nodes:
        raise ValueError(f"ranks must be in 1..{runtime.MAX_RANKS // nodes} per node ({nodes} nodes, at most "
                         f"{runtime.MAX_RANKS} in all); got {ranks}")
    per_node, ranks = ranks, ranks * nodes
    if not argv:
        raise ValueError("nothing to run: give a script or -m module")
    unique_id = get_unique_id().hex()
    base = dict(os.environ if env is None else env)
    base.setdefault("TRITON_INTERPRET", "1")
    procs = []
    try:
        for rank in range(ranks):
            rank_env = dict(base)
            rank_env.update({ENV_RANK: str(rank), ENV_SIZE: str(ranks), ENV_UNIQUE_ID: unique_id,
                             "RANK": str(rank), "LOCAL_RANK": str(rank % per_node), "WORLD_SIZE": str(ranks),
                             "LOCAL_WORLD_SIZE": str(per_node)})
            if nodes > 1:
                rank_env[ENV_RANKS_PER_NODE] = str(per_node)
            else:
                rank_env.pop(ENV_RANKS_PER_NODE, None)
            procs.append(subprocess.Popen([sys.executable, *argv], env=rank_env, stdout=stdout, stderr=stderr))
        start = time.monotonic()
        first_failure: int | None = None
        failed_at = 0.0
        while [p.poll() for p in procs].count(None):  # polls every rank, unlike any()
            now = time.monotonic()
            if first_failure is None:
                for rank, p in enumerate(procs):
                    if p.returncode not in (None, 0):
                        first_failure, failed_at = rank, now
                        break
            if timeout is not None and now - start > timeout:
                _stop(procs)
                return LaunchResult([p.returncode for p in procs], first_failure, True)
            if first_failure is not None and now - failed_at > grace:
                _stop(procs)
                break
            time.sleep(_POLL_S)
    except BaseException:
        _stop(procs)
        raise
    codes = [p.returncode for p in procs]
    if first_failure is None:
        first_failure = next((r for r, c in enumerate(codes) if c != 0), None)
    return LaunchResult(codes, first_failure, False)


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tle.launch", description="Run a Python program as N CPU ranks of a TLE communicator "
        "(emulator backend), for Triton kernels under TRITON_INTERPRET=1.",
        # The program's own options follow the script: an abbreviation of
        # ours (--n for --nodes or --nproc-per-node) must not take them.
        allow_abbrev=False)
    parser.add_argument("--ranks", "--nproc-per-node", type=int, required=True,
                        help="number of ranks (1..128), per node with --nodes")
    parser.add_argument("--nodes", "--nnodes", type=int, default=1,
                        help="simulated nodes (default 1); the world is nodes x ranks, at most 128")
    parser.add_argument("--timeout", type=float, default=None, help="seconds before every rank is stopped")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds the other ranks may run after one failed (default 30)")
    parser.add_argument("-m", dest="module", default=None, help="run a module, as python -m does")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="script.py [args...] (or the module's args)")
    ns = parser.parse_args(args)
    argv = (["-m", ns.module] if ns.module else []) + list(ns.program)
    if not argv:
        parser.error("give a script (or -m module) to run")
    try:
        result = run(argv, ns.ranks, timeout=ns.timeout, grace=ns.grace, nodes=ns.nodes)
    except KeyboardInterrupt:
        return 130
    if result.timed_out:
        print(f"tle.launch: stopped every rank after --timeout {ns.timeout:g} s", file=sys.stderr, flush=True)
    elif result.first_failure is not None:
        codes = ", ".join(f"rank {r}: {c}" for r, c in enumerate(result.returncodes))
        print(f"tle.launch: rank {result.first_failure} failed first (exit statuses: {codes})", file=sys.stderr,
              flush=True)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
