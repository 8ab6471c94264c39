# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Triton kernels that use TLE, run on CPU ranks by Triton's interpreter
(TRITON_INTERPRET=1), no GPU and no PyTorch.

Multi-rank tests start 2 and 4 processes with TLE's launcher (python -m
tle.launch) and check what they print: the all-gather example, every
configuration of the GPU neighbour exchange (python/tests_gpu/kernels.py,
through interp_ranks.py), the timeout report when a rank skips a barrier,
and a kernel that deadlocks. In-process tests check the builtins one by
one on a communicator of this process: values, pointers, device errors
raised with the GPU's record and message, and argument errors.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="Triton's interpreter needs NumPy (python/requirements-test.txt)")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tle  # noqa: E402
import tle.language as tlx  # noqa: E402
from tle import launch  # noqa: E402
from tle.cpu import Communicator, Tensor  # noqa: E402
from tle.runtime import Backend, Comm, Result, TLEError, get_unique_id  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]
RANKS = PYTHON_DIR / "tests" / "interp_ranks.py"
EXAMPLE = PYTHON_DIR / "examples" / "allgather.py"
#: The barrier deadline of the failure tests, and how much later than it a
#: report may come (process start-up on a loaded 2-core machine included).
TIMEOUT_MS = 2000
SLACK_S = 20.0


pytestmark = pytest.mark.usefixtures("host_library")


def run_ranks(n: int, *argv: str, limit: float = 120.0) -> tuple[subprocess.CompletedProcess, float]:
    """``python -m tle.launch --ranks n argv...`` with its output; fails the
    test if it outlives ``limit`` seconds (a hang)."""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TRITON_INTERPRET="1", PYTHONWARNINGS="ignore::DeprecationWarning")
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "tle.launch", "--ranks", str(n), "--grace", "10", *argv],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=limit)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"still running after {limit:.0f} s (a hang):\n{e.stdout}")
    return proc, time.monotonic() - start


def rank_lines(output: str, rank: int) -> list[str]:
    """What ``rank`` printed, one message per "[rank r] " prefix (ranks share
    the launcher's output, so one line may hold two ranks' messages)."""
    prefix = f"[rank {rank}] "
    chunks = re.split(r"(?=\[rank \d+\] )", output)
    return [c[len(prefix):].split("\n")[0].strip() for c in chunks if c.startswith(prefix)]


@pytest.mark.parametrize("n", [2, 4])
def test_allgather_example(n):
    proc, _ = run_ranks(n, str(EXAMPLE))
    assert proc.returncode == 0, proc.stdout
    for rank in range(n):
        assert f"rank {rank} of {n}: all-gather OK" in proc.stdout, proc.stdout


@pytest.mark.parametrize("n", [2, 3])
def test_ag_gemm_example(n):
    # The fused all-gather + GEMM (push, per-chunk signals, waits in the
    # GEMM, release words), two calls, each checked against NumPy. The last
    # rank starts late, so the others' GEMMs find its rows missing unless
    # they wait for its signals (without the wait rank 0 computes WRONG).
    proc, _ = run_ranks(n, str(PYTHON_DIR / "examples" / "ag_gemm.py"), "--m", "128", "--k", "32", "--n", "48",
                        "--late", "2")
    assert proc.returncode == 0, proc.stdout
    for rank in range(n):
        assert f"rank {rank} of {n}: ag_gemm 128x32x48 OK" in proc.stdout, proc.stdout


@pytest.mark.parametrize("n", [2, 4])
def test_gpu_exchange_kernel(n):
    proc, _ = run_ranks(n, str(RANKS), "exchange", "--iters", "2", "--launches", "2")
    assert proc.returncode == 0, proc.stdout
    for rank in range(n):
        lines = rank_lines(proc.stdout, rank)
        cases = [line for line in lines if line.startswith(("PASS exchange [", "FAIL exchange ["))]
        # Every GPU configuration, plus the grid group's refusal over 8 programs.
        assert len(cases) == 7 and all(c.startswith("PASS") for c in cases), proc.stdout
        assert any("[grid, 8 programs]: refused under the interpreter" in c for c in cases)
        assert any(c.startswith("PASS exchange [block, 100 programs") for c in cases)
        assert any(line.startswith("PASS exchange: 7 of 7 cases") for line in lines)


