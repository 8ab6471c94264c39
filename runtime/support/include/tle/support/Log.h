//===- Log.h - TLE_DEBUG: the runtime's and the tools' log ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One log for libtle and the tools that link it, switched by the environment
// like NCCL_DEBUG: TLE_DEBUG=WARN|INFO|TRACE (case-insensitive; unset or
// empty: off) and TLE_DEBUG_FILE (a path; %h becomes the host name, %p the
// process id; default stderr). Each message is one line, written with one
// write(2) under a lock, so lines of concurrent ranks (threads or processes
// appending to one file) never interleave:
//
//   host:pid:tid [rank 1] TLE INFO communicator created: ...
//
// The level and the file are read once, at the first use. Not a public API:
// TLE's own tools use it; programs see only the environment variables.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_SUPPORT_LOG_H
#define TLE_SUPPORT_LOG_H

#include "tle/detail/Export.h"

namespace tle::log {

enum class Level : int { Off = 0, Warn = 1, Info = 2, Trace = 3 };

/// Parses a TLE_DEBUG value (WARN, INFO or TRACE, any case; "" is Off).
/// False for anything else.
TLE_API bool parseLevel(const char *text, Level &out);
/// The level TLE_DEBUG names. An unknown value logs at WARN, after one
/// warning that names it.
TLE_API Level level();
/// Whether messages of `at` are written.
inline bool enabled(Level at) {
  return at != Level::Off && static_cast<int>(at) <= static_cast<int>(level());
}
/// Writes one line of `at` for `rank` (-1: none); printf-style.
TLE_API void write(Level at, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

} // namespace tle::log

/// TLE_LOG(Info, rank, "fmt", ...): a line when TLE_DEBUG enables the level;
/// the arguments are not evaluated otherwise.
#define TLE_LOG(LEVEL, RANK, ...)                                              \
  do {                                                                         \
    if (::tle::log::enabled(::tle::log::Level::LEVEL))                         \
      ::tle::log::write(::tle::log::Level::LEVEL, (RANK), __VA_ARGS__);        \
  } while (0)

#endif // TLE_SUPPORT_LOG_H
