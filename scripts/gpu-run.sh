#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The one script run on the GPU machine, from the repository root:
#   scripts/gpu-run.sh [all|tests|bench|build|mutants|shared]   (default all)
# It builds the runtime with the CUDA backend (`cmake --preset gpu`, no LLVM
# needed), prints the GPU topology, runs the GPU test suite (ctest label
# `gpu`), then the benchmarks (bench/run.sh), and prints a short summary
# LAST. Logs, tables and plots go to ${OUT:-/tmp/tle-out}:
#   run.log gpu-tests.log bench.log bench.csv bench.md latency.png
#   allreduce.png (and for `mutants`: gpu-mutants.log gpu-controls.log;
#   for `shared`, the one-GPU barrier paths of tle-bench-shared alone:
#   shared.log shared.csv bench.md)
# Prepare on the CPU machine first: scripts/gpu-prepare.sh (NCCL device
# headers into .gpu/, carried with the run). Every command has a timeout;
# the whole run is sized to finish in about 9 minutes.
set -uo pipefail
# Multicast stays off in every program: never remove these three.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

cd "$(dirname "$0")/.."
root=$(pwd)
phase=${1:-all}
case "$phase" in all | tests | bench | build | mutants | shared) ;; *)
  echo "usage: $0 [all|tests|bench|build|mutants|shared]" >&2
  exit 2
  ;;
esac
out=${OUT:-/tmp/tle-out}
mkdir -p "$out"
exec > >(tee -a "$out/run.log") 2>&1
build=build-gpu
say() { echo "[gpu-run $(date +%T) +${SECONDS}s] $*"; }
# One call on the GPU machine may last 10 minutes: every step's timeout is
# cut to what is left of ${TLE_RUN_BUDGET_S:-560} s, so the summary always
# gets printed.
budget=${TLE_RUN_BUDGET_S:-560}
limit() { # limit CAP: min(CAP, seconds left - 20), at least 10
  local left=$((budget - SECONDS - 20))
  [ "$left" -lt "$1" ] || left=$1
  [ "$left" -gt 10 ] || left=10
  echo "$left"
}
summary=()
note() { summary+=("$*"); }

say "phase $phase, output in $out, $(nproc) CPUs"

#--- Build -----------------------------------------------------------------
# NCCL 2.28.9: the library from PyTorch's wheel (the system one is 2.28.3),
# the device headers carried in .gpu/nccl-include unless the wheel has them.
source "$root/scripts/find-nccl.sh"
say "NCCL library: ${nccl_lib:-none}; device headers: ${nccl_inc:-none}"
# NVSHMEM (best effort): the wheel's headers and libraries, if it has them.
nvshmem_home=$(find /opt -type d -path '*nvidia/nvshmem' 2>/dev/null | head -1)
say "NVSHMEM: ${nvshmem_home:-none}$([ -n "$nvshmem_home" ] && [ -d "$nvshmem_home/include" ] && echo ' (with include/)')"

build_ok=1
blog=$(mktemp) # the build's own output; only errors are shown
trap 'rm -f "$blog"' EXIT
cmake_args=(--preset gpu)
if [ -n "$nccl_lib" ] && [ -n "$nccl_inc" ]; then
  cmake_args+=("-DTLE_NCCL_INCLUDE_DIR=$nccl_inc" "-DTLE_NCCL_LIBRARY=$nccl_lib")
else
  note "NCCL benchmark not built (library or device headers missing: run scripts/gpu-prepare.sh and carry .gpu)"
fi
if [ -n "$nvshmem_home" ]; then
  cmake_args+=("-DTLE_NVSHMEM_HOME=$nvshmem_home")
fi
say "configure: cmake ${cmake_args[*]}"
if ! timeout "$(limit 90)" cmake "${cmake_args[@]}" >"$blog" 2>&1; then
  tail -30 "$blog"
  grep -q "Boost" "$blog" &&
    say "hint: the emulator needs Boost.Context (libboost-context-dev), absent here"
  build_ok=0
