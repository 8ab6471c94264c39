#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Gives every source file of a git work tree the SPDX line of TLE's license
# (LICENSE: Apache-2.0 WITH LLVM-exception), in the comment syntax of its
# language, or with --check lists the files that lack it and fails.
#   scripts/spdx.sh [--check] [DIR]      (DIR: a git work tree, default this one)
# Idempotent: a file that has the line in its first 5 lines is left alone.
# The line goes after a `#!` line, after the `===-` banner line of an LLVM
# style header (as one more line of a /* */ banner), else first. Sources are the tracked files with these names;
# lit inputs (.mlir, .test, .ll) are not sources here: their CHECK lines
# name line numbers, which a new first line would shift.
set -euo pipefail

check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
dir=${1:-"$(dirname "$0")/.."}
cd "$dir"

readonly spdx="SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"

# comment_for FILE: the line to insert, or nothing for a non-source file.
comment_for() {
  case "$1" in
  *.h.in | *.h | *.c)
    # C headers and sources of the C API use /* */ banners.
    if head -n1 "$1" | grep -q '^/\*'; then echo "/* $spdx */"; else echo "// $spdx"; fi
    ;;
  *.cpp | *.hpp | *.cu | *.cuh | *.cc | *.td | *.def) echo "// $spdx" ;;
  *.py | *.py.in | *.sh | *.cmake | *.cmake.in | CMakeLists.txt | */CMakeLists.txt | *.toml | *.pc.in | *.map.in) echo "# $spdx" ;;
  *.map) echo "/* $spdx */" ;;
  *) ;;
  esac
}

missing=()
while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue
  line=$(comment_for "$file")
  [ -n "$line" ] || continue
  head -n5 "$file" | grep -qF "$spdx" && continue
  missing+=("$file")
  [ "$check" -eq 1 ] && continue
  first=$(head -n1 "$file")
  tmp=$(mktemp)
  case "$first" in
  # Inside a /* */ banner the line is one more line of that comment.
  '/*===-'*) { echo "$first"; echo " * $spdx"; tail -n +2 "$file"; } >"$tmp" ;;
  '#!'* | '//===-'*) { echo "$first"; echo "$line"; tail -n +2 "$file"; } >"$tmp" ;;
  *) { echo "$line"; cat "$file"; } >"$tmp" ;;
  esac
  # Keep the mode (scripts stay executable).
  cat "$tmp" >"$file"
  rm -f "$tmp"
done < <(git ls-files -z)

if [ "$check" -eq 1 ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    printf '%s\n' "${missing[@]}"
    echo "spdx: ${#missing[@]} source files lack '$spdx': run scripts/spdx.sh" >&2
    exit 1
  fi
  echo "spdx: every source file has the SPDX line"
else
  echo "spdx: added the SPDX line to ${#missing[@]} files"
fi
