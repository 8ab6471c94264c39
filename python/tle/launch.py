# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""TLE's launcher: N CPU ranks of a Python program, for Triton kernels that
run under Triton's interpreter where PyTorch (and torchrun) is not at hand.

    python -m tle.launch --ranks 2 script.py [args...]
    python -m tle.launch --ranks 4 -m package.module [args...]
    python -m tle.launch --nodes 2 --ranks 4 script.py [args...]
    python -m tle.launch --device cuda --ranks 2 script.py [args...]

With ``--device cuda`` the ranks share one GPU instead, in one process: the
program runs once, with ``TLE_LAUNCH_SHARED_RANKS`` = N and
``TLE_LAUNCH_DEVICE`` = cuda, and ``tle.torch.SharedGpu.from_launcher()``
makes its N communicators (``tleCommInitAll`` with the one device repeated),
one CUDA stream each (docs/gpu.md, "Ranks sharing one GPU").

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
that failed (a rank killed by a signal counts as 128 + the signal), 124
when ``--timeout`` expired first, or 128 + the signal when the launcher was
sent SIGTERM, SIGHUP or SIGINT (what ``timeout``, a batch scheduler or a
terminal sends): it passes the signal on to every rank, once, and waits for
them.
A rank never outlives its launcher: one whose launcher dies (even by
SIGKILL) is sent SIGTERM.

The ranks' output comes out a line at a time behind torchrun's prefix
``[rankR]: ``, so that lines of two ranks never mix. A Python traceback is
held back until its rank ends: the first rank to fail shows its traceback
in full, every other failing rank a one-line summary (its last line), since
one bug on N ranks is otherwise N copies of the same report
(``--tracebacks all`` shows every one). ``--no-python`` runs the program
itself instead of ``python program`` (a C or C++ program that reads the
same variables), as torchrun's option of that name does.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, Mapping, Sequence, TextIO

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
#: Set with ``device="cuda"``: the ranks that share one GPU in the one
#: process, and the device kind.
ENV_SHARED_RANKS = "TLE_LAUNCH_SHARED_RANKS"
ENV_DEVICE = "TLE_LAUNCH_DEVICE"

#: Exit status of a launch whose --timeout expired.
TIMEOUT_STATUS = 124
#: Exit status of a launch whose ranks all succeeded but whose race and slot
#: checks found a misuse.
CHECK_STATUS = 66
#: Where the ranks record the checks' events (tle._interp reads it; kept
#: here with the other variables so that this module needs no NumPy).
ENV_CHECK_DIR = "TLE_LAUNCH_CHECK_DIR"
_POLL_S = 0.02
_TERMINATE_S = 5.0
#: The signals the launcher passes on to its ranks.
_FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
#: Where a Python traceback starts: from there on a rank's stderr is held
#: until the rank ends.
_TRACEBACK = "Traceback (most recent call last):"


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
    #: The signal (SIGTERM, SIGHUP, SIGINT) that stopped the launch, if any.
    signalled: int | None = None
    #: The race and slot checks' reports (one misuse each), when they ran.
    misuses: list[str] | None = None

    @property
    def returncode(self) -> int:
        """The launcher's exit status (see the module's documentation)."""
        if self.signalled is not None:
            return 128 + self.signalled
        if self.timed_out:
            return TIMEOUT_STATUS
        if self.first_failure is None:
            return CHECK_STATUS if self.misuses else 0
        code = self.returncodes[self.first_failure]
        return 128 - code if code is not None and code < 0 else (code or 1)


