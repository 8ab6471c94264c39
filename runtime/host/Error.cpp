//===- Error.cpp - Error strings and the thread-local detail ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements tleGetErrorString / tleGetLastErrorDetail and the helpers that
// record a detail. The detail is thread-local so concurrent ranks (one
// thread each) never overwrite each other's messages.
//
//===----------------------------------------------------------------------===//

#include "Error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace tle {
namespace {
thread_local std::string detail;

std::string vformat(const char *fmt, va_list args) {
  char buf[512];
  vsnprintf(buf, sizeof(buf), fmt, args);
  return buf;
}
} // namespace

tleResult_t fail(tleResult_t code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  detail = vformat(fmt, args);
  va_end(args);
  return code;
}

tleResult_t failErrno(int err, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string msg = vformat(fmt, args);
  va_end(args);
  char buf[128];
  // The GNU strerror_r returns the message, which may not be `buf`.
  const char *text = strerror_r(err, buf, sizeof(buf));
  detail = msg + ": " + text;
  return tleSystemError;
}

const std::string &lastErrorDetail() { return detail; }

void setLastErrorDetail(std::string d) { detail = std::move(d); }

} // namespace tle

extern "C" {

const char *tleGetErrorString(tleResult_t result) {
  // Switch on an int: from C, any int may arrive in the enum's place.
  int code;
  memcpy(&code, &result, sizeof(code));
  switch (code) {
  case tleSuccess:
    return "success";
  case tleInvalidArgument:
    return "invalid argument";
  case tleSystemError:
    return "system call failed";
  case tleCudaError:
    return "CUDA call failed";
  case tleTimeout:
    return "timed out";
  case tleDeadlock:
    return "deadlock: every emulated thread is blocked";
  case tleIndexOutOfRange:
    return "barrier slot or signal index out of range";
  case tleInvalidComm:
    return "invalid communicator";
  case tlePeerFailure:
    return "a peer failed, refused this rank or never joined";
  case tleNotSupported:
    return "not supported by this build";
  case tleInternalError:
    return "internal error in TLE";
  case tleLaunchFailure:
    return "kernel launch failed";
  case tleDataRace:
    return "data race on symmetric memory";
  case tleBarrierMisuse:
    return "barrier slot misused";
  case tleAborted:
    return "the communicator was aborted; it can only be destroyed";
  case tleNumResults:
    break;
  }
  return "unknown tleResult_t";
}

const char *tleGetLastErrorDetail(void) { return tle::detail.c_str(); }

} // extern "C"
