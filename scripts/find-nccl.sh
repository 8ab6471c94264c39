# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# shellcheck shell=bash disable=SC2034,SC2154
# Sourced by gpu-run.sh and gpu-lab.sh on the GPU machine, with $root set to
# the repository root. Sets
#   nccl_lib  libnccl.so.2 2.28.9: PyTorch's wheel copy (the system library
#             there is 2.28.3 and does not match the 2.28.9 device headers)
#   nccl_inc  a folder with nccl.h, nccl_device.h and nccl_device/: $NCCL_INC,
#             the .gpu/nccl-include that scripts/gpu-prepare.sh carries, or
#             the wheel's include/
# each empty when not found.
nccl_lib=$(find /opt -name libnccl.so.2 -path '*nvidia/nccl/lib*' 2>/dev/null | head -1)
[ -n "$nccl_lib" ] || nccl_lib=$(find /opt /usr -name libnccl.so.2 2>/dev/null | head -1)
nccl_inc=
for cand in "${NCCL_INC:-}" "$root/.gpu/nccl-include" \
  "${nccl_lib:+$(dirname "$(dirname "$nccl_lib")")/include}"; do
  if [ -n "$cand" ] && [ -f "$cand/nccl_device.h" ]; then
    nccl_inc=$(cd "$cand" && pwd)
    break
  fi
done
