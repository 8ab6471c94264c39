//===- Log.cpp - The TLE_DEBUG log ---------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements tle/support/Log.h. State is set up once (std::call_once) from
// the environment; a line is formatted into a local buffer, then written
// with one write(2) under a mutex, so lines never interleave within a
// process, and O_APPEND keeps them whole across processes sharing a file.
//
//===----------------------------------------------------------------------===//

#include "tle/support/Log.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <strings.h>

namespace tle::log {
namespace {

struct State {
  Level level = Level::Off;
  int fd = STDERR_FILENO;
  char host[64] = "?";
};

/// TLE_DEBUG_FILE with %h (host name), %p (process id) and %% expanded.
std::string expandPath(const char *pattern, const char *host) {
  std::string out;
  for (const char *p = pattern; *p; ++p) {
    if (*p != '%' || !p[1]) {
      out += *p;
      continue;
    }
    ++p;
    if (*p == 'h')
      out += host;
    else if (*p == 'p')
      out += std::to_string(getpid());
    else if (*p == '%')
      out += '%';
    else
      out += std::string("%") + *p;
  }
  return out;
}

State &state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] {
    gethostname(s.host, sizeof(s.host) - 1);
    if (char *dot = std::strchr(s.host, '.'))
      *dot = '\0';
    const char *env = std::getenv("TLE_DEBUG");
    if (env && !parseLevel(env, s.level)) {
      s.level = Level::Warn;
      std::fprintf(stderr,
                   "TLE WARN TLE_DEBUG='%.32s' is not WARN, INFO or TRACE; "
                   "logging warnings only\n",
                   env);
    }
    const char *file = std::getenv("TLE_DEBUG_FILE");
    if (s.level == Level::Off || !file || !*file)
      return;
    std::string path = expandPath(file, s.host);
    int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
      std::fprintf(stderr,
                   "TLE WARN cannot open TLE_DEBUG_FILE '%s': %s; logging to "
                   "stderr\n",
                   path.c_str(), std::strerror(errno));
    else
      s.fd = fd;
  });
  return s;
}

const char *levelName(Level at) {
  switch (at) {
  case Level::Warn:
    return "WARN";
  case Level::Info:
    return "INFO";
  case Level::Trace:
    return "TRACE";
  case Level::Off:
    break;
  }
  return "?";
}

} // namespace

bool parseLevel(const char *text, Level &out) {
  static constexpr struct {
    const char *name;
    Level level;
  } names[] = {
      {"WARN", Level::Warn}, {"INFO", Level::Info}, {"TRACE", Level::Trace}};
  if (!*text) {
    out = Level::Off;
    return true;
  }
  for (const auto &n : names)
    if (strcasecmp(text, n.name) == 0) {
      out = n.level;
      return true;
    }
  return false;
}

Level level() { return state().level; }

void write(Level at, int rank, const char *fmt, ...) {
  State &s = state();
  char line[1024];
  int n;
  long tid = syscall(SYS_gettid);
  if (rank >= 0)
    n = std::snprintf(line, sizeof(line), "%s:%d:%ld [rank %d] TLE %s ", s.host,
                      getpid(), tid, rank, levelName(at));
  else
    n = std::snprintf(line, sizeof(line), "%s:%d:%ld TLE %s ", s.host, getpid(),
                      tid, levelName(at));
  if (n < 0)
    return;
  va_list args;
  va_start(args, fmt);
  int m = std::vsnprintf(line + n, sizeof(line) - n, fmt, args);
  va_end(args);
  size_t len =
      m < 0 ? size_t(n) : std::min(sizeof(line) - 2, size_t(n) + size_t(m));
  line[len++] = '\n';
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  for (size_t done = 0; done < len;) {
    ssize_t w = ::write(s.fd, line + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    done += size_t(w);
  }
}

} // namespace tle::log
