#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Every test that runs without a GPU: set up, build, then the lit suite
# (compiler, tlec, tlerun, examples), the GoogleTest/ctest suite (runtime,
# emulator, device library), the installed package used from outside the
# tree (scripts/test-install.sh), a bounded fuzzing run of the bootstrap's
# decoders (TLE_FUZZ_SECONDS per target, default 30), the Python (Triton
# front end) tests, the wheel in a fresh venv (scripts/test-wheel.sh), and
# the mutation job (scripts/mutate.py: every listed mutant of the device
# library must make its tests fail; docs/testing.md). GPU tests are
# reported as skipped here; scripts/gpu-run.sh runs them on GPUs. The
# summary counts the tests each suite skipped: a suite whose runner says
# "100% passed" may still have skipped some.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
scripts/build.sh || exit 1

passed=0
failed=0
skips=()
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# The tests a suite's output reports as skipped: ctest lists them as
# "(Skipped)", lit counts "Unsupported"/"Skipped", pytest "N skipped".
skipped_in() {
  local ctest lit py
  ctest=$(grep -cE "\((Skipped|Disabled)\)$" "$1")
  lit=$(sed -nE 's/^ *(Unsupported|Skipped|Excluded) *: *([0-9]+).*/\2/p' "$1" | awk '{s += $1} END {print s + 0}')
  py=$(grep -oE "[0-9]+ skipped" "$1" | tail -1 | awk '{print $1 + 0}')
  echo $((ctest + lit + ${py:-0}))
}
suite() { # suite NAME COMMAND...: runs one suite and counts its verdict
  local name=$1
  shift
  echo "== $name"
  local log="$logs/$((passed + failed)).log"
  if "$@" 2>&1 | tee "$log"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "== $name: FAILED"; fi
  local n
  n=$(skipped_in "$log")
  [ "$n" -eq 0 ] || skips+=("$name: $n skipped")
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
suite "emulator benchmark: cost by rank count, within 3x of the recorded figures" \
  python3 scripts/emu-bench.py --check
# Mutants, last: it rebuilds a few test binaries (target tle-mutants) and
# runs each mutant's tests, about 3 minutes on 2 cores.
suite "mutation: every listed mutant of the device library caught" \
  python3 scripts/mutate.py
echo "== GPU suite: SKIPPED (no GPU on this machine; run scripts/gpu-run.sh on a GPU machine)"
skips+=("GPU suite: skipped whole")
echo "suites: $passed passed, $failed failed"
for s in "${skips[@]}"; do echo "  skipped: $s"; done
[ "$failed" -eq 0 ]
