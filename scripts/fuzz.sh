#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs every fuzz target of the build (fuzz/, built when the compiler has
# libFuzzer) for a bounded time: SECONDS per target (default 60), starting
# from the committed seed corpus fuzz/corpus/<target>/. New inputs go to a
# scratch folder, never into the committed corpus. A crash, a sanitizer
# report, a broken promise, a leak or a slow input fails the run and keeps
# the input in build/fuzz-artifacts/; replay it with
# `build/bin/tle-fuzz-<target> <file>`. Usage: scripts/fuzz.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${TLE_BUILD_DIR:-build}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: SECONDS must be a positive number of seconds, not '$seconds'" >&2
  exit 2
fi

shopt -s nullglob
targets=("$build"/bin/tle-fuzz-*)
if [ ${#targets[@]} -eq 0 ]; then
  if grep -q '^TLE_HAVE_LIBFUZZER:INTERNAL=1$' "$build/CMakeCache.txt" 2>/dev/null; then
    echo "fuzz: no fuzz target in $build/bin although the compiler has libFuzzer; build first" >&2
    exit 1
  fi
  echo "fuzz: SKIPPED (the compiler of $build has no libFuzzer)"
  exit 0
fi

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
for exe in "${targets[@]}"; do
  name=${exe##*/tle-fuzz-}
  corpus=fuzz/corpus/$name
  if [ ! -d "$corpus" ]; then
    echo "fuzz: $name has no seed corpus in $corpus" >&2
    failed=$((failed + 1))
    continue
  fi
  mkdir -p "$scratch/$name"
  echo "fuzz: $name for ${seconds} s from $corpus"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a decoder
  # must never allocate what a frame announces.
  if "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
      "$scratch/$name" "$corpus" >"$scratch/$name.log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|new_units_added)' "$scratch/$name.log" |
      sed "s/^/fuzz: $name: /"
  else
    tail -n 40 "$scratch/$name.log"
    echo "fuzz: $name FAILED; inputs kept in $artifacts/" >&2
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ]
