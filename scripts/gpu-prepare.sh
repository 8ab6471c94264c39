#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

# The device bitcode for the Triton tests (gpu-triton.sh links it).
build_dir=${BUILD_DIR:-build}
if [ -f "$build_dir/lib/libtle_device.bc" ]; then
  cp "$build_dir/lib/libtle_device.bc" .gpu/libtle_device.bc
  echo "gpu-prepare: device bitcode in .gpu/libtle_device.bc"
else
  echo "gpu-prepare: no $build_dir/lib/libtle_device.bc (build the default preset first): no Triton tests"
fi

# Example bundles for `tlerun --target cuda`, compiled here (the GPU machine
# has no LLVM) with tlec from build/ (or $TLEC), each with a NAME.sh beside
# it that runs it on 2 GPUs through $TLERUN and checks the output like the
# lit tests in test/Examples do on the emulator. gpu-run.sh runs every
# .gpu/bundles/*.sh.
if [ ! -x "$build_dir/bin/tlec" ]; then
  echo "gpu-prepare: no $build_dir/bin/tlec (build the default preset first): no example bundles"
  exit 0
fi
rm -rf .gpu/bundles
BUILD_DIR=$build_dir scripts/make-gpu-bundles.sh .gpu/bundles

# check NAME EXPECTED-LINE-COUNT REGEX -- TLERUN-ARGS: runs the bundle on
# 2 GPUs and counts output lines matching REGEX.
cat >.gpu/bundles/lib.inc <<'INC'
# Sourced by the bundle checks: run "$TLERUN" on the bundle beside this file.
b=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
expect_lines() { # expect_lines COUNT REGEX TLERUN-ARGS...
  local count=$1 regex=$2
  shift 2
  local out
  out=$("$TLERUN" "$@" --target cuda --ranks 2 2>&1)
  local rc=$?
  echo "$out"
  local got
  got=$(grep -cE "$regex" <<<"$out")
  if [ "$rc" -ne 0 ] || [ "$got" -ne "$count" ]; then
    echo "CHECK FAILED: exit $rc, $got of $count lines match: $regex"
    return 1
  fi
}
INC
cat >.gpu/bundles/allreduce.sh <<'SH'
# One-shot all-reduce: out[i] = 2 * i on both ranks; then 100 launches
# reusing the slots (rank init: out = 0 + 1).
source "$(dirname "$0")/lib.inc"
expect_lines 2 '"buffer": "out", "values": \[0, 2, 4, 6, 8, 10, 12, 14\]' \
  "$b/allreduce.bundle" --kernel allreduce --grid 2 --block 4 \
  --buffer in:i32:8:iota --buffer out:i32:8 --dump out &&
expect_lines 2 '"buffer": "out", "values": \[1, 1, 1, 1\]' \
  "$b/allreduce.bundle" --kernel allreduce --grid 2 --block 2 \
  --buffer in:i32:4:rank --buffer out:i32:4 --dump out --repeat 100
SH
cat >.gpu/bundles/ring.sh <<'SH'
# Ring exchange: rank 0 receives rank 1's values and the reverse; every
# thread's own check passed; then 4 blocks of 8 threads (one slot each).
source "$(dirname "$0")/lib.inc"
expect_lines 1 '"rank": 0, "buffer": "recv", "values": \[1000, 1001, 1002, 1003\]' \
  "$b/ring.bundle" --kernel ring --block 4 \
  --buffer recv:i32:4 --buffer ok:i32:4 --dump recv --dump ok &&
expect_lines 2 '"buffer": "ok", "values": \[(1, ){31}1\]' \
  "$b/ring.bundle" --kernel ring --grid 4 --block 8 \
  --buffer recv:i32:32 --buffer ok:i32:32 --dump ok
SH
cat >.gpu/bundles/split-arrive-wait.sh <<'SH'
# Split arrive/wait with local work in between.
source "$(dirname "$0")/lib.inc"
expect_lines 2 '"buffer": "out", "values": \[300, 302, 304, 306\]' \
  "$b/split-arrive-wait.bundle" --kernel split --block 4 \
  --buffer gather:i32:8 --buffer work:i32:4 --buffer out:i32:4 --dump out
SH
cat >.gpu/bundles/grid-barrier.sh <<'SH'
# Grid barrier (cooperative launch): every block of both ranks sees every
# other block's flag after the barrier (8 blocks: sums of 1..8 = 36).
source "$(dirname "$0")/lib.inc"
expect_lines 2 '"buffer": "sums", "values": \[(36, ){7}36\]' \
  "$b/grid-barrier.bundle" --kernel grid_sum --grid 8 --block 32 \
  --buffer flags:i32:8 --buffer sums:i32:8 --dump sums
SH
cat >.gpu/bundles/skip-barrier.sh <<'SH'
# Rank 0 skips the barrier: rank 1's wait times out after 1 s, tlerun exits
# with status 1 within 2 s and names slot 0 and missing peer 0.
b=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s%N)
out=$("$TLERUN" "$b/skip-barrier.bundle" --kernel skip_barrier --ranks 2 \
  --target cuda --timeout-ms 1000 2>&1)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "$out"
