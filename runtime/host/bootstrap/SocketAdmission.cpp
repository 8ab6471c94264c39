//===- SocketAdmission.cpp - Rank 0 admitting the ranks ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// See SocketAdmission.h. Rank 0 reads no more before authentication than
// the message it expects, so connections from anyone cannot stall or bloat
// it.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/SocketAdmission.h"
#include "bootstrap/Sha256.h"
#include "diag/Error.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tle::sock {

using wire::Step;

/// How long one connection may take to complete its handshake. Handshakes
/// run concurrently, so this only bounds what an idle connection holds.
constexpr int64_t kHandshakeMs = 5000;
/// Connections rank 0 keeps in their handshake at once; past it, the
/// oldest silent one is dropped (a real rank sends its Hello at once and
/// finishes in one round trip), and a connection that sent a valid Hello
/// is never dropped for a newcomer: the newcomer is refused instead.
constexpr size_t kMaxPending = 128;
/// Distinct refusals a timeout message lists.
constexpr size_t kMaxRefusalsReported = 8;

void Admission::note(const std::string &why) {
  for (auto &[text, count] : refusals)
    if (text == why) {
      ++count;
      return;
    }
  if (refusals.size() < kMaxRefusalsReported)
    refusals.emplace_back(why, 1);
  else
    ++otherRefusals;
}

void Admission::refuse(UniqueFd &fd, const std::string &why) {
  note(why);
  std::string frame = wire::encodeFrame(wire::kRefuse, 0, reasonPayload(why));
  // Best effort and never blocking: the socket's buffer is empty on our
  // side, and a peer that does not read deserves no wait.
  ssize_t ignored =
      send(fd.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)ignored;
  fd.reset();
}