def check_reports(proc, elapsed: float, n: int, reporters: dict[int, tuple[int, list[int]]]) -> None:
    """Every rank in ``reporters`` (rank -> (slot, missing peers)) ended with
    TLE's timeout report, within the deadline."""
    assert proc.returncode == 3, proc.stdout  # the first rank to fail reported (interp_ranks.REPORTED)
    assert elapsed < TIMEOUT_MS / 1000 + SLACK_S, proc.stdout
    for rank, (slot, missing) in reporters.items():
        text = " ".join(rank_lines(proc.stdout, rank))
        listed = ",".join(map(str, missing))
        # The GPU's message, word for word (docs/triton.md, Errors).
        assert re.search(rf"code=TIMEOUT device error: timed out: rank {rank} block 0 thread 0: "
                         rf"tle.distributed_barrier \(tleTritonBarrier\): barrier wait timed out "
                         rf"after \d+ ms on slot {slot} epoch 1; missing peers: {listed}", text), proc.stdout
        record = re.search(rf"record: rank={rank} slot={slot} epoch=1 missing_peers=\[([\d, ]*)\] elapsed_ms=(\d+)",
                           text)
        assert record and record[1] == ", ".join(map(str, missing)), proc.stdout
        assert TIMEOUT_MS <= int(record[2]) < TIMEOUT_MS + 1000, proc.stdout
        after = float(re.search(r"TLE error report after ([\d.]+) s", text)[1])
        assert TIMEOUT_MS / 1000 <= after < TIMEOUT_MS / 1000 + 5, proc.stdout
        assert "the barrier returned" not in text


@pytest.mark.parametrize("n", [2, 4])
def test_timeout_report_names_the_rank_that_skipped(n):
    proc, elapsed = run_ranks(n, str(RANKS), "timeout", "--timeout-ms", str(TIMEOUT_MS))
    check_reports(proc, elapsed, n, {r: (0, [1]) for r in range(n) if r != 1})
    assert "done" in rank_lines(proc.stdout, 1), proc.stdout


def test_a_long_wait_says_so_before_its_deadline():
    # Off the emulator's scheduler nothing can tell a deadlock: a wait that
    # lasts says so on stderr at 2 s, well before a 4 s deadline.
    proc, elapsed = run_ranks(2, str(RANKS), "timeout", "--timeout-ms", "4000")
    assert proc.returncode == 3, proc.stdout
    progress = [line for line in proc.stdout.splitlines() if "has waited" in line]
    assert progress, proc.stdout
    assert re.fullmatch(r"\[rank0\]: tle: rank 0 program \(0, 0, 0\) has waited 2 s in barrier wait on slot 0 for "
                        r"epoch 1 \(not arrived yet: ranks 1\); it fails at its deadline, 4 s "
                        r"\(TLE_BARRIER_TIMEOUT_MS\)", progress[0]), progress


def test_the_per_barrier_benchmark_runs():
    """docs/triton.md's command (a few barriers: the figure is the docs',
    not a test's)."""
    proc, _ = run_ranks(2, str(RANKS), "bench", "--iters", "50", "--repeats", "2")
    assert proc.returncode == 0, proc.stdout
    for rank in range(2):
        lines = [x for x in rank_lines(proc.stdout, rank) if x.startswith("per-barrier time under the interpreter: ")]
        assert lines and "of 50 barriers" in lines[0], proc.stdout


@pytest.mark.parametrize("n", [2, 4])
def test_deadlocked_kernel_is_reported_within_the_timeout(n):
    proc, elapsed = run_ranks(n, str(RANKS), "deadlock", "--timeout-ms", str(TIMEOUT_MS))
    check_reports(proc, elapsed, n, {r: (r, [q for q in range(n) if q != r]) for r in range(n)})


def test_launcher_reports_the_first_failure_and_stops_the_rest():
    script = ("import os, sys, time\n"
              "rank = int(os.environ['TLE_LAUNCH_RANK'])\n"
              "assert os.environ['WORLD_SIZE'] == os.environ['TLE_LAUNCH_SIZE'] == '2'\n"
              "assert len(bytes.fromhex(os.environ['TLE_LAUNCH_UNIQUE_ID'])) == 128\n"
              "time.sleep(60) if rank == 0 else sys.exit(7)\n")
    start = time.monotonic()
    result = launch.run(["-c", script], 2, grace=0.5)
    assert time.monotonic() - start < 30
    assert result.first_failure == 1 and result.returncodes[1] == 7
    assert result.returncodes[0] is not None and result.returncodes[0] < 0  # stopped after the grace
    assert result.returncode == 7
    timed_out = launch.run(["-c", "import time; time.sleep(60)"], 2, timeout=0.5)
    assert timed_out.timed_out and timed_out.returncode == launch.TIMEOUT_STATUS
    assert launch.run(["-c", "pass"], 3).returncode == 0


