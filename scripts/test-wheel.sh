#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Python wheel, as a pip user gets it (CI's "wheel" suite): builds
# tle-triton with its standard backend (scikit-build-core, from PyPI) into a
# wheel holding libtle.so and libtle_device.bc, installs it into a fresh
# virtual environment (Triton 3.6 comes from PyPI, or from pip's cache after
# scripts/setup.sh), and runs test/install/wheel_check.py there, outside the
# source tree and with no TLE_* variables: version, packaged files, an sm_90
# Triton kernel with distributed_barrier compiled and linked, and the
# message of tle.torch without PyTorch. The wheel's CMake build (runtime and
# bitcode only) is kept in build-wheel/ between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d /tmp/tle-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
say() { echo "[test-wheel +${SECONDS}s] $*"; }

version=$(sed -n 's/^project(tle VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
.venv/bin/pip wheel -q --no-deps ./python -w "$work/dist"
wheel=$(ls "$work"/dist/tle_triton-"$version"-*.whl)
say "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel"
say "installed it and its dependencies into a fresh venv"

cd "$work"
env -u TLE_DEVICE_BC -u TLE_LIB -u TLE_BUILD_DIR -u TLE_DEBUG -u TLE_DEBUG_FILE \
  -u TLE_BARRIER_TIMEOUT_MS -u TLE_EMU_SEED \
  "$work/venv/bin/python" "$root/test/install/wheel_check.py" "$version"
say "done"