void Admission::refuseAll(const std::string &why) {
  for (Pending &p : pending) {
    std::string frame = wire::encodeFrame(wire::kRefuse, 0, reasonPayload(why));
    ssize_t ignored = send(p.fd.get(), frame.data(), frame.size(),
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
  pending.clear();
}

std::string Admission::refusalText() const {
  std::string s;
  for (const auto &[text, count] : refusals) {
    s += "; refused a peer: " + text;
    if (count > 1)
      s += " (" + std::to_string(count) + " times)";
  }
  if (otherRefusals)
    s += "; and " + std::to_string(otherRefusals) + " other refusals";
  return s;
}

bool Admission::dropOldestSilent(const char *why) {
  for (auto it = pending.begin(); it != pending.end(); ++it) {
    if (it->step != Step::RootAwaitsHello)
      continue;
    // Its Hello may be waiting in the socket: a rank that connected just
    // before a flood is not silent, only not read yet.
    if (!onReadable(*it)) {
      pending.erase(it);
      return true;
    }
    if (it->step != Step::RootAwaitsHello)
      continue;
    refuse(it->fd, why);
    pending.erase(it);
    return true;
  }
  return false;
}

void Admission::acceptAll(int listenFd) {
  // At most a table's worth per wake-up, so that a flood of connections
  // cannot keep rank 0 from reading the handshakes it holds.
  for (size_t accepted = 0; accepted < kMaxPending; ++accepted) {
    UniqueFd fd(
        accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd && (errno == EINTR || errno == ECONNABORTED))
      continue;
    // Out of descriptors: make room by dropping the oldest silent
    // handshake, rather than leaving the connection queued and poll()
    // spinning; with none, the connection waits in the backlog.
    if (!fd && (errno == EMFILE || errno == ENFILE)) {
      if (dropOldestSilent("rank 0 ran out of file descriptors; dropped "
                           "the oldest connection that had not introduced "
                           "itself"))
        continue;
      return;
    }
    if (!fd)
      return; // EAGAIN: none left
    ucred cred;
    if (!peerCredentials(fd.get(), cred)) {
      refuse(fd, "a connection whose credentials could not be read");
      continue;
    }
    if (!anyUid && cred.uid != geteuid()) {
      refuse(fd, "a process of uid " + std::to_string(cred.uid) + " (pid " +
                     std::to_string(cred.pid) +
                     ") connected; rank 0 runs as uid " +
                     std::to_string(geteuid()) +
                     " and admits only ranks of its own user");
      continue;
    }
    if (pending.size() == kMaxPending &&
        !dropOldestSilent("too many connections were in their handshake at "
                          "once; dropped the oldest that had not introduced "
                          "itself")) {
      refuse(fd, "too many connections that introduced themselves were in "
                 "their handshake at once; refused a new one");
      continue;
    }
    Pending &p = pending.emplace_back();
    p.fd = std::move(fd);
    p.expires = Clock::now() + std::chrono::milliseconds(kHandshakeMs);
  }
}

bool Admission::onReadable(Pending &p) {
  for (;;) {
    wire::Decoded d = wire::decodeFrame(p.buf, p.have, p.step);
    if (d.status == wire::Decoded::Malformed) {
      refuse(p.fd, std::string("a connection sent a malformed handshake "
                               "frame (") +
                       d.why + ")");
      return false;
    }
    if (d.status == wire::Decoded::Complete) {
      p.have = 0;
      const uint8_t *payload = p.buf + wire::kHeaderBytes;
      return p.step == Step::RootAwaitsHello
                 ? onHello(p, payload, d.header.bytes)
                 : onProof(p, payload);
    }
    // Never read past the frame: the peer waits for our answer before it
    // sends more, and anything beyond is not ours to buffer.
    ssize_t n =
        recv(p.fd.get(), p.buf + p.have, d.frameBytes - p.have, MSG_DONTWAIT);
    if (n > 0) {
      p.have += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EINTR))
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return true;
    note("a connection closed during its handshake");
    return false;
  }
}

bool Admission::onHello(Pending &p, const uint8_t *payload, size_t bytes) {
  const char *bad = wire::decodeHello(payload, bytes, p.hello);
  if (bad && strcmp(bad, "version") == 0) {
    refuse(p.fd, "a peer speaks bootstrap version " +
                     std::to_string(p.hello.version) + ", rank 0 speaks " +
                     std::to_string(wire::kVersion));
    return false;
  }
  if (bad) {
    refuse(p.fd, std::string("a connection did not introduce itself as a "
                             "TLE rank (") +
                     bad + ")");
    return false;
  }
  tleResult_t status;
  p.rootNonce = freshNonce(status);
  if (status != tleSuccess) {
    refuse(p.fd, "rank 0 could not draw a nonce: " + lastErrorDetail());
    return false;
  }
  std::string challenge(reinterpret_cast<const char *>(p.rootNonce.data()),
                        p.rootNonce.size());
  if (sendFrame(p.fd.get(), wire::kChallenge, 0, challenge, Deadline(100)) !=
      Io::Ok) {
    note("rank " + std::to_string(p.hello.rank) +
         " disconnected during the handshake");
    return false;
  }
  p.step = Step::RootAwaitsProof;
  return true;
}

bool Admission::onProof(Pending &p, const uint8_t *payload) {
  const wire::HelloMessage &h = p.hello;
  wire::Nonce peerNonce;
  memcpy(peerNonce.data(), h.nonce, peerNonce.size());
  wire::Mac expected = wire::handshakeMac(id, wire::Role::Peer, peerNonce,
                                          p.rootNonce, h.nRanks, h.rank);
  std::string who = "rank " + std::to_string(h.rank);
  std::string why;
  if (!equalConstantTime(payload, expected.data(), expected.size()))
    why = who + " presented a wrong secret (its unique id is not this "
                "communicator's)";
  else if (h.nRanks != nRanks)
    why = who + " was created with nRanks " + std::to_string(h.nRanks) +
          ", rank 0 with " + std::to_string(nRanks);
  else if (h.rank <= 0 || h.rank >= nRanks)
    why = who + " is out of range for nRanks " + std::to_string(nRanks);
  else if (admitted[h.rank])
    why = who + " joined twice";
  if (!why.empty()) {
    refuse(p.fd, why);
    return false;
  }
  wire::Mac mine = wire::handshakeMac(id, wire::Role::Root, peerNonce,
                                      p.rootNonce, h.nRanks, h.rank);
  std::string welcome(reinterpret_cast<const char *>(mine.data()), mine.size());
  if (sendFrame(p.fd.get(), wire::kWelcome, 0, welcome, Deadline(100)) !=
      Io::Ok) {
    note(who + " disconnected during the handshake");
    return false;
  }
  admitted[h.rank] = std::move(p.fd);
  ++joined;
  return false;
}

tleResult_t Admission::run(int listenFd, const Deadline &deadline,
                           std::string &reason) {
  while (joined < nRanks) {
    std::vector<pollfd> polls = {{listenFd, POLLIN, 0}};
    auto wake = Clock::time_point::max();
    for (Pending &p : pending) {
      polls.push_back({p.fd.get(), POLLIN, 0});
      wake = std::min(wake, p.expires);
    }
    int ms = deadline.pollMs();
    if (wake != Clock::time_point::max()) {
      auto untilWake =
          std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now())
              .count();
      untilWake = std::clamp<int64_t>(untilWake, 0, 1 << 30);
      ms = ms < 0 ? static_cast<int>(untilWake)
                  : std::min(ms, static_cast<int>(untilWake));
    }
    int n = poll(polls.data(), polls.size(), ms);
    if (n < 0 && errno != EINTR) {
      reason = std::string("poll failed: ") + strerror(errno);
      return tleSystemError;
    }
    if (n < 0)
      for (pollfd &p : polls)
        p.revents = 0;
    if (deadline.expired()) {
      std::vector<int> missing;
      for (int r = 1; r < nRanks; ++r)
        if (!admitted[r])
          missing.push_back(r);
      reason = "rank(s) " + rankList(missing) + " did not join" + refusalText();
      return tleTimeout;
    }
    // Also when poll timed out: that is when handshakes expire.
    size_t i = 1;
    auto now = Clock::now();
    for (auto it = pending.begin(); it != pending.end(); ++i) {
      bool keep = true;
      if (polls[i].revents)
        keep = onReadable(*it);
      if (keep && now >= it->expires) {
        refuse(it->fd, "a connection did not complete its handshake within " +
                           std::to_string(kHandshakeMs) + " ms");
        keep = false;
      }
      it = keep ? std::next(it) : pending.erase(it);
    }
    if (polls[0].revents)
      acceptAll(listenFd);
  }
  return tleSuccess;
}

} // namespace tle::sock
