#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compiles every kernel of examples/ (and the tool tests' kernel inputs, and
# the benchmark's bench/kernels/) to cuda bundles with tlec, for a GPU machine whose build has no LLVM: copy the
# output folder there and run e.g.
#   build-gpu/bin/tlerun .gpu/bundles/allreduce.bundle --target cuda \
#     --kernel allreduce --ranks 4 --grid 4 --block 64 \
#     --buffer in:i32:256:iota --buffer out:i32:256 --dump out
# Usage: scripts/make-gpu-bundles.sh [OUT_DIR (default .gpu/bundles)]
# Environment: BUILD_DIR (default build), ARCH (default sm_90).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ARCH=${ARCH:-sm_90}
OUT=${1:-.gpu/bundles}
TLEC="$BUILD_DIR/bin/tlec"
[ -x "$TLEC" ] || { echo "make-gpu-bundles: $TLEC not built" >&2; exit 1; }
mkdir -p "$OUT"

count=0
for src in examples/*.mlir examples/broken/*.mlir test/Tools/Inputs/grid-barrier.mlir \
           test/Tools/Inputs/scale.mlir test/Tools/Inputs/signal-words.mlir \
           test/Tools/Inputs/signal-never.mlir bench/kernels/*.mlir; do
  name=$(basename "$src" .mlir)
  "$TLEC" --target=cuda --arch="$ARCH" "$src" -o "$OUT/$name.bundle"
  echo "make-gpu-bundles: $src -> $OUT/$name.bundle ($(grep -m1 '^kernel ' "$OUT/$name.bundle"))"
  count=$((count + 1))
done
echo "make-gpu-bundles: $count bundles for $ARCH in $OUT"
