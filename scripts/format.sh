#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Formats C and C++ sources with the one clang-format major version the
# repository names (the "# clang-format major version: N" line of
# .clang-format), or with --check prints what would change and fails.
#   scripts/format.sh [--check] [--base REV]   the lines changed since REV
#   scripts/format.sh [--check] FILE...        whole files
# REV defaults to the merge base with main (else HEAD): a change is checked,
# not the lines before it. CLANG_FORMAT names the binary (default
# clang-format-N if on PATH, else clang-format); another major version is
# refused (exit 2), since its layout differs from the tree's.
set -euo pipefail

check=0
base=
files=()
while [ $# -gt 0 ]; do
  case "$1" in
  --check) check=1 ;;
  --base)
    [ $# -ge 2 ] || { echo "format: --base needs a revision" >&2; exit 2; }
    base=$2
    shift
    ;;
  -*) echo "format: unknown option $1 (usage: scripts/format.sh [--check] [--base REV | FILE...])" >&2; exit 2 ;;
  *) files+=("$1") ;;
  esac
  shift
done
if [ -n "$base" ] && [ ${#files[@]} -gt 0 ]; then
  echo "format: give --base or files, not both" >&2
  exit 2
fi

root=$(git rev-parse --show-toplevel)
major=$(sed -nE 's/^# clang-format major version: ([0-9]+)$/\1/p' "$root/.clang-format")
if [ -z "$major" ]; then
  echo "format: $root/.clang-format names no '# clang-format major version: N'" >&2
  exit 2
fi
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
  cf=clang-format
  command -v "clang-format-$major" >/dev/null && cf=clang-format-$major
fi
if ! version=$("$cf" --version 2>/dev/null); then
  echo "format: cannot run $cf (set CLANG_FORMAT to clang-format $major)" >&2
  exit 2
fi
have=$(sed -nE 's/.*clang-format version ([0-9]+)\..*/\1/p' <<<"$version")
if [ "$have" != "$major" ]; then
  echo "format: $cf is clang-format ${have:-of an unknown version}; the tree is formatted with $major (.clang-format): set CLANG_FORMAT" >&2
  exit 2
fi

readonly sources='.*\.(c|cc|cpp|cu|cuh|h|hpp)$'

if [ ${#files[@]} -gt 0 ]; then
  bad=()
  for f in "${files[@]}"; do
    if [ "$check" -eq 1 ]; then
      if ! "$cf" --style=file "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" -; then
        bad+=("$f")
      fi
    else
      "$cf" --style=file -i "$f"
    fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} of ${#files[@]} files are not formatted: scripts/format.sh ${bad[*]}" >&2
    exit 1
  fi
  [ "$check" -eq 1 ] && echo "format: ${#files[@]} files are formatted"
  exit 0
fi

cd "$root"
if [ -z "$base" ]; then
  base=HEAD
  if git rev-parse -q --verify main >/dev/null; then
    base=$(git merge-base HEAD main)
  fi
fi
# clang-format-diff ships beside clang-format (Debian: clang-format-diff-N).
cfd=
for name in "clang-format-diff-$major" clang-format-diff; do
  if command -v "$name" >/dev/null; then
    cfd=$name
    break
  fi
done
if [ -z "$cfd" ]; then
  echo "format: no clang-format-diff-$major or clang-format-diff on PATH" >&2
  exit 2
fi
args=(-p1 -regex "$sources" -binary "$cf" -style file)
[ "$check" -eq 1 ] || args+=(-i)
patch=$(git diff -U0 --no-color "$base" -- . | "$cfd" "${args[@]}")
if [ "$check" -eq 1 ]; then
  if [ -n "$patch" ]; then
    printf '%s\n' "$patch"
    echo "format: lines changed since $base are not formatted: scripts/format.sh --base $base" >&2
    exit 1
  fi
  echo "format: the lines changed since $base are formatted"
fi
