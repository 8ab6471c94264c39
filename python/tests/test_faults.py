# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Faults a program survives, on CPU ranks (one process each, Triton's
interpreter): a rank that skips a barrier under onError = return, then a new
communicator (fault_ranks.py recover); a rank killed with SIGKILL in a
barrier loop, which the survivors' watchdogs report within a second
(fault_ranks.py loop); a signal wait past its deadline under onError =
return, which the kernel learns from comm_failed (fault_ranks.py signal). docs/runtime.md, "Faults".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")
pytest.importorskip("triton")

from tle import runtime  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]
RANKS = PYTHON_DIR / "tests" / "fault_ranks.py"


pytestmark = pytest.mark.usefixtures("host_library")


def start(*argv: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning")
    return subprocess.Popen([sys.executable, str(RANKS), *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen, limit: float = 120.0) -> str:
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"still running after {limit:.0f} s (a hang):\n{out}")
    return out


def test_skipped_barrier_under_return_then_a_new_communicator():
    first, second = runtime.get_unique_id().hex(), runtime.get_unique_id().hex()
    procs = [start("recover", str(r), first, second) for r in range(2)]
    outs = [finish(p) for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out
        assert "PASS recovery" in out, out
    assert "PASS record" in outs[0] and "timed out" in outs[0], outs[0]


def test_signal_wait_under_return_runs_on_and_names_the_word():
    uid = runtime.get_unique_id().hex()
    procs = [start("signal", str(r), uid) for r in range(2)]
    outs = [finish(p) for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
    assert "PASS signal" in outs[0], outs[0]


def test_killed_rank_is_reported_by_the_survivors_within_a_second():
    uid = runtime.get_unique_id().hex()
    procs = [start("loop", str(r), "3", uid) for r in range(3)]
    # Wait until the rank to kill has done a round (every rank has joined).
    line = ""
    deadline = time.monotonic() + 60
    while "READY" not in line and time.monotonic() < deadline:
        line = procs[2].stdout.readline()
        if not line and procs[2].poll() is not None:
            break
    assert "READY" in line, line + finish(procs[2])
    time.sleep(0.3)
    killed = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    procs[2].send_signal(signal.SIGKILL)
    procs[2].wait()
    for r in range(2):
        out = finish(procs[r])
        assert procs[r].returncode == 0, out
        end = next(l for l in out.splitlines() if " END " in l).split()
        # "[rank r] END <ns> <code> <missing> ..."
        latency = (int(end[3]) - killed) / 1e9
        assert int(end[4]) == runtime.Result.PEER_FAILURE, out
        assert end[5] == "2", out
        assert latency < 1.0, f"rank {r} reported {latency:.3f} s after the kill:\n{out}"