# In-process tests: kernels are made interpreted functions inside the test,
# with TRITON_INTERPRET=1 set for its duration.

@pytest.fixture
def interpret(monkeypatch):
    """``triton.jit`` as it is under TRITON_INTERPRET=1."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    return triton.jit


def rank_and_pointers(comm, mem, out, peer, offset):
    rank = tlx.intra_rank(comm)
    size = tlx.intra_size(comm)
    tl.store(out + 0, rank)
    tl.store(out + 1, size)
    tl.store(out + 2, tlx.local_pointer(mem, offset))
    tl.store(out + 3, tlx.intra_pointer(mem, offset, peer))
    dst = tlx.intra_pointer(mem, 0, peer, dtype=tl.int32)
    tl.store(dst + tl.arange(0, 8), rank * 100 + tl.arange(0, 8))


@pytest.fixture
def pair():
    """Two ranks of one communicator in this process, one int32 buffer."""
    comms = Comm.init_all(2, backend=Backend.EMULATOR, n_barriers=8, timeout_ms=300)
    mems = Comm.alloc_all(comms, 64)
    yield comms, mems
    for m in mems:
        m.free()
    for c in comms:
        c.destroy()


def array(mem, dtype=np.int32):
    """A rank's copy of a symmetric buffer as a NumPy array."""
    return np.frombuffer((ctypes.c_char * mem.nbytes).from_address(mem.local_ptr), dtype=dtype)


def test_values_and_pointers(interpret, pair):
    comms, mems = pair
    kernel = interpret(rank_and_pointers)
    out = Tensor(np.zeros(4, np.int64))
    kernel[(1,)](comms[0].dev_comm, mems[0].dev_handle, out, 1, 16)
    assert out.numpy().tolist() == [0, 2, mems[0].local_ptr + 16, mems[1].local_ptr + 16]
    # The store through intra_pointer landed in rank 1's copy.
    assert array(mems[1])[:8].tolist() == list(range(8))
    assert not array(mems[0]).any()


def barrier_per_program(comm, STRIDE: tl.constexpr):
    tlx.distributed_barrier(comm, index=tl.program_id(0) * STRIDE)


def barrier_default_slot(comm):
    tlx.distributed_barrier(comm)


def test_a_default_slot_past_n_barriers_names_the_grids_need(interpret):
    # The default slot is the program id: a grid of 80 programs on 64 slots
    # needs n_barriers=80, which the message says with the number.
    kernel = interpret(barrier_default_slot)
    one = Comm.init_all(1, backend=Backend.EMULATOR, n_barriers=64)
    try:
        with pytest.raises(Exception) as info:
            kernel[(80,)](one[0].dev_comm)
        e = TLEError.find(info.value)
        assert e is not None and e.code is Result.INDEX_OUT_OF_RANGE, info.value
        assert e.info.slot == 64 and e.info.n_barriers == 64
        assert str(e).endswith("tle.distributed_barrier (tleTritonBarrier): barrier slot 64 out of range (nBarriers 64): "
                               "the default slot is the program id; this grid has 80 programs: pass n_barriers=80 "
                               "(or more) to the communicator, or an index < 64"), str(e)
    finally:
        one[0].destroy()


def test_a_timed_out_wait_names_its_python_line(interpret, pair):
    # Rank 1 never arrives: rank 0's record carries the site id of the
    # barrier's Python line (tleTritonBarrierAt), and the job's report
    # names the line, which tle.language registered.
    comms, _ = pair
    kernel = interpret(barrier_per_program)
    with pytest.raises(Exception) as info:
        kernel[(1,)](comms[0].dev_comm, STRIDE=1)
    assert TLEError.find(info.value).code is Result.TIMEOUT
    report = comms[0].job_error()
    line = barrier_per_program.__code__.co_firstlineno + 1
    where = f"{os.path.relpath(__file__)}:{line}"
    assert report["ranks"][0]["site"] == where, report
    assert f"(tleTritonBarrier) at {where} on slot 0 for epoch 1" in report["report"], report["report"]
    assert report["culprit"] == 1


def counter_never(comm):
    tlx.counter_wait(comm, 2, 1)


def test_a_timed_out_counter_wait_names_its_python_line(interpret, pair):
    # No put ever adds to counter 2: the wait's record carries its Python
    # line (tleTritonWaitCounterAt), as the barrier's and the signal's do.
    comms, _ = pair
    with pytest.raises(Exception) as info:
        interpret(counter_never)[(1,)](comms[0].dev_comm)
    assert TLEError.find(info.value).code is Result.TIMEOUT
    report = comms[0].job_error()
    where = f"{os.path.relpath(__file__)}:{counter_never.__code__.co_firstlineno + 1}"
    assert report["ranks"][0]["site"] == where, report


