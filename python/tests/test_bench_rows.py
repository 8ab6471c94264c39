# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmark's tlec row off the GPU: bench/kernels/barrier_loop.mlir's
bookkeeping (a launch counter per block, one time per block and launch)
run on the emulator through tlerun --repeat and --dump, and read back by
bench/tlec_bench.py. The %globaltimer reads (GPU only) become constants 2 ms
apart, so every launch must come out as 2 ms / 20,000 rounds = 0.1 µs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import tlec_bench  # noqa: E402

TIMER = 'llvm.inline_asm has_side_effects "mov.u64 $0, %globaltimer;", "=l" : () -> i64'


@pytest.fixture
def tlerun() -> Path:
    build = Path(os.environ.get("TLE_BUILD_DIR", REPO / "build"))
    path = build / "bin" / "tlerun"
    if not path.exists():
        pytest.skip(f"{path} not built")
    return path


def host_variant(tmp_path: Path) -> Path:
    src = (REPO / "bench" / "kernels" / "barrier_loop.mlir").read_text()
    assert src.count(TIMER) == 2, "the kernel reads the timer twice"
    src = src.replace(TIMER, "arith.constant 1000000 : i64", 1)
    src = src.replace(TIMER, "arith.constant 3000000 : i64", 1)
    assert "arith.constant 20000 : index" in src
    src = src.replace("arith.constant 20000 : index", "arith.constant 3 : index")
    out = tmp_path / "barrier_loop_host.mlir"
    out.write_text(src)
    return out


def test_every_launch_lands_in_its_own_row(tlerun, tmp_path):
    ctas, reps = 3, 4
    p = subprocess.run(
        [str(tlerun), str(host_variant(tmp_path)), "--kernel", "barrier_loop", "--ranks", "2",
         "--grid", str(ctas), "--block", "4", "--repeat", str(reps),
         "--buffer", f"times:i64:{ctas * (reps + 1)}", "--dump", "times"],
        capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    times = tlec_bench.launch_times_us(p.stdout.splitlines(), ctas, reps)
    assert times == pytest.approx([0.1] * reps)
    line = tlec_bench.result_line(ctas, times)
    assert line == "RESULT,latency,tle-tlec,3,0.1000,n=4;min=0.1000;max=0.1000"


def test_unfinished_launches_are_refused():
    # Rank 1's block 1 ran one launch fewer: no figure may come out.
    good = '{"rank": 0, "buffer": "times", "values": [2, 2, 5, 5, 7, 7]}'
    short = '{"rank": 1, "buffer": "times", "values": [2, 1, 5, 5, 7, 0]}'
    with pytest.raises(ValueError, match="counters"):
        tlec_bench.launch_times_us([good, short], 2, 2)
    with pytest.raises(ValueError, match="2 ranks"):
        tlec_bench.launch_times_us([good], 2, 2)


def test_the_slowest_block_of_any_rank_counts():
    r0 = '{"rank": 0, "buffer": "times", "values": [1, 1, 20000000, 40000000]}'
    r1 = '{"rank": 1, "buffer": "times", "values": [1, 1, 60000000, 10000000]}'
    assert tlec_bench.launch_times_us([r0, r1], 2, 1) == [3.0]
