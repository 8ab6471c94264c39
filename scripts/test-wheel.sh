#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Python wheel, as a pip user gets it (CI's "wheel" suite): builds
# tle-triton as python/README.md says (scripts/build-wheel.sh: its standard
# backend, scikit-build-core, then auditwheel) into a manylinux wheel
# holding libtle.so and libtle_device.bc, installs it into a fresh virtual
# environment (Triton 3.6 and NumPy come from PyPI, or from pip's cache
# after scripts/setup.sh), and runs test/install/wheel_check.py there,
# outside the source tree and with no TLE_* variables: version, packaged
# files, the NumPy pulled in, an sm_90 Triton kernel with
# distributed_barrier compiled and linked, and the message of tle.torch
# without PyTorch; then the README's first example on 2 CPU ranks with the
# installed launcher. The wheel's CMake build (runtime and bitcode only) is
# kept in build-wheel/ between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d /tmp/tle-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
say() { echo "[test-wheel +${SECONDS}s] $*"; }

version=$(sed -n 's/^project(tle VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
wheel=$(scripts/build-wheel.sh "$work/dist")
case $(basename "$wheel") in
  tle_triton-"$version"-py3-none-manylinux_*_x86_64.whl) ;;
  *) echo "test-wheel: FAILED: $wheel is not a manylinux wheel" >&2; exit 1 ;;
esac
say "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel"
say "installed it and its dependencies into a fresh venv"

cd "$work"
env -u TLE_DEVICE_BC -u TLE_LIB -u TLE_BUILD_DIR -u TLE_DEBUG -u TLE_DEBUG_FILE \
  -u TLE_BARRIER_TIMEOUT_MS -u TLE_EMU_SEED \
  "$work/venv/bin/python" "$root/test/install/wheel_check.py" "$version"
out=$(env -u TLE_DEVICE_BC -u TLE_LIB -u TLE_BUILD_DIR "$work/venv/bin/python" -m tle.launch --ranks 2 \
  "$root/python/examples/allgather.py" 2>&1) || { echo "$out"; exit 1; }
for r in 0 1; do
  grep -qx "\[rank$r\]: rank $r of 2: all-gather OK" <<<"$out" ||
    { echo "$out"; echo "test-wheel: FAILED: the example on CPU ranks" >&2; exit 1; }
done
say "python -m tle.launch --ranks 2 allgather.py from the wheel: OK"
say "done"