def _stop(procs: list[subprocess.Popen], signum: int = signal.SIGTERM, sent: set[int] | None = None) -> None:
    """Sends ``signum`` to every rank still running that is not in ``sent``
    (the pids it was passed on to already: a rank's handler must see a
    signal the launcher received once, once), SIGKILL to those that outlive
    it by _TERMINATE_S."""
    alive = [p for p in procs if p.poll() is None]
    for p in alive:
        if sent is None or p.pid not in sent:
            p.send_signal(signum)
    deadline = time.monotonic() + _TERMINATE_S
    for p in alive:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _die_with_parent(parent: int):
    """preexec_fn of a rank: SIGTERM when the launcher dies, however it dies
    (Linux's PR_SET_PDEATHSIG; a rank started elsewhere does without)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        libc = None

    def arm() -> None:
        if libc is not None:
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the launcher died before prctl
            os._exit(128 + int(signal.SIGTERM))

    return arm


class _Relay:
    """Copies the ranks' stdout and stderr to the launcher's, a line at a
    time behind ``[rankR]: ``; holds a rank's stderr from the first line of
    a Python traceback on, until ``settle`` says whether to show it whole
    or as one line."""

    def __init__(self, procs: list[subprocess.Popen], out: TextIO, err: TextIO):
        self._out, self._err = out, err
        self._lock = threading.Lock()
        self._held: list[list[str]] = [[] for _ in procs]
        self._threads: list[list[threading.Thread]] = []
        for rank, p in enumerate(procs):
            pair = [threading.Thread(target=self._copy, args=(rank, p.stdout, False), daemon=True),
                    threading.Thread(target=self._copy, args=(rank, p.stderr, True), daemon=True)]
            for t in pair:
                t.start()
            self._threads.append(pair)

    def _write(self, stream: TextIO, rank: int, line: str) -> None:
        with self._lock:
            stream.write(f"[rank{rank}]: {line}\n")
            stream.flush()

    def _copy(self, rank: int, pipe, is_err: bool) -> None:
        holding = False
        for raw in iter(pipe.readline, b""):
            line = raw.decode(errors="replace").rstrip("\r\n")
            if is_err and (holding or line.startswith(_TRACEBACK)):
                holding = True
                self._held[rank].append(line)
            else:
                self._write(self._err if is_err else self._out, rank, line)
        pipe.close()

    def settle(self, rank: int, code: int | None, full: bool) -> None:
        """Rank ``rank`` ended with ``code``: its held lines come out in full
        (``full``, or it succeeded), else as their last line."""
        for t in self._threads[rank]:
            t.join(2.0)  # a child of the rank may hold the pipe open
        held, self._held[rank] = self._held[rank], []
        if not held:
            return
        if full or code == 0:
            for line in held:
                self._write(self._err, rank, line)
            return
        last = next((line for line in reversed(held) if line.strip()), "")
        self._write(self._err, rank, f"{last.strip()}  [traceback of {len(held)} lines not shown: the first "
                    f"failure's is; --tracebacks all]")


def run(argv: Sequence[str], ranks: int, *, timeout: float | None = None, grace: float = 30.0,
        env: Mapping[str, str] | None = None, stdout: IO | None = None, stderr: IO | None = None,
        nodes: int = 1, no_python: bool = False, tracebacks: str = "first", check: bool = True,
        device: str = "cpu") -> LaunchResult:
    """Runs ``python *argv`` (a script and its arguments, or ``-m module
    ...``; with ``no_python`` the program ``argv[0]`` itself) as ``ranks``
    ranks and waits for them; ``timeout`` (seconds) ends the whole run,
    ``grace`` how long the others may run after a rank failed. Without
    ``stdout``/``stderr`` the ranks' output comes to this process's behind
    rank prefixes, with tracebacks shown as ``tracebacks`` says ("first":
    the first failing rank's in full, a line for the others; "all");
    given either, the ranks write to those streams as they are. ``nodes`` >
    1: ``ranks`` ranks on each of that many simulated nodes (the emulator's
    teams INTER and WORLD cross them), ``nodes * ranks`` processes in all.
    Called from the main thread, SIGTERM, SIGHUP and SIGINT sent to this
    process are passed on to every rank, which it waits for (the result's
    ``signalled``). ``check``: the ranks record their interpreted kernels'
    accesses, barriers and signals, and when they have ended the emulator's
    race and slot checkers judge them (the result's ``misuses``; a program
    that makes no ``tle.cpu`` communicator is not checked). ``device``
    "cuda": one process, whose ``ranks`` ranks share one GPU (see the
    module's documentation); the result has one return code."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' (CPU ranks under Triton's interpreter) or 'cuda' (ranks sharing "
                         f"one GPU); got {device!r}")
    if not 1 <= nodes <= runtime.MAX_RANKS:
        raise ValueError(f"nodes must be in 1..{runtime.MAX_RANKS}; got {nodes}")
    if not 1 <= ranks <= runtime.MAX_RANKS // nodes:
        raise ValueError(f"ranks must be in 1..{runtime.MAX_RANKS // nodes} per node ({nodes} nodes, at most "
                         f"{runtime.MAX_RANKS} in all); got {ranks}")
    if tracebacks not in ("first", "all"):
        raise ValueError(f"tracebacks must be 'first' or 'all'; got {tracebacks!r}")
    per_node, ranks = ranks, ranks * nodes
    if device == "cuda":
        _check_shared(ranks, nodes, no_python, env)
    if not argv:
        raise ValueError("nothing to run: give a script or -m module")
    if no_python and argv[0] == "-m":
        raise ValueError("-m runs a Python module: it does not go with no_python")
    unique_id = get_unique_id().hex()
    base = dict(os.environ if env is None else env)
    if device == "cuda":
        # One process holds every rank; the kernels are compiled for the GPU.
        base.update({ENV_SHARED_RANKS: str(ranks), ENV_DEVICE: "cuda"})
        ranks, per_node = 1, 1
    else:
        base.setdefault("TRITON_INTERPRET", "1")
        for name in (ENV_SHARED_RANKS, ENV_DEVICE):
            base.pop(name, None)
    check_dir = tempfile.mkdtemp(prefix="tle-check-") if check and not no_python and device == "cpu" else None
    if check_dir:
        base[ENV_CHECK_DIR] = check_dir
    else:
        base.pop(ENV_CHECK_DIR, None)
    relay = stdout is None and stderr is None
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} if relay else {"stdout": stdout, "stderr": stderr}
    command = list(argv) if no_python else [sys.executable, *argv]
    procs: list[subprocess.Popen] = []
    signalled: list[int] = []
    forwarded: set[int] = set()  # the pids that were passed the first signal
    previous = {}

    def forward(signum, frame) -> None:
        # Only the first signal is passed on, each rank once; the main loop
        # then passes it to any rank started since and waits for them all.
        if signalled:
            return
        signalled.append(signum)
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)
                forwarded.add(p.pid)

    if threading.current_thread() is threading.main_thread():
        for signum in _FORWARDED:
            previous[signum] = signal.signal(signum, forward)
    try:
        for rank in range(ranks):
            rank_env = dict(base)
            if device == "cpu":
                rank_env.update({ENV_RANK: str(rank), ENV_SIZE: str(ranks), ENV_UNIQUE_ID: unique_id,
                                 "RANK": str(rank), "LOCAL_RANK": str(rank % per_node), "WORLD_SIZE": str(ranks),
                                 "LOCAL_WORLD_SIZE": str(per_node)})
            if nodes > 1:
                rank_env[ENV_RANKS_PER_NODE] = str(per_node)
            else:
                rank_env.pop(ENV_RANKS_PER_NODE, None)
            procs.append(subprocess.Popen(command, env=rank_env, preexec_fn=_die_with_parent(os.getpid()),
                                          **pipes))
        # The relay's threads start after the last fork: a fork while
        # another thread runs may copy a held lock into the child.
        copier = _Relay(procs, sys.stdout, sys.stderr) if relay else None
        settled = [False] * ranks
        start = time.monotonic()
        first_failure: int | None = None
        failed_at = 0.0
        timed_out = False

        def settle() -> None:
            for rank, p in enumerate(procs):
                if p.returncode is not None and not settled[rank]:
                    settled[rank] = True
                    if copier:
                        copier.settle(rank, p.returncode, tracebacks == "all" or rank == first_failure)

        while [p.poll() for p in procs].count(None):  # polls every rank, unlike any()
            now = time.monotonic()
            if first_failure is None:
                for rank, p in enumerate(procs):
                    if p.returncode not in (None, 0):
                        first_failure, failed_at = rank, now
                        break
            settle()
            if signalled:
                _stop(procs, signalled[0], forwarded)
                break
            if timeout is not None and now - start > timeout:
                _stop(procs)
                timed_out = True
                break
            if first_failure is not None and now - failed_at > grace:
                _stop(procs)
                break
            time.sleep(_POLL_S)
    except BaseException:
        _stop(procs)
        if check_dir:
            shutil.rmtree(check_dir, ignore_errors=True)
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    codes = [p.returncode for p in procs]
    if first_failure is None:
        first_failure = next((r for r, c in enumerate(codes) if c != 0), None)
    settle()
    misuses = None
    if check_dir:
        try:
            # A rank that was killed did not write out its last events: its
            # file would make the replay report edges it never saw.
            if not timed_out and not signalled and all(c is not None and c >= 0 for c in codes):
                misuses = _judge(check_dir, ranks)
        finally:
            shutil.rmtree(check_dir, ignore_errors=True)
    return LaunchResult(codes, first_failure, timed_out, signalled[0] if signalled else None, misuses)


