//===- Error.h - Status codes and the thread-local error detail -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every failure inside the host runtime is a tleResult_t plus a one-line
// detail kept per thread for tleGetLastErrorDetail(). `fail` records the
// detail and returns the code, so error paths read `return fail(...)`.
// `guard` is the C boundary: it runs a body, turns any escaping C++
// exception into a status, prefixes the detail with the API name and logs
// the failure at TLE_DEBUG=WARN.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_ERROR_H
#define TLE_HOST_ERROR_H

#include "tle/support/Log.h"
#include "tle/tle.h"

#include <new>
#include <stdexcept>
#include <string>

namespace tle {

/// Records `fmt...` (printf-style) as this thread's last error detail and
/// returns `code`.
tleResult_t fail(tleResult_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// Like fail(tleSystemError, ...), with ": <strerror(err)>" appended.
tleResult_t failErrno(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// This thread's last error detail.
const std::string &lastErrorDetail();
/// Replaces the detail (used to prefix it with context).
void setLastErrorDetail(std::string detail);

/// Runs `body` (returning tleResult_t) at the C API boundary named `api`: no
/// exception escapes, and a failure's detail starts with "api: ".
template <typename Body> tleResult_t guard(const char *api, Body &&body) {
  tleResult_t result;
  try {
    result = body();
  } catch (const std::bad_alloc &) {
    result = fail(tleSystemError, "out of host memory");
  } catch (const std::exception &e) {
    result = fail(tleInternalError, "unexpected exception: %s", e.what());
  } catch (...) {
    result = fail(tleInternalError, "unexpected exception");
  }
  if (result != tleSuccess) {
    try {
      setLastErrorDetail(std::string(api) + ": " + lastErrorDetail());
    } catch (...) {
      // Out of memory while prefixing: the unprefixed detail still stands.
    }
    // Every failure of the C API, as the caller sees it.
    TLE_LOG(Warn, -1, "%s (%s)", lastErrorDetail().c_str(),
            tleGetErrorString(result));
  }
  return result;
}

} // namespace tle

#endif // TLE_HOST_ERROR_H
