#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The main job, after the build: run the one-shot all-reduce example on 4
# emulated ranks, 20 launches, verify that every rank's result is the sum of
# all ranks' inputs, and print tlerun's summary. Fails (non-zero) if tlerun
# fails or any value is wrong. BUILD_DIR overrides the build folder (build/).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
RANKS=4 GRID=4 BLOCK=64 COUNT=256 REPEAT=20

# Reads tlerun's --dump lines on stdin; every rank's out[i] must be
# RANKS * i (each rank's `in` is iota).
check='
import json, sys
ranks, count = int(sys.argv[1]), int(sys.argv[2])
lines = [json.loads(l) for l in sys.stdin if l.startswith("{")]
seen = sorted(l["rank"] for l in lines if l["buffer"] == "out")
if seen != list(range(ranks)):
    sys.exit(f"main job: FAILED: expected dumps of ranks 0..{ranks - 1}, got {seen}")
expected = [ranks * i for i in range(count)]
for line in lines:
    rank, values = line["rank"], line["values"]
    if len(values) != count:
        sys.exit(f"main job: FAILED: rank {rank} dumped {len(values)} values")
    for i, (v, e) in enumerate(zip(values, expected)):
        if v != e:
            sys.exit(f"main job: FAILED: rank {rank} out[{i}] = {v}, expected {e}")
print(f"main job: all-reduce verified: {ranks} ranks x {count} elements, "
      f"out[i] == {ranks} * i on every rank")
'

echo "== main job: one-shot all-reduce, $RANKS emulated ranks, $REPEAT launches"
dump=$(mktemp)
trap 'rm -f "$dump"' EXIT
# The dump goes to stdout (checked below), the summary to stderr (shown).
"$BUILD_DIR/bin/tlerun" examples/allreduce.mlir --kernel allreduce \
  --ranks "$RANKS" --grid "$GRID" --block "$BLOCK" \
  --buffer "in:i32:$COUNT:iota" --buffer "out:i32:$COUNT" \
  --dump out --repeat "$REPEAT" >"$dump"
python3 -c "$check" "$RANKS" "$COUNT" <"$dump"
echo "main job: PASSED"
