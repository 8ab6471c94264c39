# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The race and slot checks of Triton kernels on CPU ranks (python -m
tle.launch, runtime/host/emu/InterpCheck.h): one kernel per bug class on 2
and 4 ranks (race_ranks.py), each of which must end with its report, the
kernel's lines named, and exit status 66; the same exchanges done right
must stay clean; --no-check turns the checks off.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")

from tle import launch  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]
RANKS = PYTHON_DIR / "tests" / "race_ranks.py"


def _line(name: str) -> int:
    """The line of race_ranks.py marked "# line: name"."""
    for number, text in enumerate(RANKS.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# line: {name}"):
            return number
    raise AssertionError(f"no line marked {name!r} in {RANKS}")


def _launch(n: int, case: str, *options: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", str(n), "--grace", "10", *options,
                           str(RANKS), case], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=240)


def _site(name: str) -> str:
    return f"race_ranks.py:{_line(name)}"


RACES = {
    # case: the two lines the race report must name
    "relaxed": ("put", "read"),
    "missing_wait": ("put", "read"),
    "wrong_peer": ("signal put", "signal read"),
    "read_early": ("signal put", "early read"),
    "flag_relaxed": ("flag put", "flag read"),
}


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("case", sorted(RACES))
def test_race_reported(case: str, n: int) -> None:
    proc = _launch(n, case)
    out = proc.stdout
    assert proc.returncode == launch.CHECK_STATUS, out
    assert re.search(r"tle\.launch: launch 1: data race on symmetric buffer 'buffer 0 float32\[32\]' \(rank \d+'s "
                     r"copy\) at byte offset 0:", out), out
    write, read = RACES[case]
    assert re.search(rf"write by rank \d+ block 0 thread 0, 64 bytes at offset 0, at \S*{re.escape(_site(write))}\n",
                     out), out
    assert re.search(rf"read by rank \d+ block 0 thread 0, 64 bytes at offset 0, at \S*{re.escape(_site(read))}\n",
                     out), out
    assert "found 1 misuse (above; exit status 66)" in out, out


@pytest.mark.parametrize("n", [2, 4])
def test_two_programs_on_one_slot(n: int) -> None:
    proc = _launch(n, "two_programs")
    out = proc.stdout
    assert proc.returncode == launch.CHECK_STATUS, out
    site = re.escape(_site("slot"))
    assert re.search(r"launch 1: barrier misuse: two groups use slot 0 of rank \d+ and nothing orders them:\n"
                     rf".*block 0 \(group block\) left it at \S*{site}\n"
                     rf".*block 1 \(group block\) enters it with sync at \S*{site}", out), out


def test_a_flagtree_barrier_is_named_by_the_kernels_line() -> None:
    """tle.flagtree's builtins are glue, as tle.language's: the slot report
    names the kernel's line that called distributed_barrier."""
    proc = _launch(2, "flagtree_two_programs")
    out = proc.stdout
    assert proc.returncode == launch.CHECK_STATUS, out
    site = re.escape(_site("flagtree slot"))
    assert re.search(rf"block 0 \(group block\) left it at \S*{site}\n"
                     rf".*block 1 \(group block\) enters it with sync at \S*{site}", out), out
    assert "flagtree/language.py" not in out, out


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("case", ["barrier", "signal", "flag"])
def test_correct_kernels_clean(case: str, n: int) -> None:
    proc = _launch(n, case)
    assert proc.returncode == 0, proc.stdout
    assert "misuse" not in proc.stdout and "data race" not in proc.stdout, proc.stdout
    assert proc.stdout.count(f": {case} done") == n, proc.stdout


def test_no_check() -> None:
    proc = _launch(2, "relaxed", "--no-check")
    assert proc.returncode == 0, proc.stdout
    assert "data race" not in proc.stdout, proc.stdout


def test_exit_status_only_without_failure() -> None:
    """A failed rank's status wins over the checks' (their report still comes)."""
    assert launch.LaunchResult([0, 0], None, False, misuses=["x"]).returncode == launch.CHECK_STATUS
    assert launch.LaunchResult([0, 3], 1, False, misuses=["x"]).returncode == 3
    assert launch.LaunchResult([0, 0], None, False, misuses=[]).returncode == 0
    assert launch.LaunchResult([0, 0], None, False).returncode == 0
