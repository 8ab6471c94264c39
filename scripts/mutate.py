#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Mutation testing of the device library: every listed mutant must be caught.

The device library carries deliberate bugs behind TLE_MUTANT(n)
(runtime/device/include/tle/impl/Mutation.h), and so do the emulator's own
checkers (runtime/host/emu/*.cpp). The list, with the tests that
must catch each one, is the table of docs/testing.md ("Mutants"), which this
script reads: it is the one definition. For every mutant the script runs
each of its catchers with TLE_MUTATION=n and requires it to FAIL; a catcher
that passes means the suite can no longer tell that bug from a correct
barrier. First it runs every catcher without a mutant and requires it to
pass, and checks that the table and the library name the same mutants.

  scripts/mutate.py [--build-dir build] [--all] [--only 1,2,...] [--no-build]

--all also runs the catchers a mutant is not listed with, and prints the
whole matrix (for the table's "also fails" column). CPU catchers:

  order   tle-device-order-tests-mutant: the order table
  fake    tle-device-host-tests-mutant: the host build against a fake emulator
  net     tle-device-net-tests-mutant: the GIN build against a fake NCCL, and
          the wait loops' fault-word cadence at the GPU's clock cadence
  emu     tle-emu-tests-mutant: the emulator's barrier and stress tests
  slots   tle-emu-slots-tests-mutant: the emulator's slot checker's verdicts
  ptx     ctest device-ptx-kernels: the PTX of one kernel per half/group/order
  hostir  ctest device-host-orders: the emulator platform's C++ orders
  race    tle-emu-tests-mutant's RaceCheck tests: the stress under the emulator's
          happens-before checker
  onesided tle-emu-tests-mutant's one-sided tests (OneSidedTest.cpp): puts,
          gets, counters, shadows and flush on INTRA and the simulated network,
          race-checked
  checker tle-race-checker-tests-mutant: the race checker's verdicts on
          hand-written histories, its own mutants (Race.cpp) switched

The Triton front end's mutants (P1, P2, ... in docs/testing.md, "Front-end
mutants") substitute text in a copy of a file of python/tle (language.py,
flagtree/language.py, ops/fused.py); the Python tests that must fail are
named in PY_TESTS (`language`, `abi`, `rules`, `interp`, `flagtree`, `fused`,
`race`). They need the .venv with Triton (scripts/setup.sh) and are skipped,
saying so, without it.

The GPU catcher (`gpu`, integration_test/BarrierStress.cu) runs with --gpu,
on a machine with two GPUs, in a `cmake --preset gpu` build (default
build-gpu): it builds tle-gpu-mutants (one stress binary per mutant listed
with `gpu`, compiled with -DTLE_MUTATION=n), runs the unmutated stress with
the same arguments (it must pass) and then each mutant (it must fail).

Exit status 0 when every mutant is caught by every listed catcher.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs/testing.md"
# Where TLE_MUTANT sites live: the device library's headers, and the
# emulator's checkers (built into their own mutant test binaries).
SOURCES = [(ROOT / "runtime/device/include/tle", "*.h"), (ROOT / "runtime/host/emu", "*.cpp")]
# A pinned seed: the emulator's schedules, and so its verdicts, are the same
# on every run (TLE_EMU_SEED, docs/emulator.md).
SEED = "1"


# The front end's mutants: (id, file in python/tle, old text, new text).
PY_MUTANTS = [
    # The encodings come from the generated tle._abi (abi.def); each of
    # these overrides one in language.py's copy of the table.
    ("P1", "language.py", "ORDERS = dict(_abi.ORDER)", 'ORDERS = {**_abi.ORDER, "acquire": 2, "release": 1}'),
    ("P2", "language.py", "ORDERS = dict(_abi.ORDER)", 'ORDERS = {**_abi.ORDER, "acq_rel": 4, "seq_cst": 3}'),
    ("P3", "language.py", "\nGROUP_KINDS = {group: _abi.COOP[group]",
     '\nGROUP_KINDS = {group: 3 if group == "grid" else _abi.COOP[group]'),
    ("P4", "language.py", "BARRIER_KINDS = dict(_abi.BARRIER_KIND)",
     'BARRIER_KINDS = {**_abi.BARRIER_KIND, "arrive": 1, "wait": 0}'),
    # The default slot's stride for z: ny * ny instead of nx * ny.
    ("P5", "language.py", "        stride = num(0)\n",
     "        stride = num(axis - 1)\n"),
    # A coordinate shard_id linearized column-major.
    ("P6", "flagtree/language.py", "        for coord, size in zip(shard_id, scope.shape):\n",
     "        for coord, size in reversed(list(zip(shard_id, scope.shape))):\n"),
    # The rules of rules.def, as language.py applies them: a barrier half's
    # orders read from sync's row (arrive + acquire accepted), the grid
    # group's teams not checked, the observers' orders read from sync's row
    # (signal_wait + release accepted).
    ("P7", "language.py", "    if order not in _abi.ORDER_RULES[barrier_kind]:\n",
     '    if order not in _abi.ORDER_RULES["sync"]:\n'),
    ("P8", "language.py", "    if team not in teams:\n", "    if team not in teams and group_kind != \"grid\":\n"),
    ("P9", "language.py", 'OBSERVER_ORDERS = {k: ORDERS[k] for k in _abi.ORDER_RULES["observe"]}',
     'OBSERVER_ORDERS = {k: ORDERS[k] for k in _abi.ORDER_RULES["sync"]}'),
    # The interpreter's stores recorded as loads: the race checks see reads only.
    ("P10", "_interp.py", "_record(lib, ptrs, mask, _ACCESS_STORE, _ORDER_RELAXED)",
     "_record(lib, ptrs, mask, _ACCESS_LOAD, _ORDER_RELAXED)"),
    # The interpreter's atomics recorded as relaxed, whatever their sem.
    ("P11", "_interp.py", "        return orders.get(sem, 3)\n", "        return 0\n"),
    # A launch whose checks found a misuse exits 0.
    ("P12", "launch.py", "return CHECK_STATUS if self.misuses else 0", "return 0"),
    # The fused operators (tle.ops.fused): a GEMM tile of ag_gemm that does
    # not wait for its chunk of a peer's rows; a gemm_rs/gemm_ar tile stored
    # into an owner that has not read the previous call's; a reduce that
    # does not wait for a peer's tiles.
    ("P13", "ops/fused.py",
     "                tlx.signal_wait(comm, word0 + src * CHUNKS + pm // chunk_tiles, e * push_programs)\n",
     "                pass\n"),
    ("P14", "ops/fused.py", "        tlx.signal_wait(comm, release0 + owner, e - 1)\n", "        pass\n"),
    ("P15", "ops/fused.py", "                tlx.signal_wait(comm, word0 + src * CHUNKS + chunk, e * tiles)\n",
     "                pass\n"),
    # Counting: the reduce waits for one tile of a peer's chunk fewer than
    # the chunk holds, so it may read the chunk's last tile before it lands.
    ("P16", "ops/fused.py", "                tlx.signal_wait(comm, word0 + src * CHUNKS + chunk, e * tiles)\n",
     "                tlx.signal_wait(comm, word0 + src * CHUNKS + chunk, e * tiles - 1)\n"),
    # ag_gemm's push writes a peer's gather rows before that peer's GEMM
    # of the previous call has read them.
    ("P17", "ops/fused.py", "        tlx.signal_wait(comm, release0 + peer, e - 1)\n", "        pass\n"),
]
# Catcher -> the pytest arguments (in python/) that must fail: a file, and
# where a whole file would cost minutes, the tests of the bug's kind only.
PY_TESTS = {
    "language": ["tests/test_language.py"],
    "abi": ["tests/test_abi.py"],
    "rules": ["tests/test_rules.py"],
    "interp": ["tests/test_interpreter.py", "-k", "slot"],
    "flagtree": ["tests/test_flagtree.py", "-k", "shard_id or mesh or coords"],
    "fused": ["tests/test_fused.py", "-k", "cpu_ranks and False"],
    "race": ["tests/test_interp_race.py", "-k", "(relaxed and not flag and 2) or (clean and flag and 2)"],
}


def catchers(build):
    """name -> (command, extra environment). Each exits non-zero on failure."""
    bin_ = build / "bin"
    ctest = ["ctest", "--test-dir", str(build), "--output-on-failure", "-R"]
    return {
        "order": ([str(bin_ / "tle-device-order-tests-mutant"), "--gtest_brief=1"], {}),
        "fake": ([str(bin_ / "tle-device-host-tests-mutant"), "--gtest_brief=1"], {}),
        "net": ([str(bin_ / "tle-device-net-tests-mutant"), "--gtest_brief=1"], {}),
        "slots": ([str(bin_ / "tle-emu-slots-tests-mutant"), "--gtest_brief=1"], {}),
        "emu": ([str(bin_ / "tle-emu-tests-mutant"), "--gtest_brief=1", "--gtest_fail_fast"],
                {"TLE_EMU_SEED": SEED, "TLE_BARRIER_TIMEOUT_MS": "5000"}),
        "ptx": (ctest + ["^device-ptx-kernels$"], {}),
        "hostir": (ctest + ["^device-host-orders$"], {}),
        "race": ([str(bin_ / "tle-emu-tests-mutant"), "--gtest_brief=1", "--gtest_fail_fast",
                  "--gtest_filter=*RaceCheck*"], {"TLE_EMU_SEED": SEED, "TLE_BARRIER_TIMEOUT_MS": "5000"}),
        "onesided": ([str(bin_ / "tle-emu-tests-mutant"), "--gtest_brief=1", "--gtest_fail_fast",
                      "--gtest_filter=*OneSided*:*PutRing*:*NetRing*"],
                     {"TLE_EMU_SEED": SEED, "TLE_BARRIER_TIMEOUT_MS": "5000"}),
        "checker": ([str(bin_ / "tle-race-checker-tests-mutant"), "--gtest_brief=1"], {}),
    }


def parse_table(section="## Mutants", ids=r"\d+"):
    """[(id, name, [catchers])] from a mutant table of docs/testing.md: rows
    `| n | what | where | `catcher` ... |`."""
    rows = []
    in_table = False
    for line in DOC.read_text().splitlines():
        if line.startswith("## "):
            in_table = line.strip() == section
            continue
        m = re.match(rf"^\|\s*({ids})\s*\|([^|]*)\|([^|]*)\|([^|]*)\|", line)
        if in_table and m:
            names = re.findall(r"`(\w+)`", m.group(4))
            key = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
            rows.append((key, m.group(2).strip(), names))
    return rows


def run_python(build, log, only=None):
    """The front end's mutants; returns (caught, total, problems)."""
    import shutil
    import tempfile
    table = parse_table("## Front-end mutants", r"P\d+")
    known = {m[0] for m in PY_MUTANTS}
    problems = [f"{n} of docs/testing.md is not in scripts/mutate.py" for n, _, _ in table if n not in known]
    problems += [f"{n} of scripts/mutate.py is not in docs/testing.md" for n in sorted(known - {r[0] for r in table})]
    problems += [f"{n}: unknown catcher {c} (scripts/mutate.py PY_TESTS)" for n, _, names in table for c in names
                 if c not in PY_TESTS]
    python = ROOT / ".venv/bin/python"
    if not python.exists() or subprocess.run([str(python), "-c", "import triton, pytest"],
                                             capture_output=True).returncode != 0:
        print("mutate: front-end mutants SKIPPED (no .venv with Triton and pytest: scripts/setup.sh)")
        return 0, 0, problems
    env = dict(os.environ, TLE_BUILD_DIR=str(build))
    caught = 0
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        # A copy of python/ beside links to what its tests read from the
        # repository (abi.def and rules.def, docs/abi.md, project()'s
        # version).
        root = Path(tmp)
        shutil.copytree(ROOT / "python", root / "python",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        for d in ("runtime", "docs", "examples", "CMakeLists.txt"):
            (root / d).symlink_to(ROOT / d)
        def pytest(test, mutant):
            r = subprocess.run([str(python), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *test],
                               cwd=root / "python", env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            log.write(f"\n==== {mutant or 'clean'} {' '.join(test)} -> {r.returncode}\n{r.stdout[-3000:]}")
            return r.returncode

        # Only the catchers some listed mutant needs (a baseline of the
        # others would be time spent on no mutant).
        wanted = {c for n, _, names in table if only is None or n in only for c in names}
        for name, test in PY_TESTS.items():
            if name in wanted and pytest(test, None) != 0:
                problems.append(f"{' '.join(test)} fails without a mutant")
        if problems:
            return 0, len(table), problems
        for n, what, names in table:
            if only is not None and n not in only:
                continue
            if n not in known:
                continue
            path, old, new = next((f, o, w) for k, f, o, w in PY_MUTANTS if k == n)
            target = root / "python/tle" / path
            source = target.read_text()
            if source.count(old) != 1:
                problems.append(f"{n}: python/tle/{path} no longer holds {old!r}")
                continue
            target.write_text(source.replace(old, new))
            try:
                failed = [c for c in names if c in PY_TESTS and pytest(PY_TESTS[c], n) != 0]
            finally:
                target.write_text(source)
            missed = [c for c in names if c in PY_TESTS and c not in failed]
            caught += bool(failed) and not missed
            print(f"{n:>3}  {' '.join(failed) or 'NOTHING':<34} {what}"
                  + (f"  [listed but passed: {' '.join(missed)}]" if missed else ""), flush=True)
            if missed:
                problems.append(f"{n}: {' '.join(missed)} passed")
    return caught, len([n for n, _, _ in table if only is None or n in only]), problems


def library_sites():
    ids = {}
    for root, pattern in SOURCES:
        for path in sorted(root.rglob(pattern)):
            if path.name == "Mutation.h":
                continue
            for n in re.findall(r"TLE_MUTANT\((\d+)\)", path.read_text()):
                ids.setdefault(int(n), []).append(path.relative_to(ROOT).as_posix())
    return ids


def run(cmd, env_extra, mutant, log):
    env = dict(os.environ, **env_extra)
    env["TLE_MUTATION"] = str(mutant)
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        rc, out = r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    log.write(f"\n==== mutant {mutant}: {' '.join(cmd)} -> {rc}\n{out[-4000:]}")
    return rc, time.monotonic() - t0


# The stress of a GPU mutant run: the kinds and ordered modes the GPU
# mutants break, every CTA count, few rounds (a caught mutant shows stale
# reads by the thousand, or times out).
GPU_STRESS = ["--mode", "single", "--ctas", "1,8,132", "--kinds", "warp,block,grid",
              "--orders", "acq_rel,seq_cst,release/acquire", "--rounds", "20000"]
EXIT_SKIP = 77  # integration_test/GpuSupport.h kExitSkip


def run_gpu(build, table, only):
    # Multicast stays off (docs/gpu.md): never remove these three.
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
               NVSHMEM_DISABLE_NVLS="1")
    rows = [(n, name) for n, name, names in table if "gpu" in names and (not only or n in only)]
    nproc = str(os.cpu_count() or 2)
    print(f"mutate --gpu: building tle-gpu-barrier-stress and {len(rows)} mutants", flush=True)
    subprocess.run(["cmake", "--build", str(build), "-j", nproc, "--target", "tle-gpu-barrier-stress",
                    "tle-gpu-mutants"], check=True, stdout=subprocess.DEVNULL)

    def stress(binary):
        cmd = [str(build / "bin" / binary)] + GPU_STRESS
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=180)
            rc, out = r.returncode, r.stdout
        except subprocess.TimeoutExpired as e:
            rc, out = 124, e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        stale = sum(int(m) for m in re.findall(r"violations (\d+)", out))
        return rc, stale, time.monotonic() - t0, out

    rc, stale, dt, out = stress("tle-gpu-barrier-stress")
    print(f"mutate --gpu: unmutated stress: exit {rc}, {stale} violations ({dt:.0f} s)", flush=True)
    if rc == EXIT_SKIP:
        print("mutate --gpu: SKIPPED (no pair of GPUs)")
        return 0
    if rc != 0:
        print(out[-3000:])
        print("mutate --gpu: the unmutated stress fails; no mutant can be judged")
        return 1
    survivors = []
    for n, name in rows:
        rc, stale, dt, out = stress(f"tle-gpu-barrier-stress-mutant-{n}")
        how = ("timed out" if rc == 124 else f"exit {rc}")
        caught = rc not in (0, EXIT_SKIP)
        print(f"{n:>3}  {'caught' if caught else 'SURVIVED':<9} {how}, {stale} violations, {dt:.0f} s  {name}",
              flush=True)
        if not caught:
            survivors.append(n)
    print(f"mutate --gpu: {len(rows) - len(survivors)}/{len(rows)} GPU mutants caught")
    return 1 if survivors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", help="default: build, or build-gpu with --gpu")
    ap.add_argument("--gpu", action="store_true", help="the GPU mutants, on a machine with 2 GPUs")
    ap.add_argument("--all", action="store_true", help="run every catcher on every mutant")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--no-build", action="store_true", help="do not build the mutant test binaries")
    args = ap.parse_args()
    build = Path(args.build_dir or ROOT / ("build-gpu" if args.gpu else "build")).resolve()
    t_start = time.monotonic()

    table = parse_table()
    if args.gpu:
        only = {int(x) for x in args.only.split(",")} if args.only else None
        return run_gpu(build, table, only)
    sites = library_sites()
    problems = []
    ids = [n for n, _, _ in table]
    if len(set(ids)) != len(ids):
        problems.append("docs/testing.md lists a mutant twice")
    for n in sorted(set(sites) - set(ids)):
        problems.append(f"mutant {n} ({', '.join(sites[n])}) is not in docs/testing.md")
    for n in sorted(set(ids) - set(sites)):
        problems.append(f"mutant {n} of docs/testing.md has no TLE_MUTANT({n}) site")
    for n, name, names in table:
        if not [c for c in names if c != "gpu"]:
            problems.append(f"mutant {n} ({name}) lists no CPU catcher")
    if problems:
        print("mutate: the list and the library disagree:\n  " + "\n  ".join(problems))
        return 1

    if not args.no_build:
        print("mutate: building tle-mutants", flush=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "tle-mutants"], check=True,
                       stdout=subprocess.DEVNULL)
    cmds = catchers(build)
    available = {c for c, (cmd, _) in cmds.items() if not cmd[0].startswith("/") or Path(cmd[0]).exists()}
    missing = {c for n, _, names in table for c in names if c not in cmds and c != "gpu"}
    if missing:
        print(f"mutate: unknown catchers in docs/testing.md: {sorted(missing)}")
        return 1

    log_path = build / "mutate.log"
    with open(log_path, "w") as log:
        # Without a mutant every catcher must pass, or every mutant would
        # look caught.
        base_fail = []
        for c in sorted(available):
            rc, dt = run(cmds[c][0], cmds[c][1], 0, log)
            print(f"mutate: baseline {c}: {'pass' if rc == 0 else 'FAIL'} ({dt:.1f} s)", flush=True)
            if rc != 0:
                base_fail.append(c)
        if base_fail:
            print(f"mutate: catchers fail without a mutant: {base_fail} (see {log_path})")
            return 1

        only = {int(x) for x in args.only.split(",") if x.isdigit()} if args.only else None
        only_py = {x for x in args.only.split(",") if x.startswith("P")} if args.only else None
        survivors, missed, skipped = [], [], []
        caught = 0
        print(f"\n{'#':>3}  {'caught by':<34} mutant")
        for n, name, names in table:
            if only is not None and n not in only:
                continue
            listed = [c for c in names if c != "gpu"]
            todo = sorted(available) if args.all else [c for c in listed if c in available]
            failed = []
            for c in todo:
                rc, _ = run(cmds[c][0], cmds[c][1], n, log)
                if rc != 0:
                    failed.append(c)
            not_run = [c for c in listed if c not in available]
            skipped += [(n, c) for c in not_run]
            miss = [c for c in listed if c in available and c not in failed]
            extra = [c for c in failed if c not in listed]
            if failed:
                caught += 1
            else:
                survivors.append(n)
            missed += [(n, c) for c in miss]
            verdict = " ".join(failed) or "NOTHING"
            notes = []
            if miss:
                notes.append(f"listed but passed: {' '.join(miss)}")
            if extra:
                notes.append(f"also: {' '.join(extra)}")
            if not_run:
                notes.append(f"not built here: {' '.join(not_run)}")
            print(f"{n:>3}  {verdict:<34} {name}" + (f"  [{'; '.join(notes)}]" if notes else ""), flush=True)

        py_caught, py_total, py_problems = (0, 0, [])
        if only_py is None or only_py:
            print()
            py_caught, py_total, py_problems = run_python(build, log, only_py)

    total = len([n for n, _, _ in table if only is None or n in only])
    print(f"\nmutate: {caught}/{total} mutants of the device library caught on the CPU, "
          f"{py_caught}/{py_total} of the front end "
          f"({time.monotonic() - t_start:.0f} s; log {log_path})")
    for p in py_problems:
        print(f"mutate: front end: {p}")
    if skipped:
        print("mutate: catchers not built here: " + ", ".join(f"{n}:{c}" for n, c in skipped))
    if survivors:
        print(f"mutate: SURVIVED: {survivors}")
    if missed:
        print("mutate: listed catchers that did not fail: " + ", ".join(f"{n}:{c}" for n, c in missed))
    return 0 if not survivors and not missed and not py_problems else 1


if __name__ == "__main__":
    sys.exit(main())
