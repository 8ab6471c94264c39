//===- UniqueFd.h - An owned file descriptor --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// File descriptors travel between ranks (memory files over the bootstrap's
// socket) and are opened on every path of the handshake; an owner that
// closes on destruction keeps each error path from leaking one.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_UNIQUEFD_H
#define TLE_HOST_UNIQUEFD_H

#include <unistd.h>
#include <utility>

namespace tle {

/// Owns one file descriptor (or none, -1) and closes it when destroyed.
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd(fd) {}
  UniqueFd(UniqueFd &&other) noexcept : fd(other.release()) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept {
    reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd; }
  explicit operator bool() const { return fd >= 0; }
  /// Gives up ownership without closing.
  int release() { return std::exchange(fd, -1); }
  void reset(int newFd = -1) {
    if (fd >= 0)
      close(fd);
    fd = newFd;
  }

private:
  int fd = -1;
};

} // namespace tle

#endif // TLE_HOST_UNIQUEFD_H
