#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Triton front end's GPU tests, run on the GPU machine from the
# repository root after scripts/gpu-run.sh has built build-gpu (libtle.so
# with the CUDA backend):
#   scripts/gpu-triton.sh [all|example|exchange|timeout|bench|import|nccl|c10d|flagtree|signals|aggemm|abort|teams|shared|ops|fused]
#                                                              (default all; ops and fused only by name)
# The GPU machine has no LLVM, so the device bitcode is built on the CPU
# machine (build/lib/libtle_device.bc) and carried as .gpu/libtle_device.bc.
# Python: $PYTHON, else /opt/torch/.venv/bin/python, else python3 (needs
# torch and triton 3.6). Output goes to ${OUT:-/tmp}/triton-gpu.log; a
# summary is printed last; the exit status is non-zero if anything failed.
set -uo pipefail
# Multicast stays off in every program: never remove these three.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

cd "$(dirname "$0")/.."
root=$(pwd)
phase=${1:-all}
known=" example exchange timeout bench import nccl c10d flagtree signals aggemm abort teams shared ops fused "
for p in ${phase//,/ }; do
  if [ "$p" != all ] && [[ "$known" != *" $p "* ]]; then
    echo "usage: $0 [all|PHASE[,PHASE...]] with PHASE one of:$known" >&2
    exit 2
  fi
done
# wants NAME: the phase list (or all) includes NAME.
wants() { [ "$phase" = all ] || [[ ",$phase," == *",$1,"* ]]; }
out=${OUT:-/tmp}
mkdir -p "$out"
exec > >(tee -a "$out/triton-gpu.log") 2>&1
say() { echo "[gpu-triton $(date +%T) +${SECONDS}s] $*"; }

py=${PYTHON:-}
if [ -z "$py" ]; then
  for cand in /opt/torch/.venv/bin/python python3; do
    if command -v "$cand" >/dev/null && "$cand" -c "import torch, triton" 2>/dev/null; then
      py=$cand
      break
    fi
  done
fi
export TLE_DEVICE_BC=${TLE_DEVICE_BC:-$root/.gpu/libtle_device.bc}
export TLE_LIB=${TLE_LIB:-$root/build-gpu/lib/libtle.so}
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
# A fresh Triton cache: kernels are compiled against this run's bitcode.
export TRITON_CACHE_DIR=$(mktemp -d /tmp/tle-triton-cache.XXXXXX)
trap 'rm -rf "$TRITON_CACHE_DIR"' EXIT
# One process per GPU of the machine (torchrun gives rank i GPU i, so more
# processes than GPUs fail with "invalid device ordinal"). On one GPU the
# phases that mean something on one rank run there and say so; the ones
# that need a peer (needs_pair) are skipped with the reason.
ngpu=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$ngpu" -ge 1 ] 2>/dev/null || ngpu=0

missing=()
[ -n "$py" ] || missing+=("a Python with torch and triton (set PYTHON)")
[ -f "$TLE_DEVICE_BC" ] || missing+=("$TLE_DEVICE_BC (build tle_device_bc on the CPU machine, copy it to .gpu/)")
[ -f "$TLE_LIB" ] || missing+=("$TLE_LIB (run scripts/gpu-run.sh build first)")
[ "$ngpu" -ge 1 ] || missing+=("a GPU (nvidia-smi lists none)")
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do say "missing: $m"; done
  exit 1
fi
say "phase $phase, $ngpu GPUs, python $py, output in $out"
"$py" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"
say "bitcode $TLE_DEVICE_BC ($(stat -c %s "$TLE_DEVICE_BC") bytes), libtle $TLE_LIB"

summary=()
status=0
ranks_note=""
[ "$ngpu" -eq 1 ] && ranks_note=" (1 rank on the one GPU: no peer)"
record() { # name, exit code
  if [ "$2" -eq 0 ]; then summary+=("$1: PASS$ranks_note"); else summary+=("$1: FAIL (exit $2)$ranks_note"); status=1; fi
}
# needs_pair NAME WHY: true (and the phase is recorded as skipped) when this
# machine has fewer than two GPUs.
needs_pair() {
  [ "$ngpu" -ge 2 ] && return 1
  summary+=("$1: SKIPPED (needs 2 GPUs, this machine has $ngpu: $2)")
  return 0
}
torchrun=("$py" -m torch.distributed.run --standalone "--nproc-per-node=$ngpu")

if wants example; then
  say "0. the example of docs/triton.md"
  timeout -k 10 120 "${torchrun[@]}" python/examples/allgather.py
  record "example (allgather)" $?
fi
if wants exchange; then
  say "1. neighbour exchange with distributed_barrier (index = program_id)"
  timeout -k 10 300 "${torchrun[@]}" python/tests_gpu/exchange.py
  record "exchange" $?
fi
if wants timeout && ! needs_pair "timeout report" "rank 1 skips the barrier rank 0 waits in"; then
  say "2. a rank skips the barrier: TLE's timeout report, not a hang"
  timeout -k 10 180 "$py" python/tests_gpu/check_timeout.py --nproc "$ngpu" --limit 150
  record "timeout report" $?
fi
if wants bench; then
  say "3. benchmark: barrier latency from Triton"
  timeout -k 10 240 "${torchrun[@]}" python/tests_gpu/bench.py
  record "benchmark" $?
fi

if wants import; then
  say "4. PyTorch symmetric memory as a TLE buffer (import_symmetric), synchronized by distributed_barrier"
  timeout -k 10 180 "${torchrun[@]}" python/tests_gpu/symm_import.py
  record "symm_mem import" $?
fi
if wants nccl; then
  say "5. a communicator made from the process group's NCCL communicator (bootstrap='nccl')"
  timeout -k 10 240 "${torchrun[@]}" python/tests_gpu/exchange.py --bootstrap nccl --iters 1000
  record "exchange, communicator from NCCL" $?
fi
if wants c10d; then
  say "6. tle/c10d.hpp: a communicator from a c10d process group in C++ (compiles an extension first)"
  timeout -k 10 300 "${torchrun[@]}" python/tests_gpu/c10d_helper.py
  record "c10d helper (C++)" $?
fi
if wants flagtree; then
  # FlagTree's own tests through tle.flagtree, and TLE's registration test
  # (scripts/gpu-flagtree.sh; its own log is $out/flagtree-gpu.log).
  if [ -d .gpu/flagtree-tests ]; then
    say "7. FlagTree's distributed tests on tle.flagtree (scripts/gpu-flagtree.sh)"
    timeout -k 10 560 scripts/gpu-flagtree.sh .gpu/flagtree-tests
    record "FlagTree tests (see flagtree-gpu.log)" $?
  else
    summary+=("FlagTree tests: SKIPPED (no .gpu/flagtree-tests; docs/flagtree.md says how to get them)")
  fi
fi
if wants signals && ! needs_pair "signals (ping-pong)" "a ping-pong between two ranks"; then
  say "8. point-to-point signals: a ping-pong whose every handoff is checked"
  timeout -k 10 300 "${torchrun[@]}" python/tests_gpu/signals.py
  record "signals (ping-pong)" $?
fi
if wants aggemm; then
  say "9. fused all-gather + GEMM (python/examples/ag_gemm.py): correctness, then against PyTorch"
  timeout -k 10 180 "${torchrun[@]}" python/examples/ag_gemm.py
  record "ag_gemm example" $?
  timeout -k 10 420 "${torchrun[@]}" python/tests_gpu/ag_gemm_bench.py
  record "ag_gemm benchmark" $?
fi
if wants abort; then
  say "10. Communicator.abort() from another thread stops a blocked Triton wait, timed"
  timeout -k 10 180 "${torchrun[@]}" python/tests_gpu/abort_latency.py
  record "abort latency" $?
fi
if wants teams; then
  say "11. INTER and WORLD teams from Triton on the GPUs of one node"
  timeout -k 10 240 "${torchrun[@]}" python/tests_gpu/teams.py
  record "teams (INTER, WORLD)" $?
fi

if wants shared; then
  say "13. two ranks sharing one GPU in one process (python -m tle.launch --device cuda)"
  timeout -k 10 240 "$py" -m tle.launch --device cuda --ranks 2 python/tests_gpu/shared_gpu.py
  record "shared GPU (2 ranks, one GPU)" $?
fi

if [[ ",$phase," == *",ops,"* ]]; then
  # Only when asked for by name (it takes minutes). On one GPU the
  # comparisons that need two are SKIPPED by the benchmark, saying so.
  say "12. tle.ops against NCCL and torch symm_mem (python/tests_gpu/ops_bench.py)"
  timeout -k 10 540 "${torchrun[@]}" python/tests_gpu/ops_bench.py ${OPS_BENCH_ARGS:-}
  record "tle.ops benchmark" $?
fi
if [[ ",$phase," == *",fused,"* ]]; then
  # Only by name (minutes: 25 shapes, each compiled and timed). On one GPU
  # it is the one-GPU mode (GEMM against cuBLAS, the schedule without
  # peers); the two-GPU verdicts say SKIPPED.
  say "13. tle.ops fused GEMMs against cuBLAS + NCCL and PyTorch async-TP (python/tests_gpu/fused_bench.py)"
  timeout -k 10 580 "${torchrun[@]}" python/tests_gpu/fused_bench.py ${FUSED_BENCH_ARGS:-}
  record "tle.ops fused benchmark" $?
fi

say "summary"
for line in "${summary[@]}"; do echo "  $line"; done
grep -h "| triton |" "$out/triton-gpu.log" 2>/dev/null | sed 's/^/  /'
grep -h "ABORT-LATENCY-US" "$out/triton-gpu.log" 2>/dev/null | sed 's/^/  /'
grep -h "VERDICT\|KERNEL |" "$out/triton-gpu.log" 2>/dev/null | sed 's/^/  /'
grep -h "\] | " "$out/triton-gpu.log" 2>/dev/null | grep -E "shape|x[0-9]+x" | sed 's/^/  /'
exit $status
