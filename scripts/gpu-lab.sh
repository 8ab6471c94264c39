#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Run 5 on the 2-GPU machine (docs/gpu-notes.md, "Run 5 plan: the barrier
# lab"), from the repository root:
#   scripts/gpu-lab.sh [--quick] [more tle-bench-lab options]
# Builds tle-bench-lab with gpu-run.sh's configuration (`cmake --preset gpu`
# with the NCCL paths), prints the GPUs' clocks before and after, runs the
# lab under a watchdog, and prints a short summary LAST. Output in
# ${OUT:-/tmp/tle-out}:
#   lab.log  everything printed, the lab's progress tables included
#   lab.csv  one row per measurement: exp,impl,ctas,iters,rep,us,mhz
#   lab-exp2.csv  only when the lab failed before its first latency row
#            (NCCL's setup, most likely): experiment 2 run alone, no NCCL
# Prepare on the CPU machine first: scripts/gpu-prepare.sh (NCCL's device
# headers into .gpu/, carried with the run). The call is sized for
# ${TLE_LAB_BUDGET_S:-470} s: the build gets at most 180 s, the lab at most
# 360 s (it estimates its own time at start: about 100 s at the defaults,
# 30 s with --quick), the summary what is left.
set -uo pipefail
# Multicast stays off in every program: never remove these three.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
out=${OUT:-/tmp/tle-out}
mkdir -p "$out"
: >"$out/lab.log"
rm -f "$out/lab.csv" "$out/lab-exp2.csv"
exec > >(tee -a "$out/lab.log") 2>&1
build="build-gpu"
say() { echo "[gpu-lab $(date +%T) +${SECONDS}s] $*"; }
budget=${TLE_LAB_BUDGET_S:-470}
limit() { # limit CAP: min(CAP, seconds left - 30), at least 10
  local left=$((budget - SECONDS - 30))
  [ "$left" -lt "$1" ] || left=$1
  [ "$left" -gt 10 ] || left=10
  echo "$left"
}
clocks() {
  timeout 20 nvidia-smi --query-gpu=index,name,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2>&1
  timeout 20 nvidia-smi --query-gpu=index,clocks_event_reasons.active --format=csv 2>&1 |
    grep -v "Field" || true
}
python=python3
command -v python3 >/dev/null 2>&1 || python=/opt/torch/.venv/bin/python

say "output in $out; $(nproc) CPUs; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
timeout 20 nvidia-smi topo -m 2>&1 | head -6
say "GPU clocks before"
clocks

#--- Build -----------------------------------------------------------------
source "$root/scripts/find-nccl.sh"
say "NCCL library: ${nccl_lib:-none}; device headers: ${nccl_inc:-none}"
built=0
if [ -z "$nccl_lib" ] || [ -z "$nccl_inc" ]; then
  say "FAILED: the lab needs NCCL 2.28.9's library and device headers" \
    "(run scripts/gpu-prepare.sh on the CPU machine and carry .gpu)"
else
  blog=$(mktemp)
  trap 'rm -f "$blog"' EXIT
  say "configure: cmake --preset gpu (NCCL paths)"
  if timeout "$(limit 60)" cmake --preset gpu "-DTLE_NCCL_INCLUDE_DIR=$nccl_inc" \
    "-DTLE_NCCL_LIBRARY=$nccl_lib" >"$blog" 2>&1 &&
    say "build: tle-bench-lab" &&
    timeout "$(limit 180)" cmake --build "$build" -j "$(nproc)" --target tle-bench-lab \
      >>"$blog" 2>&1; then
    built=1
    grep -iE "warning" "$blog" | grep -i "bench/lab" | head -10
  else
    grep -E "error|Error" "$blog" | head -30
    tail -15 "$blog"
    say "FAILED: build"
  fi
fi

#--- Run -------------------------------------------------------------------
rc=1
if [ $built = 1 ]; then
  t=$(limit 360)
  b=$((t - 45))
  [ "$b" -gt 20 ] || b=20
  say "run: tle-bench-lab --csv $out/lab.csv --budget-s $b $* (watchdog ${t} s)"
  timeout --kill-after=10 "$t" "$build/bin/tle-bench-lab" --csv "$out/lab.csv" \
    --budget-s "$b" "$@"
  rc=$?
  # A failure before the first latency row is most likely NCCL's setup:
  # experiment 2 needs only TLE, so run it alone rather than go home empty.
  if [ $rc != 0 ] && [ $rc != 77 ] && ! grep -q '^1,' "$out/lab.csv" 2>/dev/null &&
    [ $((budget - SECONDS)) -gt 150 ]; then
    say "no latency row: retrying experiment 2 alone (no NCCL) into lab-exp2.csv"
    timeout --kill-after=10 "$(limit 120)" "$build/bin/tle-bench-lab" \
      --csv "$out/lab-exp2.csv" --budget-s 60 "$@" --exps 2
  fi
  say "GPU clocks after"
  clocks
fi

#--- Summary (last) --------------------------------------------------------
case $rc in
0) what="completed" ;;
3) what="HANG detected by the lab's watchdog (see the HANG line); partial" ;;
77) what="SKIPPED (fewer than 2 GPUs)" ;;
124 | 137) what="killed by the script's watchdog; partial" ;;
*) what="FAILED (see the error above); partial" ;;
esac
echo
say "tle-bench-lab: exit $rc, $what; output: $out/lab.log, $out/lab.csv ($(($(wc -l 2>/dev/null <"$out/lab.csv" || echo 1) - 1)) rows)"
for csv in "$out/lab.csv" "$out/lab-exp2.csv"; do
  [ -s "$csv" ] && timeout 30 "$python" bench/lab/summary.py "$csv"
done
exit $rc
