#!/usr/bin/env bash
# Every test that runs without a GPU: set up, build, then the lit suite
# (compiler, tlec, tlerun, examples), the GoogleTest/ctest suite (runtime,
# emulator, device library), the installed package used from outside the
# tree (scripts/test-install.sh), a bounded fuzzing run of the bootstrap's
# decoders (TLE_FUZZ_SECONDS per target, default 30), the Python (Triton
# front end) tests and the wheel in a fresh venv (scripts/test-wheel.sh).
# GPU tests are reported as skipped here;
# scripts/gpu-run.sh runs them on GPUs.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
scripts/build.sh || exit 1

passed=0
failed=0
suite() { # suite NAME COMMAND...: runs one suite and counts its verdict
  local name=$1
  shift
  echo "== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "== $name: FAILED"; fi
}
suite "lit: compiler, tools and examples" \
  cmake --build --preset default --target check-tle
suite "ctest: runtime, emulator and device library" \
  ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
suite "install: the CMake package, pkg-config and the tools, used from outside the tree" \
  scripts/test-install.sh build
suite "fuzz: bootstrap decoders, ${TLE_FUZZ_SECONDS:-30} s per target" \
  scripts/fuzz.sh "${TLE_FUZZ_SECONDS:-30}"
if [ -f python/pyproject.toml ]; then
  suite "pytest: Triton front end" \
    env TLE_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest -q python/tests
  suite "wheel: tle-triton built, installed in a fresh venv, an sm_90 kernel compiled" \
    scripts/test-wheel.sh
fi
echo "== GPU suite: SKIPPED (no GPU on this machine; run scripts/gpu-run.sh on a GPU machine)"
if grep -q '^REQUIRES: spdx-headers-added' test/Repo/spdx-headers.test; then
  echo "== SPDX headers: SKIPPED (run scripts/spdx.sh, commit, then delete the REQUIRES line of test/Repo/spdx-headers.test)"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