def _check_shared(ranks: int, nodes: int, no_python: bool, env: Mapping[str, str] | None) -> None:
    """Refuses what ranks sharing one GPU cannot do, saying why."""
    environ = os.environ if env is None else env
    if nodes != 1:
        raise ValueError("--device cuda runs the ranks on one GPU of this machine: simulated nodes (--nodes) are "
                         "the emulator's (CPU ranks)")
    if ranks < 2:
        raise ValueError("--device cuda --ranks 1 has nothing to share: run the program itself (or torchrun)")
    if no_python:
        raise ValueError("--device cuda runs a Python program that makes its ranks with tle.torch.SharedGpu; "
                         "a C or C++ program makes them with tleCommInitAll (devices {d, d, ...}) itself")
    if environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        raise ValueError("--device cuda compiles the kernels for the GPU, but TRITON_INTERPRET is set: unset it "
                         "(or leave out --device cuda for CPU ranks under the interpreter)")


def resident_ctas(*, sms: int, threads_per_sm: int, regs_per_sm: int, shared_per_sm: int, num_warps: int,
                  regs_per_thread: int, shared_per_cta: int, ctas_per_sm: int = 32) -> int:
    """How many CTAs of a kernel the GPU holds at once: per SM the fewest
    that its threads, registers, shared memory and CTA slots allow (the
    occupancy calculator's limits, without the allocation granularities,
    so an upper bound), times the SMs."""
    threads = 32 * num_warps
    limits = [ctas_per_sm, threads_per_sm // threads]
    if regs_per_thread:
        limits.append(regs_per_sm // (regs_per_thread * threads))
    if shared_per_cta:
        limits.append(shared_per_sm // shared_per_cta)
    return sms * max(0, min(limits))


def check_co_resident(ranks: int, ctas_per_rank: int, capacity: int, what: str = "the kernel") -> None:
    """Ranks sharing one GPU meet at a barrier only if every rank's CTAs
    are resident at once (a CTA spins until its peers' arrive, and a CTA
    that is not resident never arrives): raises ValueError, with the
    figures, when ``ranks`` x ``ctas_per_rank`` exceed ``capacity``
    (resident_ctas)."""
    need = ranks * ctas_per_rank
    if need > capacity:
        fit = capacity // ranks
        raise ValueError(f"{ranks} ranks sharing one GPU cannot run {what} side by side: {ranks} x "
                         f"{ctas_per_rank} CTAs, but the GPU holds at most {capacity} of its CTAs at once, so a "
                         f"barrier would wait for CTAs that cannot start until it times out; launch at most "
                         f"{fit} CTAs per rank (fewer warps, registers or shared memory fit more), or use one GPU "
                         f"per rank")


def _judge(directory: str, ranks: int) -> list[str] | None:
    """The race and slot checks over the ranks' event files: one report per
    misuse; None when not every rank recorded (it made no tle.cpu
    communicator, or was killed before)."""
    if not all(os.path.exists(os.path.join(directory, f"rank{r}.events")) for r in range(ranks)):
        return None
    from . import _interp  # needs Triton: only for programs that recorded
    found, text = _interp.run_checks(directory, ranks)
    if found < 0:
        raise RuntimeError(f"the race and slot checks could not read the ranks' events: {text}")
    return text.split("\n\n") if found else []


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
    parser.add_argument("--tracebacks", choices=("first", "all"), default="first",
                        help="whose Python tracebacks to show in full: the first failing rank's (default; the "
                        "others as one line each), or every rank's")
    parser.add_argument("--no-python", action="store_true",
                        help="run the program itself, not with python (a C or C++ program, as torchrun's option)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cpu (default): a process per CPU rank under Triton's interpreter; cuda: the ranks "
                        "share this machine's GPU in one process, one stream each (tle.torch.SharedGpu)")
    parser.add_argument("--no-check", action="store_true",
                        help="do not check the interpreted kernels for data races and barrier-slot misuse (on by "
                        "default: docs/triton.md, \"Race and slot checks\")")
    parser.add_argument("-m", dest="module", default=None, help="run a module, as python -m does")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="script.py [args...] (or the module's args)")
    ns = parser.parse_args(args)
    argv = (["-m", ns.module] if ns.module else []) + list(ns.program)
    if not argv:
        parser.error("give a script (or -m module) to run")
    if ns.no_python and ns.module:
        parser.error("-m runs a Python module: it does not go with --no-python")
    try:
        result = run(argv, ns.ranks, timeout=ns.timeout, grace=ns.grace, nodes=ns.nodes, no_python=ns.no_python,
                     tracebacks=ns.tracebacks, check=not ns.no_check, device=ns.device)
    except ValueError as e:  # what --device cuda cannot do
        parser.error(str(e))
    except KeyboardInterrupt:
        return 130
    except OSError as e:  # --no-python with a program that cannot run
        print(f"tle.launch: cannot run {argv[0]}: {e.strerror or e}", file=sys.stderr, flush=True)
        return 127
    ranks = len(result.returncodes)
    for report in result.misuses or []:
        print(f"tle.launch: {report}", file=sys.stderr, flush=True)
    if result.misuses and result.first_failure is None and not result.timed_out and result.signalled is None:
        print(f"tle.launch: every rank succeeded, but the race and slot checks found {len(result.misuses)} "
              f"misuse{'s' if len(result.misuses) > 1 else ''} (above; exit status {CHECK_STATUS}); --no-check "
              f"turns them off", file=sys.stderr, flush=True)
    if result.signalled is not None:
        print(f"tle.launch: {signal.Signals(result.signalled).name} received: passed on to every rank, which "
              f"all ended", file=sys.stderr, flush=True)
    elif result.timed_out:
        print(f"tle.launch: stopped every rank after --timeout {ns.timeout:g} s", file=sys.stderr, flush=True)
    elif result.first_failure is not None:
        first = result.first_failure
        others = [r for r, c in enumerate(result.returncodes) if c != 0 and r != first]
        then = (f"; rank{'s' if len(others) > 1 else ''} {_ranges(others)} failed too" if others else
                f"; the other {ranks - 1} succeeded" if ranks > 1 else "")
        codes = ", ".join(f"rank {r}: {c}" for r, c in enumerate(result.returncodes))
        print(f"tle.launch: rank {first} failed first (its report is the one shown in full){then} (exit "
              f"statuses: {codes})", file=sys.stderr, flush=True)
    return result.returncode


def _ranges(ranks: list[int]) -> str:
    """'0-2, 5' for [0, 1, 2, 5]."""
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ", ".join(out)


if __name__ == "__main__":
    sys.exit(main())