echo "exit $rc after $ms ms"
[ "$rc" -eq 1 ] && grep -q "slot 0" <<<"$out" && grep -q "missing peers: 0" <<<"$out" ||
  { echo "CHECK FAILED: expected exit 1 and a record naming slot 0 and missing peer 0"; exit 1; }
SH
cat >.gpu/bundles/ring-signal.sh <<'SH'
# Ring exchange with point-to-point signals: every thread's own check
# passed, 4 blocks of 8 threads (one word each), 100 launches reusing the
# words; then constant indices: each rank read 5 on word 0.
source "$(dirname "$0")/lib.inc"
expect_lines 2 '"buffer": "ok", "values": \[(1, ){31}1\]' \
  "$b/ring-signal.bundle" --kernel ring_signal --grid 4 --block 8 \
  --buffer recv:i32:32 --buffer ok:i32:32 --dump ok --repeat 100 &&
expect_lines 2 '"buffer": "out", "values": \[5\]' \
  "$b/signal-words.bundle" --kernel words --buffer out:i64:1 --dump out --repeat 100
SH
cat >.gpu/bundles/signal-never.sh <<'SH'
# A wait for a signal that never comes: the device deadline ends it after
# 1 s with a record naming the word and the values.
b=$(cd "$(dirname "$0")" && pwd)
out=$("$TLERUN" "$b/signal-never.bundle" --kernel never --ranks 2 \
  --target cuda --timeout-ms 1000 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] && grep -q "signal wait timed out after .* ms on signal 1: it holds 0, waiting for >= 1" <<<"$out" ||
  { echo "CHECK FAILED: expected exit 1 and a record naming signal 1"; exit 1; }
SH
cat >.gpu/bundles/trace.sh <<'SH'
# tlerun --trace on GPUs: both ranks' device rings in one Perfetto document
# (a process per rank, a begin and an end per sync and CTA, ts from the
# first event), and after a timeout the trace still holds the wait that
# never ended (the rings are in host memory). The files are kept in $OUT.
b=$(cd "$(dirname "$0")" && pwd)
t=${OUT:-/tmp/tle-out}
mkdir -p "$t"
"$TLERUN" "$b/allreduce.bundle" --target cuda --ranks 2 --kernel allreduce \
  --grid 4 --block 64 --buffer in:i32:256:iota --buffer out:i32:256 \
  --repeat 3 --trace "$t/trace-allreduce.json" || { echo "CHECK FAILED: traced run"; exit 1; }
"$TLERUN" "$b/skip-barrier.bundle" --target cuda --ranks 2 --kernel skip_barrier \
  --timeout-ms 1000 --trace "$t/trace-skip-barrier.json"
[ $? -eq 1 ] || { echo "CHECK FAILED: the skipped barrier did not fail"; exit 1; }
python3 - "$t" <<'PY' || { echo "CHECK FAILED: trace contents"; exit 1; }
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/trace-allreduce.json"))
ev = [e for e in doc["traceEvents"] if e.get("cat") == "barrier"]
for rank in (0, 1):
    b = [e for e in ev if e["pid"] == rank and e["ph"] == "B"]
    E = [e for e in ev if e["pid"] == rank and e["ph"] == "E"]
    # 3 launches x 4 CTAs x 2 syncs
    assert len(b) == len(E) == 24, (rank, len(b), len(E))
    assert all(e["ts"] >= 0 for e in b + E)
names = {e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"}
assert names == {"rank 0", "rank 1"}, names
dead = json.load(open(f"{d}/trace-skip-barrier.json"))
ev = [e for e in dead["traceEvents"] if e.get("cat") == "barrier" and e["pid"] == 1]
assert [e["ph"] for e in ev] == ["B"], ev
print("trace: 24 syncs per rank over 3 launches; the timed-out wait is in the trace")
PY
SH
echo "gpu-prepare: example bundles and checks in .gpu/bundles: $(ls .gpu/bundles | tr '\n' ' ')"

# The one-GPU benchmark's compiled loops (tle-bench-shared, rows tlec and
# triton): tlec's PTX of bench/kernels/shared_loop.mlir (its loop of
# barriers becomes a session) and Triton's of bench/kernels/triton_loop.py,
# compiled here for sm_90 with the device bitcode; the benchmark loads them
# with the driver API.
mkdir -p .gpu/bench
"$build_dir/bin/tlec" --target=cuda --arch=sm_90 --emit=ptx bench/kernels/shared_loop.mlir \
  -o .gpu/bench/shared_loop.ptx
echo "gpu-prepare: tlec's one-GPU loop in .gpu/bench/shared_loop.ptx"
python=${PYTHON:-.venv/bin/python}
if [ -f "$build_dir/lib/libtle_device.bc" ] && "$python" -c "import triton" 2>/dev/null; then
  TLE_BUILD_DIR=$(cd "$build_dir" && pwd) PYTHONPATH=python "$python" bench/kernels/triton_loop.py .gpu/bench/triton
else
  echo "gpu-prepare: no Triton or no bitcode: no Triton rows in tle-bench-shared"
fi
