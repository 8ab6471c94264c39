#!/usr/bin/env bash
# Prepares, on the CPU machine, what a GPU run carries that the GPU machine
# lacks: NCCL 2.28.9's device-API headers (nccl.h, nccl_device.h,
# nccl_device/), copied from this machine's CUDA toolkit into .gpu/ (ignored
# by git; carry it with the run). The GPU machine's own nccl.h is 2.28.3 and
# PyTorch's wheel ships the 2.28.9 library without the device headers.
set -euo pipefail
cd "$(dirname "$0")/.."

src=${CUDA_HOME:-/usr/local/cuda}/include
dst=.gpu/nccl-include
if [ ! -f "$src/nccl_device.h" ]; then
  echo "gpu-prepare: $src/nccl_device.h not found (NCCL >= 2.28 headers needed)" >&2
  exit 1
fi
rm -rf "$dst"
mkdir -p "$dst"
cp "$src/nccl.h" "$src/nccl_device.h" "$dst/"
cp -r "$src/nccl_device" "$dst/"
version=$(sed -n 's/^#define NCCL_VERSION_CODE \([0-9]*\).*/\1/p' "$dst/nccl.h")
echo "gpu-prepare: NCCL headers (version code $version) in $dst ($(du -sh "$dst" | cut -f1))"

# Example bundles for `tlerun --target cuda` are compiled here too (the GPU
# machine has no LLVM) by the examples' own script, into .gpu/bundles/, each
# with a NAME.sh that runs it through $TLERUN and checks its output;
# gpu-run.sh runs every .gpu/bundles/*.sh it finds.
if [ -x scripts/gpu-bundles.sh ]; then
  scripts/gpu-bundles.sh
fi
