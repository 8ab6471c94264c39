//===- DeviceBitcode.cu - The device library, built as LLVM bitcode -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The bitcode build of the device library (build/lib/libtle_device.bc):
// clang-22 compiles this file in CUDA device-only mode, and every ABI
// function of tle/device.h comes out as an external definition, ready to be
// linked into kernels that a compiler
// (tlec, Triton's extern_libs) emits calls for, and then internalized and
// inlined there.
//
//===----------------------------------------------------------------------===//

#define TLE_DEVICE_EXPORT 1
#include "tle/device.h"
