#!/usr/bin/env bash
# Every test that runs without a GPU: set up, build, then the lit suite
# (compiler, tlec, tlerun, examples), the GoogleTest/ctest suite (runtime,
# emulator, device library) and the Python (Triton front end) tests. GPU
# tests are reported as skipped here; scripts/gpu-run.sh runs them on GPUs.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
scripts/build.sh || exit 1

status=0
echo "== lit: compiler, tools and examples"
cmake --build --preset default --target check-tle || status=1
echo "== ctest: runtime, emulator and device library"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 || status=1
if [ -f python/pyproject.toml ]; then
  echo "== pytest: Triton front end"
  TLE_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest -q python/tests || status=1
fi
echo "== GPU suite: SKIPPED (no GPU on this machine; run scripts/gpu-run.sh on a GPU machine)"
if [ $status -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; fi
exit $status
