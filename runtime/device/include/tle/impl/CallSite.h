//===- CallSite.h - Where a typed API call was made -------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The trailing `tle::CallSite site` parameter of the typed C++ API
// (tle/barrier.h, tle/signal.h, tle/session.h): its default argument takes
// the caller's file and line, so that the emulator's reports and traces
// name the user's line of a C++ kernel the way they name a compiled
// kernel's op location, and the failure record's site id names it
// (docs/design.md, "Call sites"). On GPUs it holds the line only (the
// device cannot register a file name), an immediate that only the failure
// path reads. CallScope, in Platform.h, tells the platform layer for the
// duration of one call.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_CALLSITE_H
#define TLE_IMPL_CALLSITE_H

#include <stdint.h>

namespace tle {

/// The source location of a call of the typed API. A wrapper of the API
/// may take a CallSite of its own and pass its caller's on.
struct CallSite {
#if defined(__CUDACC__)
  uint32_t line = 0; ///< 0: unknown
  __host__ __device__ static constexpr CallSite
  current(uint32_t line = __builtin_LINE()) {
    return {line};
  }
#else
  const char *file = nullptr; ///< null: unknown
  uint32_t line = 0;
  /// The caller's location: a default argument is evaluated where the call
  /// is, and so are these builtins (gcc, clang and nvcc have them).
  static constexpr CallSite current(const char *file = __builtin_FILE(),
                                    uint32_t line = __builtin_LINE()) {
    return {file, line};
  }
#endif
};

} // namespace tle

#endif // TLE_IMPL_CALLSITE_H
