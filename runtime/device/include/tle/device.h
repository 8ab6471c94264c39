//===- device.h - The TLE device ABI ----------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The device ABI as CUDA C++ kernels (nvcc or clang) and emulator kernels
// (host C++) see it: every entry point of tle/abi.def, declared with its C
// signature (abi.def documents each), and the encodings of tle/abi.h.
// Compiled as CUDA, this header also pulls in the implementation, so a
// kernel built with `nvcc -arch=sm_90` gets the functions inline and needs
// neither -rdc nor a library; compiled as plain C++ it only declares them,
// and libtle (the emulator build) defines them. Names and encodings are
// FlagCX's, so IR that calls FlagCX's bitcode links against TLE's and the
// reverse. C++ code may prefer the typed API of tle/barrier.h and
// tle/session.h. Plain C (an emulator kernel launched with tleEmuLaunch,
// tle/emu.h) gets the same declarations and abi.h's C constants.
// docs/device-library.md is the long form.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DEVICE_H
#define TLE_DEVICE_H

#include "tle/abi.h"
#ifdef __cplusplus
#include "tle/detail/DevComm.h"
#endif

#include <stdint.h>

// The bitcode's exports are always_inline: a consumer's optimizer then
// inlines every call, not only a function's single call site (Triton's
// inliner left a kernel with two barriers calling tleTritonBarrier out of
// line), and only inlined can the communicator loads of a barrier in a loop
// be hoisted or shared with an earlier barrier. The arguments are nearly
// always constants, so the inlined code folds down to one group and kind.
#if defined(__CUDACC__) && defined(TLE_DEVICE_EXPORT)
#define TLE_DEVICE_API extern "C" __device__ __attribute__((always_inline))
#elif defined(__CUDACC__)
#define TLE_DEVICE_API extern "C" __device__ __forceinline__
#elif defined(__cplusplus)
#define TLE_DEVICE_API extern "C" __attribute__((visibility("default")))
#else
#define TLE_DEVICE_API extern __attribute__((visibility("default")))
#endif

#define TLE_ABI_FUNCTION(Name, Result, What, ...)                              \
  TLE_DEVICE_API TLE_ABI_CTYPE_##Result Name(                                  \
      TLE_ABI_MAP(TLE_ABI_CPARAM, __VA_ARGS__));
#include "tle/abi.def"

#if defined(__CUDACC__) || defined(TLE_DEVICE_EXPORT)
#include "tle/impl/Entry.h"
#endif

#endif // TLE_DEVICE_H