def bad_peer(mem, peer):
    tlx.intra_pointer(mem, 0, peer)


def test_device_errors_raise_the_gpu_record(interpret, pair):
    comms, mems = pair
    kernel = interpret(barrier_per_program)
    one = Comm.init_all(1, backend=Backend.EMULATOR, n_barriers=8)
    try:
        # Programs 0 and 1 pass (slots 0 and 4, no peers); program 2 asks for slot 8.
        with pytest.raises(Exception) as info:
            kernel[(3,)](one[0].dev_comm, STRIDE=4)
        e = TLEError.find(info.value)
        assert e is not None and e.code is Result.INDEX_OUT_OF_RANGE, info.value
        assert str(e) == ("device error: barrier slot or signal index out of range: rank 0 block 2 thread 0: "
                          "tle.distributed_barrier (tleTritonBarrier): barrier slot 8 out of range (nBarriers 8): "
                          "create the communicator with nBarriers (n_barriers) > 8, or pass an index < 8")
        assert e.info.block == 2 and e.info.slot == 8 and e.info.n_barriers == 8
        assert one[0].get_error() is None  # read and cleared, as Communicator.synchronize does
    finally:
        one[0].destroy()
    # Rank 1 of the pair never arrives: rank 0 reports it after its 300 ms deadline.
    start = time.monotonic()
    with pytest.raises(Exception) as info:
        kernel[(1,)](comms[0].dev_comm, STRIDE=1)
    assert 0.3 <= time.monotonic() - start < 10
    e = TLEError.find(info.value)
    assert e.code is Result.TIMEOUT and e.info.missing_peers == (1,) and e.info.rank == 0
    # The deadline passes at the first poll after 300 ms, which a loaded
    # machine may run a few milliseconds late.
    assert re.fullmatch(r"rank 0 block 0 thread 0: tle.distributed_barrier \(tleTritonBarrier\): "
                        r"barrier wait timed out after 3\d\d ms on slot 0 epoch 1; "
                        r"missing peers: 1", e.info.message), e.info.message
    with pytest.raises(Exception) as info:
        interpret(bad_peer)[(1,)](mems[0].dev_handle, 5)
    e = TLEError.find(info.value)
    assert e.code is Result.INVALID_ARGUMENT and e.info.rank == 0, info.value
    with pytest.raises(Exception) as info:
        interpret(bad_peer)[(1,)](0, 0)
    assert TLEError.find(info.value).code is Result.INVALID_COMM


def grouped_barrier(comm, GROUP: tl.constexpr):
    tlx.distributed_barrier(comm, group_kind=GROUP)


def barrier_with(comm, SPACE: tl.constexpr, KIND: tl.constexpr, ORDER: tl.constexpr):
    tlx.distributed_barrier(comm, space=SPACE, barrier_kind=KIND, order=ORDER)


@pytest.mark.parametrize("kwargs, grid, message", [
    ({"GROUP": "thread"}, 1, r"group_kind 'thread' is not available in Triton"),
    ({"GROUP": "grid"}, 4, r"group_kind 'grid' under Triton's interpreter .* needs a grid of one program: .*"
     r"this launch has 4 programs"),
    ({"GROUP": "cta"}, 1, r"unknown group_kind 'cta'"),
])
def test_argument_errors_as_when_compiling(interpret, kwargs, grid, message):
    one = Comm.init_all(1, backend=Backend.EMULATOR)
    try:
        with pytest.raises(Exception) as info:
            interpret(grouped_barrier)[(grid,)](one[0].dev_comm, **kwargs)
        assert isinstance(info.value.__cause__, ValueError), info.value
        assert re.search(message, str(info.value.__cause__)), info.value.__cause__
    finally:
        one[0].destroy()


def test_every_kind_and_order_runs_on_one_rank(interpret):
    """A lone rank's barrier has no peer to wait for: every encoding the
    rules allow passes the library's checks, the two they refuse (arrive +
    acquire, wait + release: tle/rules.def) are refused before the kernel
    runs, and warp, block and a one-program grid run."""
    one = Comm.init_all(1, backend=Backend.EMULATOR)
    refused = {("arrive", "acquire"), ("wait", "release")}
    try:
        # Every spelling of docs/abi.md, not tle.language's own list.
        for kind in ("arrive", "wait", "sync"):
            for order in ("relaxed", "acquire", "release", "acq_rel", "seq_cst"):
                launch = interpret(barrier_with)[(2,)]
                if (kind, order) in refused:
                    with pytest.raises(Exception, match="cannot (acquire|release)"):
                        launch(one[0].dev_comm, SPACE="device", KIND=kind, ORDER=order)
                    continue
                launch(one[0].dev_comm, SPACE="device", KIND=kind, ORDER=order)
        for group in ("warp", "block", "grid"):
            interpret(grouped_barrier)[(1,)](one[0].dev_comm, GROUP=group)
        assert one[0].get_error() is None
    finally:
        one[0].destroy()


