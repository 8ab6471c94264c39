# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""``python -m tle.launch`` as a user and a batch system meet it: the ranks'
output behind rank prefixes with one failure shown in full and the others
summarized, SIGTERM and SIGHUP passed on to the ranks and waited for, no
rank outliving a launcher killed with SIGKILL, and ``--no-python`` for
programs that are not Python. Plain Python (or shell) ranks, no kernels:
what is tested is the launcher.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures("host_library")


def launcher(*argv: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "tle.launch", *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_dead(pids: list[int], limit: float = 10.0) -> list[int]:
    """The pids still alive after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_one_failure_on_four_ranks_is_one_report(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(textwrap.dedent("""\
        import os, time
        rank = int(os.environ["TLE_LAUNCH_RANK"])
        print(f"started {rank}", flush=True)
        time.sleep(0.5 * (rank != 2))  # rank 2 fails first
        def deep(n):
            return deep(n - 1) if n else 1 / 0
        deep(5)
        """))
    proc = launcher("--ranks", "4", "--grace", "10", str(script))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert sorted(out.splitlines()) == [f"[rank{r}]: started {r}" for r in range(4)]
    lines = err.splitlines()
    # Every line of the ranks' stderr is behind its rank's prefix.
    assert all(line.startswith(("[rank", "tle.launch: ")) for line in lines), err
    # The first failure in full, once; the other three as one line each.
    assert sum("Traceback (most recent call last)" in line for line in lines) == 1, err
    assert [line for line in lines if line.startswith("[rank2]: ")][0] == \
        "[rank2]: Traceback (most recent call last):", err
    summaries = [line for line in lines if "traceback of" in line and "not shown" in line]
    assert sorted(line[:8] for line in summaries) == ["[rank0]:", "[rank1]:", "[rank3]:"], err
    assert all("ZeroDivisionError: division by zero" in line for line in summaries), err
    assert len(lines) < 20, err
    assert lines[-1].startswith("tle.launch: rank 2 failed first"), err
    assert "ranks 0-1, 3 failed too" in lines[-1], err
    # --tracebacks all: every rank's traceback.
    proc = launcher("--ranks", "2", "--tracebacks", "all", str(script))
    _, err = proc.communicate(timeout=60)
    assert err.count("Traceback (most recent call last)") == 2, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_launcher_stops_every_rank(tmp_path, signum):
    script = tmp_path / "sleep.py"
    script.write_text(textwrap.dedent(f"""\
        import os, pathlib, signal, sys, time
        def stop(signum, frame):
            print("stopped by", signal.Signals(signum).name, flush=True)
            sys.exit(0)
        signal.signal(signal.{signum.name}, stop)
        pathlib.Path({str(tmp_path)!r}, os.environ["TLE_LAUNCH_RANK"]).write_text(str(os.getpid()))
        time.sleep(60)
        """))
    proc = launcher("--ranks", "3", str(script))
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("[0-9]"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # every rank in its sleep, the handler installed
    pids = [int(p.read_text()) for p in tmp_path.glob("[0-9]")]
    assert len(pids) == 3
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, err
    assert sorted(out.splitlines()) == [f"[rank{r}]: stopped by {signum.name}" for r in range(3)], out
    assert f"tle.launch: {signum.name} received" in err
    assert wait_dead(pids, 5.0) == []


def test_no_rank_outlives_a_killed_launcher(tmp_path):
    script = tmp_path / "sleep.py"
    script.write_text(textwrap.dedent(f"""\
        import os, pathlib, time
        pathlib.Path({str(tmp_path)!r}, os.environ["TLE_LAUNCH_RANK"]).write_text(str(os.getpid()))
        time.sleep(60)
        """))
    proc = launcher("--ranks", "2", str(script))
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("[0-9]"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p.read_text()) for p in tmp_path.glob("[0-9]")]
    proc.kill()  # SIGKILL: no handler of the launcher runs
    proc.communicate(timeout=30)
    assert wait_dead(pids, 10.0) == []


def test_no_python_runs_the_program_itself():
    proc = launcher("--ranks", "2", "--no-python", "/bin/sh", "-c", 'echo "$TLE_LAUNCH_RANK of $TLE_LAUNCH_SIZE"')
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert sorted(out.splitlines()) == ["[rank0]: 0 of 2", "[rank1]: 1 of 2"]
    proc = launcher("--ranks", "2", "--no-python", "/nonexistent/program")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 127 and "cannot run /nonexistent/program" in err, err
