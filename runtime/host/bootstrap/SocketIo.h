//===- SocketIo.h - Framed I/O on Unix sockets, with deadlines -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The socket bootstrap's first topic (SocketBootstrap.cpp): moving bytes,
// frames and file descriptors (SCM_RIGHTS) over a connected Unix socket
// within a deadline, and what the kernel says about the socket's peer.
// Frames are wire::encodeFrame's; recvFrame reads no more than the header
// allows for the step (wire::decodeFrame), so an unauthenticated peer
// cannot make the reader allocate.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_BOOTSTRAP_SOCKETIO_H
#define TLE_HOST_BOOTSTRAP_SOCKETIO_H

#include "bootstrap/UniqueFd.h"
#include "bootstrap/Wire.h"
#include "tle/tle.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <vector>

namespace tle::sock {

using Clock = std::chrono::steady_clock;

/// A point in time a step must finish by; `forever` when the timeout is 0.
class Deadline {
public:
  explicit Deadline(int64_t timeoutMs)
      : forever(timeoutMs == 0),
        end(Clock::now() + std::chrono::milliseconds(timeoutMs)) {}
  Deadline(const Deadline &outer, int64_t capMs) : Deadline(capMs) {
    if (!outer.forever && (forever || outer.end < end)) {
      forever = false;
      end = outer.end;
    }
  }
  /// Milliseconds left for poll(): -1 when forever, 0 when expired.
  int pollMs() const {
    if (forever)
      return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(end - Clock::now())
                    .count();
    return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
  }
  bool expired() const { return !forever && Clock::now() >= end; }

private:
  bool forever;
  Clock::time_point end;
};

enum class Io { Ok, Closed, Timeout, Error, Malformed };

/// Waits for `events` on `fd`; sets errno on Error.
Io waitFd(int fd, short events, const Deadline &deadline);
/// Sends all `bytes`; `fds` (if any) travel with the first byte sent.
Io sendAll(int fd, const void *data, size_t bytes, const Deadline &deadline,
           const std::vector<int> &fds = {});
/// Receives exactly `bytes`; with `fds`, descriptors that arrive are kept.
Io recvAll(int fd, void *data, size_t bytes, const Deadline &deadline,
           std::vector<UniqueFd> *fds = nullptr);
Io sendFrame(int fd, uint32_t kind, uint64_t seq, const std::string &payload,
             const Deadline &deadline, const std::vector<int> &fds = {});
/// A reason cut to what the receiver accepts.
std::string reasonPayload(const std::string &reason);
/// Receives one frame that `step` accepts; Malformed, with `why`, if not.
Io recvFrame(int fd, wire::Step step, wire::FrameHeader &h,
             std::string &payload, const Deadline &deadline, const char *&why,
             std::vector<UniqueFd> *fds = nullptr);
/// The abstract socket address named `name` (no file behind it).
sockaddr_un abstractAddress(const char *name, socklen_t &len);
/// The process at the other end of a connected Unix socket.
bool peerCredentials(int fd, ucred &cred);
/// "1,3,4".
std::string rankList(const std::vector<int> &ranks);
/// A random nonce; `status` says whether the kernel gave one.
wire::Nonce freshNonce(tleResult_t &status);

} // namespace tle::sock

#endif // TLE_HOST_BOOTSTRAP_SOCKETIO_H
