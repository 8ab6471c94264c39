# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE_DEBUG and TLE_DEBUG_FILE across processes: a 2-rank job started by
``python -m tle.launch`` (one process per rank, the socket bootstrap) logs at
INFO, into one file per process (``%p``), what a user debugging the job
checks first: the timeouts, the bootstrap, the communicator and its
buffers, each line prefixed with its rank."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")


PYTHON_DIR = Path(__file__).resolve().parents[1]
EXAMPLE = PYTHON_DIR / "examples" / "allgather.py"


pytestmark = pytest.mark.usefixtures("host_library")


def run_example(tmp_path: Path, level: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning",
               TLE_DEBUG_FILE=str(tmp_path / "tle.%h.%p.log"))
    env.pop("TLE_DEBUG", None)
    if level is not None:
        env["TLE_DEBUG"] = level
    proc = subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", "2", str(EXAMPLE)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout
    return proc


def test_info_log_of_a_two_process_job(tmp_path):
    run_example(tmp_path, "info")
    logs = {}
    for path in tmp_path.glob("tle.*.log"):
        pid = int(path.name.split(".")[-2])
        logs[pid] = path.read_text()
    # One file per rank process that loaded libtle.
    assert len(logs) == 2, logs
    ranks = set()
    for pid, text in logs.items():
        lines = text.splitlines()
        assert all(re.match(rf"[^:]+:{pid}:\d+ (\[rank \d\] )?TLE (INFO|WARN|TRACE) ", line) for line in lines), text
        created = [re.search(r"\[rank (\d)\] TLE INFO communicator created: rank \1 of 2 \(one process per rank\), "
                             r"backend emulator, \d+ barrier slots, inbox \d+ bytes per rank \(memory files\), signal words \d+, device wait timeout "
                             r"\d+ ms", line) for line in lines]
        created = [m for m in created if m]
        assert len(created) == 1, text
        rank = int(created[0].group(1))
        ranks.add(rank)
        joined = "all 2 ranks joined" if rank == 0 else "joined rank 0"
        assert re.search(rf"\[rank {rank}\] TLE INFO bootstrap: {joined} in \d+ ms", text), text
        assert re.search(r"TLE INFO timeouts: device wait \d+ ms \(", text), text
        assert re.search(rf"\[rank {rank}\] TLE INFO buffer mapped: \d+ bytes on each of 2 ranks", text), text
        assert "TLE TRACE" not in text
    assert ranks == {0, 1}


def test_no_log_without_tle_debug(tmp_path):
    proc = run_example(tmp_path, None)
    assert list(tmp_path.glob("tle.*.log")) == []
    assert " TLE INFO " not in proc.stdout
