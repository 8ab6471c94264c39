# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The job's report (``Communicator.job_error``, ``tleCommGetJobError``) on
CPU ranks, one process each under Triton's interpreter: a rank that skips a
barrier, a signal never sent, a rank whose process dies. docs/runtime.md,
"The job's report"; docs/debugging.md, "A hang on GPUs".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")
pytest.importorskip("triton")

from tle import runtime  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]
RANKS = PYTHON_DIR / "tests" / "job_ranks.py"

pytestmark = pytest.mark.usefixtures("host_library")


def run(case: str) -> list[dict | None]:
    """Both ranks of `case`; each rank's report (None for one that died)."""
    uid = runtime.get_unique_id().hex()
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning")
    procs = [subprocess.Popen([sys.executable, str(RANKS), case, str(r), uid], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(2)]
    reports = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            pytest.fail(f"still running after 120 s (a hang):\n{out}")
        assert p.returncode == 0, out
        lines = [line[4:] for line in out.splitlines() if line.startswith("JOB ")]
        reports.append(json.loads(lines[0]) if lines else None)
    return reports


def test_skipped_barrier_names_the_rank_that_left():
    r0, r1 = run("skip")
    assert r0 == r1  # one exchange, one picture
    assert r0["failed"] and r0["culprit"] == 1, r0["report"]
    assert r0["ranks"][0]["fate"] == "waiting" and r0["ranks"][0]["slot"] == 3
    assert r0["ranks"][0]["missing"] == [1]
    assert r0["ranks"][1]["fate"] == "exited"
    assert "rank 1 never arrived at slot 3 epoch 1" in r0["why"], r0["why"]


def test_signal_never_sent_names_the_word():
    r0, _ = run("signal")
    assert r0["culprit"] == 1, r0["report"]
    assert r0["ranks"][0]["wait"] == "signal" and r0["ranks"][0]["signal"] == 3
    assert "signal 3 of rank 0 never reached 1 (it holds 0)" in r0["why"], r0["why"]


def test_killed_rank_is_dead():
    r0, r1 = run("kill")
    assert r1 is None
    assert r0["culprit"] == 1 and r0["ranks"][1]["fate"] == "dead", r0["report"]
    assert "rank 1 died" in r0["why"], r0["why"]
