//===- SocketIo.cpp - Framed I/O on Unix sockets, with deadlines ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// See SocketIo.h. Every wait polls with the step's deadline, so a dead peer
// (EOF) or a missing one (deadline) fails the step instead of blocking it.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/SocketIo.h"
#include "bootstrap/Bootstrap.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace tle::sock {

constexpr uint32_t kMaxFdsPerFrame = wire::kMaxRanks * wire::kMaxFdsPerRank;

/// Waits for `events` on `fd`; sets errno on Error.
Io waitFd(int fd, short events, const Deadline &deadline) {
  for (;;) {
    pollfd p = {fd, events, 0};
    int n = poll(&p, 1, deadline.pollMs());
    if (n > 0)
      return Io::Ok;
    if (n == 0)
      return Io::Timeout;
    if (errno != EINTR)
      return Io::Error;
  }
}

/// Sends all `bytes`; `fds` (if any) travel with the first byte sent.
Io sendAll(int fd, const void *data, size_t bytes, const Deadline &deadline,
           const std::vector<int> &fds) {
  const char *p = static_cast<const char *>(data);
  size_t fdsLeft = fds.size();
  while (bytes > 0) {
    ssize_t n;
    if (fdsLeft > 0) {
      iovec iov = {const_cast<char *>(p), bytes};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];
      msghdr msg = {};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr *c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
      n = sendmsg(fd, &msg, MSG_NOSIGNAL);
      if (n > 0)
        fdsLeft = 0;
    } else {
      n = send(fd, p, bytes, MSG_NOSIGNAL);
    }
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR)
      continue;
    if (errno == EPIPE || errno == ECONNRESET)
      return Io::Closed;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return Io::Error;
    Io w = waitFd(fd, POLLOUT, deadline);
    if (w != Io::Ok)
      return w;
  }
  return Io::Ok;
}

/// Moves the descriptors of every SCM_RIGHTS message in `msg` into `fds`.
static void takeFds(msghdr &msg, std::vector<UniqueFd> &fds) {
  for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int received;
      memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.emplace_back(received);
    }
  }
}

/// Receives exactly `bytes`. With `fds`, descriptors that arrive are kept
/// there; without, the kernel closes them (nothing is accepted from a peer
/// that has not authenticated).
Io recvAll(int fd, void *data, size_t bytes, const Deadline &deadline,
           std::vector<UniqueFd> *fds) {
  char *p = static_cast<char *>(data);
  while (bytes > 0) {
    ssize_t n;
    if (fds) {
      iovec iov = {p, bytes};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];
      msghdr msg = {};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
      if (n >= 0)
        takeFds(msg, *fds);
      // More descriptors than any frame may carry: the kernel closed the
      // rest, and the frame cannot be trusted.
      if (n >= 0 && (msg.msg_flags & MSG_CTRUNC))
        return Io::Malformed;
    } else {
      n = recv(fd, p, bytes, 0);
    }
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0)
      return Io::Closed;
    if (errno == EINTR)
      continue;
    if (errno == ECONNRESET)
      return Io::Closed;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return Io::Error;
    Io w = waitFd(fd, POLLIN, deadline);
    if (w != Io::Ok)
      return w;
  }
  return Io::Ok;
}

Io sendFrame(int fd, uint32_t kind, uint64_t seq, const std::string &payload,
             const Deadline &deadline, const std::vector<int> &fds) {
  std::string frame = wire::encodeFrame(kind, seq, payload);
  return sendAll(fd, frame.data(), frame.size(), deadline, fds);
}

/// A reason cut to what the receiver accepts.
std::string reasonPayload(const std::string &reason) {
  return reason.substr(0, wire::kMaxReasonBytes);
}

/// Receives one frame that `step` accepts. The payload is allocated only
/// once the header has shown that its size is within the step's bound;
/// a frame that is not what the step expects is Malformed, with `why`.
Io recvFrame(int fd, wire::Step step, wire::FrameHeader &h,
             std::string &payload, const Deadline &deadline, const char *&why,
             std::vector<UniqueFd> *fds) {
  uint8_t head[wire::kHeaderBytes];
  why = "too many file descriptors";
  Io io = recvAll(fd, head, sizeof(head), deadline, fds);
  if (io != Io::Ok)
    return io;
  wire::Decoded d = wire::decodeFrame(head, sizeof(head), step);
  if (d.status == wire::Decoded::Malformed) {
    why = d.why;
    return Io::Malformed;
  }
  h = d.header;
  payload.resize(h.bytes);
  io = recvAll(fd, payload.data(), payload.size(), deadline, fds);
  if (io == Io::Ok && fds && fds->size() > wire::maxFds(step))
    return Io::Malformed;
  return io;
}

sockaddr_un abstractAddress(const char *name, socklen_t &len) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  size_t n =
      strnlen(name, std::min(sizeof(addr.sun_path) - 1, wire::kAddressBytes));
  memcpy(addr.sun_path + 1, name, n);
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return addr;
}

/// The process at the other end of a connected Unix socket, as the kernel
/// recorded it when the socket was connected (or, for a connection to a
/// listener, when the listener called listen()).
bool peerCredentials(int fd, ucred &cred) {
  socklen_t len = sizeof(cred);
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
         len == sizeof(cred);
}

std::string rankList(const std::vector<int> &ranks) {
  std::string s;
  for (int r : ranks)
    s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

wire::Nonce freshNonce(tleResult_t &status) {
  wire::Nonce n;
  status = randomBytes(n.data(), n.size());
  return n;
}

} // namespace tle::sock
