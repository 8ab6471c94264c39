#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs every benchmark once, side by side on the same machine, and writes
#   $out/bench.log  everything the programs printed
#   $out/bench.csv  section,impl,x,us,note (one line per figure)
#   $out/bench.md   the tables, ratios against the targets, machine, date
#   $out/latency.png, $out/allreduce.png
# Usage: bench/run.sh [BUILD_DIR [OUT_DIR]]  (defaults: build-gpu, $OUT or
# /tmp/tle-out). Programs that are not built or cannot run (NCCL without its
# headers, NVSHMEM without headers, PyTorch without two GPUs) are skipped
# with a line saying so; the others still run.
set -uo pipefail
# Multicast stays off in every program: never remove these three.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-gpu}
out=${2:-${OUT:-/tmp/tle-out}}
mkdir -p "$out"
log=$out/bench.log
: >"$log"
say() { echo "[bench +${SECONDS}s] $*" | tee -a "$log"; }

python=${PYTHON:-python3}
# Every row on every GPU of the machine (TLE_GPU_RANKS lowers it, like the
# C++ programs).
ranks=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ -n "${TLE_GPU_RANKS:-}" ] && [ "$ranks" -gt "$TLE_GPU_RANKS" ] && ranks=$TLE_GPU_RANKS
[ "$ranks" -ge 2 ] 2>/dev/null || ranks=2
if ! "$python" -c "import torch" 2>/dev/null; then
  for p in /opt/torch/.venv/bin/python python3; do
    if "$p" -c "import torch" 2>/dev/null; then python=$p; break; fi
  done
fi

# TLE_BENCH_DEADLINE (epoch seconds, from gpu-run.sh) caps every program's
# timeout so that the report is still written in time.
deadline=${TLE_BENCH_DEADLINE:-$(($(date +%s) + 3600))}
run() { # run NAME TIMEOUT CMD...
  local name=$1 limit=$2
  local left=$((deadline - $(date +%s) - 10))
  [ "$left" -ge "$limit" ] || limit=$left
  shift 2
  if [ "$limit" -lt 5 ]; then
    say "SKIPPED $name: out of time"
    return
  fi
  say "$name: $*"
  timeout "$limit" "$@" 2>&1 | tee -a "$log" | grep -v '^RESULT,' | sed 's/^/    /'
  local rc=${PIPESTATUS[0]}
  # 77: the program found no pair of GPUs (kExitSkip, GpuSupport.h).
  if [ "$rc" -eq 77 ]; then
    say "$name: SKIPPED (no pair of GPUs)"
  elif [ "$rc" -ne 0 ]; then
    say "$name: exit status $rc$([ "$rc" -eq 124 ] && echo ' (timed out)')"
  fi
}

# Machine and date for the report (kept out of $out: few files come back).
info=$(mktemp)
trap 'rm -f "$info"' EXIT
echo "date,$(date -u +%Y-%m-%dT%H:%MZ)" >"$info"
echo "host,$(hostname)" >>"$info"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null |
  sed 's/^/gpu,/' >>"$info"

if [ -x "$build/bin/tle-bench-barrier" ]; then
  run tle 300 "$build/bin/tle-bench-barrier" ${TLE_BENCH_ARGS:-}
else
  say "tle: $build/bin/tle-bench-barrier not built"
fi
# The one-GPU rows (two ranks sharing device 0; section shared and
# shared-diag), with the compiled loops scripts/gpu-prepare.sh put in
# .gpu/bench when they are there.
if [ -x "$build/bin/tle-bench-shared" ]; then
  sargs=()
  [ -f "$here/../.gpu/bench/shared_loop.ptx" ] && sargs+=(--tlec-ptx "$here/../.gpu/bench/shared_loop.ptx")
  [ -d "$here/../.gpu/bench/triton" ] && sargs+=(--triton-dir "$here/../.gpu/bench/triton")
  run shared 200 "$build/bin/tle-bench-shared" "${sargs[@]}"
else
  say "shared: $build/bin/tle-bench-shared not built"
fi
# The tlec row: the barrier loop compiled from MLIR by tlec on the CPU
# machine (scripts/gpu-prepare.sh puts the bundle in .gpu/bundles), run by
# tlerun --target cuda.
bundle=${TLE_BENCH_BUNDLE:-$here/../.gpu/bundles/barrier_loop.bundle}
if [ -x "$build/bin/tlerun" ] && [ -f "$bundle" ]; then
  run tlec 150 "$python" "$here/tlec_bench.py" "$build/bin/tlerun" "$bundle" --ranks "$ranks"
else
  say "SKIPPED tlec: needs $build/bin/tlerun and $bundle (scripts/gpu-prepare.sh)"
fi
if [ -x "$build/bin/tle-bench-nccl" ]; then
  run nccl 180 "$build/bin/tle-bench-nccl"
else
  say "SKIPPED nccl: tle-bench-nccl not built (no NCCL headers/library given to cmake)"
fi
if [ -x "$build/bin/tle-bench-nvshmem" ]; then
  # The unique-id bootstrap plugin is dlopen'ed from NVSHMEM's lib folder.
  nvh=$(sed -n 's/^TLE_NVSHMEM_HOME:PATH=//p' "$build/CMakeCache.txt")
  (
    export LD_LIBRARY_PATH="$nvh/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    run nvshmem 120 "$build/bin/tle-bench-nvshmem"
  )
else
  say "SKIPPED nvshmem: not built (no NVSHMEM with headers and device library found)"
fi
# The Triton rows (python/tests_gpu/bench.py): TLE's barrier from Triton and
# NVSHMEM's through PyTorch's externs, one process per GPU under torchrun,
# with the bitcode carried from the CPU machine and this build's libtle.
root=$(cd "$here/.." && pwd)
bc=${TLE_DEVICE_BC:-$root/.gpu/libtle_device.bc}
if ! "$python" -c "import torch, triton" 2>/dev/null; then
  say "SKIPPED triton: no python with torch and triton found"
elif [ ! -f "$bc" ] || [ ! -f "$build/lib/libtle.so" ]; then
  say "SKIPPED triton: needs $bc (scripts/gpu-prepare.sh) and $build/lib/libtle.so"
else
  (
    export TLE_DEVICE_BC=$bc TLE_LIB=$(cd "$build" && pwd)/lib/libtle.so
    export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
    export TRITON_CACHE_DIR=$(mktemp -d /tmp/tle-bench-triton.XXXXXX)
    run triton 240 "$python" -m torch.distributed.run --standalone --nproc-per-node="$ranks" \
      "$root/python/tests_gpu/bench.py"
    rm -rf "$TRITON_CACHE_DIR"
  )
fi
if "$python" -c "import torch" 2>/dev/null; then
  run torch 240 "$python" "$here/torch_bench.py" hostbar,allreduce
else
  say "SKIPPED torch: no python with torch found"
fi

{
  echo "section,impl,x,us,note"
  grep -h '^RESULT,' "$log" | cut -d, -f2-
} >"$out/bench.csv"
grep -h '^INFO,' "$log" | cut -d, -f2- >>"$info"
say "$(($(wc -l <"$out/bench.csv") - 1)) figures in $out/bench.csv"
"$python" "$here/report.py" "$out/bench.csv" "$out" "$info" 2>&1 | tee -a "$log" | tail -3