def test_extern_libs_is_optional_under_the_interpreter(monkeypatch, tmp_path):
    monkeypatch.setenv("TLE_DEVICE_BC", str(tmp_path / "missing.bc"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert tle.extern_libs() == {}
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(FileNotFoundError):
        tle.extern_libs()


def test_builtins_outside_a_kernel_still_say_so():
    with pytest.raises(ValueError, match="Did you forget to add @triton.jit"):
        tlx.intra_rank(0)


def test_from_launcher_needs_the_launcher_and_the_interpreter(monkeypatch):
    monkeypatch.delenv("TLE_LAUNCH_RANK", raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with pytest.raises(RuntimeError, match="python -m tle.launch --ranks N"):
        Communicator.from_launcher()
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="under Triton's interpreter only: TRITON_INTERPRET=1"):
        Communicator.from_launcher()


def default_slot_barrier(comm):
    tlx.distributed_barrier(comm)


def test_each_program_takes_its_own_slot_and_the_trace_shows_it(interpret, tmp_path):
    """Without an index every program uses its own slot (its linear id);
    the communicator's trace ring records each program's barrier, which
    Comm.write_trace writes as a Chrome/Perfetto document."""
    one = Comm.init_all(1, backend=Backend.EMULATOR, n_barriers=8)
    try:
        one[0].trace_start()
        interpret(default_slot_barrier)[(3, 2)](one[0].dev_comm)
        path = tmp_path / "trace.json"
        Comm.write_trace(one, path)
        one[0].trace_stop()
    finally:
        one[0].destroy()
    import json
    trace = json.loads(path.read_text())
    check_default_slot_trace(trace)


def check_default_slot_trace(trace: dict) -> None:
    assert trace["otherData"]["clock"].startswith("host monotonic clock")
    events = [e for e in trace["traceEvents"] if e.get("cat") == "barrier"]
    begins = [e for e in events if e["ph"] == "B"]
    # Programs (x, y) of a 3 x 2 grid: slot x + 3 * y, block the same.
    assert sorted(e["args"]["slot"] for e in begins) == list(range(6))
    assert all(e["args"]["slot"] == e["args"]["block"] for e in begins)
    assert all(e["name"] == "sync" and e["args"]["group"] == "block" for e in begins)


def test_a_3d_grid_gives_every_program_its_own_slot(interpret, tmp_path):
    """The default slot is the program's linear id on 3-D grids too,
    x + nx * (y + ny * z): with a wrong stride for z, programs (x, 1, 0)
    and (x, 0, 1) of this 3 x 2 x 2 grid would share a slot."""
    one = Comm.init_all(1, backend=Backend.EMULATOR, n_barriers=16)
    try:
        one[0].trace_start()
        interpret(default_slot_barrier)[(3, 2, 2)](one[0].dev_comm)
        path = tmp_path / "trace.json"
        Comm.write_trace(one, path)
        one[0].trace_stop()
    finally:
        one[0].destroy()
    import json
    begins = [e for e in json.loads(path.read_text())["traceEvents"]
              if e.get("cat") == "barrier" and e["ph"] == "B"]
    assert sorted(e["args"]["slot"] for e in begins) == list(range(12))
    assert all(e["args"]["slot"] == e["args"]["block"] for e in begins)


def test_cpu_communicator_traces_and_refuses_an_empty_write(interpret, tmp_path):
    """tle.cpu.Communicator records a trace as Comm does; writing one that
    records nothing (stopped first, or never started) is an error, not an
    empty file."""
    path = tmp_path / "trace.json"
    with Communicator.init_rank(1, get_unique_id(), 0, n_barriers=8) as comm:
        comm.trace_start()
        interpret(default_slot_barrier)[(3, 2)](comm.dev_comm)
        comm.write_trace(path)
        import json
        check_default_slot_trace(json.loads(path.read_text()))
        comm.trace_stop()
        with pytest.raises(TLEError, match=r"records no trace: call tleCommTraceStart before its launches, and "
                           r"tleTraceWrite before tleCommTraceStop"):
            comm.write_trace(tmp_path / "late.json")
    assert not (tmp_path / "late.json").exists()