fi
grep -iE "warning|nvshmem|nccl" "$blog" | head -20
if [ $build_ok = 1 ]; then
  # The suite and the benchmarks first (a failure there is fatal), then the
  # rest of the tree (tlerun, ...), whose failure only costs the examples.
  mine=(tle-gpu-barrier-stress tle-gpu-barrier-fault tle-gpu-signal-stress tle-gpu-trace tle-bench-barrier
    tle-bench-shared)
  for t in tle-bench-nccl tle-bench-nvshmem; do
    grep -q "^build $t: phony" "$build/build.ninja" 2>/dev/null && mine+=("$t")
  done
  [ "$phase" = shared ] && mine=(tle-bench-shared)
  say "build: ${mine[*]}"
  if ! timeout "$(limit 300)" cmake --build "$build" -j "$(nproc)" --target "${mine[@]}" >>"$blog" 2>&1; then
    grep -E "error|Error" "$blog" | head -30
    tail -15 "$blog"
    build_ok=0
  elif [ "$phase" != mutants ] && [ "$phase" != shared ]; then
    say "build: everything else"
    if ! timeout "$(limit 200)" cmake --build "$build" -j "$(nproc)" >>"$blog" 2>&1; then
      grep -E "error|Error" "$blog" | head -15
      note "build of the rest of the tree FAILED (tlerun examples unavailable)"
    fi
  fi
fi
if [ $build_ok = 1 ]; then
  say "build done: $(ls $build/bin | tr '\n' ' ')"
  note "build: ok"
else
  note "build: FAILED (see run.log)"
fi

#--- Topology --------------------------------------------------------------
say "topology"
timeout 20 nvidia-smi topo -m 2>&1 | head -8
timeout 20 nvidia-smi --query-gpu=index,name,driver_version,memory.used --format=csv 2>&1

#--- One GPU, two ranks sharing it (tle-bench-shared) ------------------------
if [ $build_ok = 1 ] && [ "$phase" = shared ]; then
  say "one-GPU barrier paths (tle-bench-shared); rows in shared.csv, verdicts in bench.md"
  sargs=()
  [ -f .gpu/bench/shared_loop.ptx ] && sargs+=(--tlec-ptx .gpu/bench/shared_loop.ptx)
  [ -d .gpu/bench/triton ] && sargs+=(--triton-dir .gpu/bench/triton)
  # TLE_SHARED_ARGS: more options for a diagnostic run (--sections ladder).
  read -r -a extra <<<"${TLE_SHARED_ARGS:-}"
  sargs+=("${extra[@]}")
  timeout "$(limit 420)" "$build/bin/tle-bench-shared" "${sargs[@]}" >"$out/shared.log" 2>&1
  note "tle-bench-shared: exit $?"
  grep -v '^RESULT,' "$out/shared.log" | head -20
  {
    echo "section,impl,x,us,note"
    grep -h '^RESULT,' "$out/shared.log" | cut -d, -f2-
  } >"$out/shared.csv"
  python3 bench/report.py "$out/shared.csv" "$out" >/dev/null 2>&1
  sed -n '/^## One GPU/,/^## Targets/p' "$out/bench.md" | grep -v '^## Targets'
  grep -E '^\| one GPU' "$out/bench.md"
fi

