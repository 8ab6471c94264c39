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


def launcher(*argv: str, env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    env = dict(os.environ if env is None else env,
               PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""))
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
    """Each rank gets the signal once (its handler runs once: a second copy
    would interrupt what the first started), and no rank outlives it."""
    script = tmp_path / "sleep.py"
    script.write_text(textwrap.dedent(f"""\
        import os, pathlib, signal, sys, time
        got = []
        signal.signal(signal.{signum.name}, lambda signum, frame: got.append(signum))
        pathlib.Path({str(tmp_path)!r}, os.environ["TLE_LAUNCH_RANK"]).write_text(str(os.getpid()))
        deadline = time.monotonic() + 60
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # a second copy of the signal would arrive here
        print("stopped by", signal.Signals(got[0]).name, "x" + str(len(got)), flush=True)
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
    assert sorted(out.splitlines()) == [f"[rank{r}]: stopped by {signum.name} x1" for r in range(3)], out
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


# -- --device cuda: ranks sharing one GPU in one process (docs/gpu.md). What
# runs here is the launcher's side; python/tests_gpu/shared_gpu.py runs the
# kernels on a GPU.

def test_device_cuda_runs_the_program_once_with_the_ranks_it_shares(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import os\nfor k in ('TLE_LAUNCH_SHARED_RANKS', 'TLE_LAUNCH_DEVICE', 'TLE_LAUNCH_RANK', "
                      "'TRITON_INTERPRET', 'TLE_LAUNCH_CHECK_DIR'):\n    print(k, os.environ.get(k))\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = launcher("--device", "cuda", "--ranks", "3", str(script), env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.splitlines() == ["[rank0]: TLE_LAUNCH_SHARED_RANKS 3", "[rank0]: TLE_LAUNCH_DEVICE cuda",
                                "[rank0]: TLE_LAUNCH_RANK None", "[rank0]: TRITON_INTERPRET None",
                                "[rank0]: TLE_LAUNCH_CHECK_DIR None"], out


@pytest.mark.parametrize("options, env_extra, says", [
    (["--nodes", "2", "--ranks", "2"], {}, "simulated nodes (--nodes) are the emulator's"),
    (["--ranks", "1"], {}, "--device cuda --ranks 1 has nothing to share"),
    (["--ranks", "2", "--no-python"], {}, "a C or C++ program makes them with tleCommInitAll"),
    (["--ranks", "2"], {"TRITON_INTERPRET": "1"}, "but TRITON_INTERPRET is set"),
])
def test_device_cuda_refuses_what_one_gpu_cannot_do(tmp_path, options, env_extra, says):
    script = tmp_path / "never.py"
    script.write_text("print('the program ran')\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(env_extra)
    proc = launcher("--device", "cuda", *options, str(script), env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, (out, err)
    assert says in err, err
    assert "the program ran" not in out + err


def test_resident_ctas_takes_the_tightest_limit():
    from tle.launch import resident_ctas
    h200 = dict(sms=132, threads_per_sm=2048, regs_per_sm=65536, shared_per_sm=233472)
    # 4 warps, 32 registers: 16 CTAs per SM by threads and by registers.
    assert resident_ctas(**h200, num_warps=4, regs_per_thread=32, shared_per_cta=0) == 132 * 16
    # 255 registers a thread: one CTA of 8 warps per SM.
    assert resident_ctas(**h200, num_warps=8, regs_per_thread=255, shared_per_cta=0) == 132
    # 100 KiB of shared memory: 2 per SM.
    assert resident_ctas(**h200, num_warps=1, regs_per_thread=16, shared_per_cta=100 << 10) == 132 * 2
    # One warp, nothing else: the 32 CTA slots of an SM.
    assert resident_ctas(**h200, num_warps=1, regs_per_thread=0, shared_per_cta=0) == 132 * 32


def test_check_co_resident_refuses_grids_that_cannot_meet():
    from tle.launch import check_co_resident
    check_co_resident(2, 66, 132)
    with pytest.raises(ValueError, match=r"2 ranks sharing one GPU cannot run k\[200\] side by side: 2 x 200 CTAs, "
                       r"but the GPU holds at most 264 .* launch at most 132 CTAs per rank"):
        check_co_resident(2, 200, 264, "k[200]")
