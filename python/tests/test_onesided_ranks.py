# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One-sided data movement on CPU ranks of simulated nodes under Triton's
interpreter (onesided_ranks.py): FlagTree-spelled kernels, an all-gather
over every rank of 2 nodes (puts with signals, then gets with a flush) and
a put ring with counters. Each case also runs with its signal or its flush
left out, and must then fail: that is what shows the passing runs depend
on them. The cases skip, saying so, while the device library has no
Triton entry point for the one-sided calls (tleTritonPut and the rest,
docs/triton.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from test_interpreter import PYTHON_DIR, rank_lines

pytestmark = pytest.mark.usefixtures("host_library")

RANKS = PYTHON_DIR / "tests" / "onesided_ranks.py"
NODES, PER_NODE = 2, 2


def run(case: str, *extra: str, timeout_ms: int = 10000) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning",
               TLE_BARRIER_TIMEOUT_MS=str(timeout_ms))
    try:
        proc = subprocess.run([sys.executable, "-m", "tle.launch", "--nodes", str(NODES), "--ranks", str(PER_NODE),
                               "--grace", "10", str(RANKS), case, *extra], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=180)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after 180 s (a hang):\n{e.stdout}")
    lines = [rank_lines(proc.stdout, r) for r in range(NODES * PER_NODE)]
    skipped = [line for rank in lines for line in rank if line.startswith("UNSUPPORTED")]
    if skipped:
        pytest.skip(f"the device library has no Triton entry points for one-sided calls yet: {skipped[0]}")
    return proc, lines


@pytest.mark.parametrize("case, passes", [("allgather", 2), ("ring", 4)])
def test_flagtree_kernels_move_data_across_nodes(case, passes):
    proc, lines = run(case)
    assert proc.returncode == 0, proc.stdout
    for rank in lines:
        assert not [line for line in rank if line.startswith("FAIL")], proc.stdout
        assert len([line for line in rank if line.startswith("PASS")]) == passes, proc.stdout


@pytest.mark.parametrize("case, broken, failure", [
    ("allgather", "nosignal", "FAIL put all-gather: every signal arrives"),
    ("ring", "nosignal", "FAIL ring round 0: the signal arrives"),
    ("allgather", "noflush", "FAIL get all-gather: every block landed by the flush"),
])
def test_a_dropped_signal_or_flush_fails(case, broken, failure):
    proc, lines = run(case, broken, timeout_ms=1500)
    assert proc.returncode != 0, proc.stdout
    # The ranks whose peers are on another node see it.
    assert any(line.startswith(failure) for rank in lines for line in rank), proc.stdout