#--- Tests -----------------------------------------------------------------
if [ $build_ok = 1 ] && { [ "$phase" = all ] || [ "$phase" = tests ]; }; then
  say "GPU test suite (ctest -L gpu); full output in gpu-tests.log"
  # About 100 s of barrier stress, 70 s of signal stress, the fault tests.
  timeout "$(limit 420)" ctest --test-dir "$build/integration_test" -L gpu -V \
    --timeout 150 >"$out/gpu-tests.log" 2>&1
  rc=$?
  # Verdicts only (every configuration's line is in gpu-tests.log): tests,
  # failing configurations, fault records, and the block-group timings.
  sed -E 's/^[0-9]+: //' "$out/gpu-tests.log" |
    grep -E "Test +#|tests passed|FAIL|SKIPPED|first:|FAULT-RECORD|CANARY|exit after|^PASS" |
    grep -v "^\s*$" | head -80
  say "stress timings, block groups, rank 0:"
  sed -E 's/^[0-9]+: //' "$out/gpu-tests.log" | grep -E "rank 0\] .*kind=block" | head -30
  # ctest's own line counts a skipped test as passed ("100% tests passed"
  # when every test skipped): count the verdicts instead. A test skips only
  # by exiting with kExitSkip (SKIP_RETURN_CODE), i.e. when it found no GPU
  # pair, which on this machine is itself a failure to report.
  verdicts=$(sed -E 's/^[0-9]+: //' "$out/gpu-tests.log" | grep -E "^ *[0-9]+/[0-9]+ Test +#")
  n_pass=$(grep -c " Passed " <<<"$verdicts")
  n_skip=$(grep -c "\*\*\*Skipped" <<<"$verdicts")
  n_fail=$(($(grep -c . <<<"$verdicts") - n_pass - n_skip))
  note "GPU tests: $n_pass passed, $n_fail failed, $n_skip skipped (ctest exit $rc)$([ "$n_skip" -gt 0 ] && echo ': a skip here means the GPUs were not usable')"

  # Example kernels through tlerun, where bundles were carried. Each runs 2
  # ranks and tlerun puts rank i on GPU i, so one GPU cannot run them: a
  # skip with its reason, not a failure.
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$ngpu" -lt 2 ] && ls .gpu/bundles/*.sh >/dev/null 2>&1; then
    for s in .gpu/bundles/*.sh; do say "example $(basename "$s" .sh): SKIPPED (2 ranks, one GPU each; this machine has $ngpu)"; done
    note "examples via tlerun --target cuda: SKIPPED, $(ls .gpu/bundles/*.sh | wc -l) examples need 2 GPUs (this machine has $ngpu)"
  elif [ -x "$build/bin/tlerun" ] && ls .gpu/bundles/*.sh >/dev/null 2>&1; then
    pass=0 fail=0
    for s in .gpu/bundles/*.sh; do
      if TLERUN="$root/$build/bin/tlerun" timeout "$(limit 60)" bash "$s" \
        >>"$out/gpu-tests.log" 2>&1; then
        pass=$((pass + 1)); say "example $(basename "$s" .sh): PASS"
      else
        fail=$((fail + 1)); say "example $(basename "$s" .sh): FAIL"
      fi
    done
    note "examples via tlerun --target cuda: $pass passed, $fail failed"
  else
    note "examples via tlerun: not run (no $build/bin/tlerun or no .gpu/bundles/*.sh)"
  fi
fi

#--- Mutants (not part of `all`) ---------------------------------------------
# The GPU mutants of docs/testing.md must make the stress fail, and the
# stress's controls alone, over payload sizes, show where it can see
# (gpu-mutants.log, gpu-controls.log).
if [ $build_ok = 1 ] && [ "$phase" = mutants ]; then
  say "GPU mutants (scripts/mutate.py --gpu); full output in gpu-mutants.log"
  timeout "$(limit 300)" python3 scripts/mutate.py --gpu --build-dir "$build" \
    >"$out/gpu-mutants.log" 2>&1
  rc=$?
  grep -E "^ *[0-9]+ |^mutate" "$out/gpu-mutants.log" | tail -12
  note "GPU mutants: $(grep -E "GPU mutants caught|SKIPPED" "$out/gpu-mutants.log" | tail -1) (exit $rc)"
  : >"$out/gpu-controls.log"
  for w in 4 16 32; do
    say "controls alone, --words $w"
    echo "== --words $w" >>"$out/gpu-controls.log"
    got=$(timeout "$(limit 60)" "$build/bin/tle-gpu-barrier-stress" --mode single \
      --ctas 1,8,132 --kinds thread,warp,block,grid \
      --orders relaxed,no_release,no_acquire --rounds 20000 --words "$w" 2>&1)
    rc=$?
    echo "$got" >>"$out/gpu-controls.log"
    note "controls alone, --words $w: exit $rc, $(grep -c "control .*PASS" <<<"$got") saw stale reads, $(grep -c "control .*FAIL" <<<"$got") saw none"
  done
  grep -E "control .*FAIL" "$out/gpu-controls.log" | head -20
fi

#--- Benchmarks ------------------------------------------------------------
if [ $build_ok = 1 ] && { [ "$phase" = all ] || [ "$phase" = bench ]; }; then
  say "benchmarks (bench/run.sh)"
  TLE_BENCH_DEADLINE=$(($(date +%s) + $(limit 360) - 5)) \
    timeout "$(limit 360)" bash bench/run.sh "$build" "$out"
  note "benchmarks: exit $? ($(($(wc -l <"$out/bench.csv" 2>/dev/null || echo 1) - 1)) figures)"
fi

#--- Summary (last) --------------------------------------------------------
echo
echo "=================== TLE GPU run summary ($(date -u +%FT%TZ), ${SECONDS}s) ==================="
for line in "${summary[@]}"; do echo "- $line"; done
if [ -f "$out/bench.md" ] && { [ "$phase" = all ] || [ "$phase" = bench ]; }; then
  echo
  # The latency and allocation-type tables, host-launched barrier,
  # all-reduce and targets.
  awk '/^## (Barrier sync latency|Barrier latency by|Host-launched|One-shot|Targets)/{p=1}
       /^## (Grid|Overlap|What each)/{p=0} p' "$out/bench.md"
fi
ls "$out"
