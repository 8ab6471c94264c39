#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The main job: set up, build, then compile the one-shot all-reduce example
# and run it on 4 emulated ranks, verifying the sum and printing a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
TLE_SKIP_PYTHON=1 scripts/setup.sh
scripts/build.sh
exec scripts/main-job.sh
