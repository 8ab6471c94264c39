#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# FlagTree's own distributed tests on stock Triton + TLE (tle.flagtree), and
# TLE's registration test, on the GPU machine (2 GPUs), from the repository
# root:
#   scripts/gpu-flagtree.sh [DIR]     DIR: FlagTree's test files (default .gpu/flagtree-tests)
# DIR holds the six files of scripts/flagtree-tests.py's manifest (they are
# FlagTree's, so not in this repository: docs/flagtree.md says how to get
# them); each runs unmodified but for the import line and the assertions on
# FlagCX names in the PTX (flagtree-tests.py prepare prints both edits).
# Needs .gpu/libtle_device.bc (carried from the CPU machine) and a Python with
# torch and triton 3.6 ($PYTHON, else /opt/torch/.venv/bin/python, else
# python3); builds libtle with CUDA (build-gpu, target tle) first. Output:
# ${OUT:-/tmp}/flagtree-gpu.log; a PASS/FAIL line per test last; the exit
# status is non-zero if anything failed.
set -uo pipefail
# Multicast stays off in every program: never remove these three.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

cd "$(dirname "$0")/.."
root=$(pwd)
tests=${1:-$root/.gpu/flagtree-tests}
out=${OUT:-/tmp}
mkdir -p "$out"
exec > >(tee -a "$out/flagtree-gpu.log") 2>&1
say() { echo "[gpu-flagtree $(date +%T) +${SECONDS}s] $*"; }

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
prepared=$(mktemp -d /tmp/tle-flagtree-tests.XXXXXX)
trap 'rm -rf "$TRITON_CACHE_DIR" "$prepared"' EXIT
# Two ranks, whatever the machine has: FlagTree's tests are written for two
# GPUs (MeshConfig(device=2)). CUDA_VISIBLE_DEVICES picks which two.
ngpu=2

missing=()
[ -n "$py" ] || missing+=("a Python with torch and triton (set PYTHON)")
[ -f "$TLE_DEVICE_BC" ] || missing+=("$TLE_DEVICE_BC (build tle_device_bc on the CPU machine, copy it to .gpu/)")
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do say "missing: $m"; done
  exit 1
fi
say "building libtle with CUDA (build-gpu, target tle)"
if [ ! -f build-gpu/build.ninja ]; then
  cmake --preset gpu >/dev/null || { say "cmake --preset gpu failed"; exit 1; }
fi
timeout -k 10 300 cmake --build build-gpu --target tle -j "$(nproc)" | tail -2 ||
  { say "building libtle failed"; exit 1; }
"$py" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"
say "FlagTree's tests from $tests"
"$py" scripts/flagtree-tests.py prepare "$tests" "$prepared" || exit 1

summary=()
status=0
record() { # name, exit code
  if [ "$2" -eq 0 ]; then summary+=("$1: PASS"); else summary+=("$1: FAIL (exit $2)"); status=1; fi
}
torchrun=("$py" -m torch.distributed.run --standalone "--nproc-per-node=$ngpu")

# The distributed tests, each its own job of two ranks (they end with
# cleanup_communicator, and get_mem_pool starts torch.distributed).
for name in test_tle_get_local_pe test_tle_get_node_rank test_tle_distributed_d2d test_tle_d2d_barrier \
  test_tle_distributed_barrier_multi_gpu; do
  say "$name (torchrun, $ngpu ranks)"
  (cd "$prepared" && timeout -k 10 180 "${torchrun[@]}" "$name.py")
  record "FlagTree $name" $?
done
# One process: shard_id over a mesh of blocks, no communicator.
say "test_tle_shard_id_runtime (pytest, one GPU)"
(cd "$prepared" && timeout -k 10 180 "$py" -m pytest -q -p no:cacheprovider test_tle_shard_id_runtime.py)
record "FlagTree test_tle_shard_id_runtime" $?

say "TLE: registering tensors the program has (default allocator, shareable pool)"
# PyTorch's default allocator as this test means it: cudaMalloc segments.
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False timeout -k 10 180 "${torchrun[@]}" python/tests_gpu/register.py share
record "TLE register (share)" $?
say "TLE: a cuMem tensor (expandable_segments) is refused with the reason"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout -k 10 180 "${torchrun[@]}" python/tests_gpu/register.py refuse
record "TLE register (refuse expandable_segments)" $?

say "summary"
for line in "${summary[@]}"; do echo "  $line"; done
exit $status
