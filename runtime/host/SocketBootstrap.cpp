//===- SocketBootstrap.cpp - Rendezvous of processes over a socket -*- C++ -*-//
//
// One process per rank (torchrun/mpirun style). The unique id names an
// abstract Unix socket (no file to clean up when a rank dies) and carries a
// 128-bit secret. Rank 0 listens; every other rank connects and introduces
// itself with (magic, version, secret, nRanks, rank). Rank 0 refuses a wrong
// secret, version or size and a duplicate or out-of-range rank, telling the
// peer why. The connections stay open for the communicator's lifetime and
// carry every later collective as a star through rank 0: each rank sends its
// blob, rank 0 answers with all of them. All sockets are non-blocking and
// every wait polls with the step's deadline, so a dead peer (EOF) or a
// missing one (deadline) fails the step; rank 0 then tells the others why
// before they would time out.
//
//===----------------------------------------------------------------------===//

#include "Bootstrap.h"
#include "Error.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace tle {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kIdMagic = 0x544c4555;   // "TLEU"
constexpr uint32_t kWireMagic = 0x544c4542; // "TLEB"
constexpr uint32_t kWireVersion = 1;
constexpr size_t kSecretBytes = 16;
// Frames come from authenticated peers, but a corrupt length must not make
// us allocate without bound.
constexpr uint64_t kMaxFrameBytes = uint64_t(1) << 30;

/// The bytes of a tleUniqueId.
struct IdLayout {
  uint32_t magic;
  uint32_t version;
  uint8_t secret[kSecretBytes];
  char address[96]; ///< abstract socket name, without the leading NUL
};
static_assert(sizeof(IdLayout) <= sizeof(tleUniqueId));

enum FrameKind : uint32_t {
  kHello = 1,        ///< peer -> 0: a Hello payload
  kWelcome = 2,      ///< 0 -> peer: admitted
  kRefuse = 3,       ///< 0 -> peer: refused, payload is the reason
  kContribution = 4, ///< peer -> 0: this rank's blob of a collective
  kGathered = 5,     ///< 0 -> peer: every rank's blob
  kAbort = 6,        ///< 0 -> peer: the collective failed, payload is why
};

struct FrameHeader {
  uint32_t magic;
  uint32_t kind;
  uint64_t seq;
  uint64_t bytes;
};

struct Hello {
  uint32_t version;
  int32_t nRanks;
  int32_t rank;
  uint8_t secret[kSecretBytes];
};

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

enum class Io { Ok, Closed, Timeout, Error };

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

Io sendAll(int fd, const void *data, size_t bytes, const Deadline &deadline) {
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
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

Io recvAll(int fd, void *data, size_t bytes, const Deadline &deadline) {
  char *p = static_cast<char *>(data);
  while (bytes > 0) {
    ssize_t n = recv(fd, p, bytes, 0);
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
             const Deadline &deadline) {
  FrameHeader h = {kWireMagic, kind, seq, payload.size()};
  Io io = sendAll(fd, &h, sizeof(h), deadline);
  if (io == Io::Ok)
    io = sendAll(fd, payload.data(), payload.size(), deadline);
  return io;
}

/// Receives one frame; a frame that is not ours counts as Error.
Io recvFrame(int fd, FrameHeader &h, std::string &payload,
             const Deadline &deadline) {
  Io io = recvAll(fd, &h, sizeof(h), deadline);
  if (io != Io::Ok)
    return io;
  if (h.magic != kWireMagic || h.bytes > kMaxFrameBytes) {
    errno = EPROTO;
    return Io::Error;
  }
  payload.resize(h.bytes);
  return recvAll(fd, payload.data(), payload.size(), deadline);
}

sockaddr_un abstractAddress(const char *name, socklen_t &len) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  size_t n = strnlen(name, sizeof(addr.sun_path) - 1);
  memcpy(addr.sun_path + 1, name, n);
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return addr;
}

/// Compares secrets in time independent of where they differ.
bool sameSecret(const uint8_t *a, const uint8_t *b) {
  uint8_t diff = 0;
  for (size_t i = 0; i < kSecretBytes; ++i)
    diff |= a[i] ^ b[i];
  return diff == 0;
}

std::string rankList(const std::vector<int> &ranks) {
  std::string s;
  for (int r : ranks)
    s += (s.empty() ? "" : ",") + std::to_string(r);
  return s;
}

class SocketBootstrap final : public Bootstrap {
public:
  SocketBootstrap(int rank, int nRanks, int64_t timeoutMs)
      : myRank(rank), nRanks(nRanks), timeoutMs(timeoutMs), fds(nRanks, -1) {}
  ~SocketBootstrap() override {
    for (int fd : fds)
      if (fd >= 0)
        close(fd);
  }

  int rank() const override { return myRank; }
  int size() const override { return nRanks; }

  tleResult_t acceptPeers(const IdLayout &id);
  tleResult_t joinRoot(const IdLayout &id);
  tleResult_t allGather(const std::string &mine,
                        std::vector<std::string> &out) override;

private:
  tleResult_t breakWith(tleResult_t code, const std::string &reason);
  tleResult_t gatherAtRoot(const std::string &mine,
                           std::vector<std::string> &out,
                           const Deadline &deadline);
  tleResult_t gatherAtPeer(const std::string &mine,
                           std::vector<std::string> &out,
                           const Deadline &deadline);

  /// How long a peer waits for rank 0 in a collective. Rank 0 is the one
  /// that knows which rank is missing and tells the others, so peers give
  /// it a grace period past the common timeout to deliver that report
  /// rather than racing it with a vaguer one of their own.
  int64_t peerTimeoutMs() const {
    return timeoutMs == 0 ? 0
                          : timeoutMs + std::max<int64_t>(500, timeoutMs / 4);
  }

  int myRank;
  int nRanks;
  int64_t timeoutMs;
  /// Rank 0: fds[r] is the connection to rank r. Others: fds[0].
  std::vector<int> fds;
  uint64_t seq = 0;
  bool broken = false;
  std::string brokenReason;
};

/// Marks the channel unusable, tells the peers (rank 0 only; best effort,
/// briefly) and records the failure.
tleResult_t SocketBootstrap::breakWith(tleResult_t code,
                                       const std::string &reason) {
  broken = true;
  brokenReason = reason;
  if (myRank == 0) {
    Deadline brief(100);
    for (int r = 1; r < nRanks; ++r)
      if (fds[r] >= 0)
        sendFrame(fds[r], kAbort, seq, reason, brief);
  }
  return fail(code, "%s", reason.c_str());
}

tleResult_t SocketBootstrap::acceptPeers(const IdLayout &id) {
  int listenFd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listenFd < 0)
    return failErrno(errno, "socket");
  socklen_t len;
  sockaddr_un addr = abstractAddress(id.address, len);
  if (bind(listenFd, reinterpret_cast<sockaddr *>(&addr), len) != 0) {
    int err = errno;
    close(listenFd);
    if (err == EADDRINUSE)
      return fail(tleInvalidArgument,
                  "the unique id's address is in use: another communicator "
                  "is being created from the same id");
    return failErrno(err, "bind to the unique id's address");
  }
  if (listen(listenFd, 128) != 0) {
    int err = errno;
    close(listenFd);
    return failErrno(err, "listen");
  }

  Deadline deadline(timeoutMs);
  std::vector<std::string> refusals;
  int joined = 1;
  tleResult_t result = tleSuccess;
  while (joined < nRanks) {
    Io w = waitFd(listenFd, POLLIN, deadline);
    if (w != Io::Ok) {
      std::vector<int> missing;
      for (int r = 1; r < nRanks; ++r)
        if (fds[r] < 0)
          missing.push_back(r);
      std::string reason = "bootstrap timed out after " +
                           std::to_string(timeoutMs) + " ms: rank(s) " +
                           rankList(missing) + " did not join";
      for (const std::string &refusal : refusals)
        reason += "; refused a peer: " + refusal;
      result =
          breakWith(w == Io::Timeout ? tleTimeout : tleSystemError, reason);
      break;
    }
    int fd = accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
        continue;
      result = breakWith(tleSystemError,
                         std::string("accept failed: ") + strerror(errno));
      break;
    }
    // A connection that never introduces itself must not hold up the
    // others for long.
    FrameHeader h;
    std::string payload;
    Io io = recvFrame(fd, h, payload, Deadline(deadline, 2000));
    Hello hello;
    std::string why;
    if (io != Io::Ok || h.kind != kHello || payload.size() != sizeof(Hello)) {
      why = "a connection did not introduce itself as a TLE rank";
    } else {
      memcpy(&hello, payload.data(), sizeof(hello));
      std::string who = "rank " + std::to_string(hello.rank);
      if (hello.version != kWireVersion)
        why = who + " speaks bootstrap version " +
              std::to_string(hello.version) + ", rank 0 speaks " +
              std::to_string(kWireVersion);
      else if (!sameSecret(hello.secret, id.secret))
        why = who + " presented a wrong secret (its unique id is not this "
                    "communicator's)";
      else if (hello.nRanks != nRanks)
        why = who + " was created with nRanks " + std::to_string(hello.nRanks) +
              ", rank 0 with " + std::to_string(nRanks);
      else if (hello.rank <= 0 || hello.rank >= nRanks)
        why = who + " is out of range for nRanks " + std::to_string(nRanks);
      else if (fds[hello.rank] >= 0)
        why = who + " joined twice";
    }
    if (!why.empty()) {
      sendFrame(fd, kRefuse, 0, why, Deadline(deadline, 100));
      close(fd);
      refusals.push_back(why);
      continue;
    }
    if (sendFrame(fd, kWelcome, 0, std::string(), deadline) != Io::Ok) {
      close(fd);
      refusals.push_back("rank " + std::to_string(hello.rank) +
                         " disconnected during the handshake");
      continue;
    }
    fds[hello.rank] = fd;
    ++joined;
  }
  // Everyone is connected: later connections to this id have nothing to
  // join, and closing frees the address for a new communicator.
  close(listenFd);
  return result;
}

tleResult_t SocketBootstrap::joinRoot(const IdLayout &id) {
  Deadline deadline(timeoutMs);
  socklen_t len;
  sockaddr_un addr = abstractAddress(id.address, len);
  auto backoff = std::chrono::milliseconds(1);
  int fd = -1;
  for (;;) {
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return failErrno(errno, "socket");
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0)
      break;
    int err = errno;
    if (err == EINPROGRESS) {
      int soErr = 0;
      socklen_t soLen = sizeof(soErr);
      if (waitFd(fd, POLLOUT, deadline) == Io::Ok &&
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &soErr, &soLen) == 0 &&
          soErr == 0)
        break;
      err = soErr ? soErr : ETIMEDOUT;
    }
    close(fd);
    fd = -1;
    // Rank 0 may not be listening yet (or its backlog is full): retry.
    if (err != ECONNREFUSED && err != ENOENT && err != EAGAIN &&
        err != ETIMEDOUT && err != EINTR)
      return failErrno(err, "connect to rank 0");
    if (deadline.expired())
      return fail(tleTimeout,
                  "bootstrap timed out after %lld ms: rank 0 is not listening "
                  "at the unique id's address (it never joined, or died)",
                  static_cast<long long>(timeoutMs));
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(20));
  }
  fds[0] = fd;

  Hello hello = {};
  hello.version = kWireVersion;
  hello.nRanks = nRanks;
  hello.rank = myRank;
  memcpy(hello.secret, id.secret, kSecretBytes);
  std::string payload(reinterpret_cast<const char *>(&hello), sizeof(hello));
  FrameHeader h;
  Io io = sendFrame(fd, kHello, 0, payload, deadline);
  if (io == Io::Ok)
    io = recvFrame(fd, h, payload, deadline);
  if (io == Io::Timeout)
    return fail(tleTimeout,
                "bootstrap timed out after %lld ms waiting for rank 0 to "
                "admit rank %d",
                static_cast<long long>(timeoutMs), myRank);
  if (io != Io::Ok)
    return fail(tlePeerFailure,
                "rank 0 closed the connection while admitting rank %d", myRank);
  if (h.kind == kRefuse)
    return fail(tlePeerFailure, "rank 0 refused rank %d: %s", myRank,
                payload.c_str());
  if (h.kind != kWelcome)
    return fail(tlePeerFailure, "rank 0 answered the handshake with frame %u",
                h.kind);
  return tleSuccess;
}

tleResult_t SocketBootstrap::allGather(const std::string &mine,
                                       std::vector<std::string> &out) {
  if (broken)
    return fail(tlePeerFailure,
                "the communicator is unusable after an earlier failure: %s",
                brokenReason.c_str());
  ++seq;
  if (myRank == 0)
    return gatherAtRoot(mine, out, Deadline(timeoutMs));
  return gatherAtPeer(mine, out, Deadline(peerTimeoutMs()));
}

tleResult_t SocketBootstrap::gatherAtRoot(const std::string &mine,
                                          std::vector<std::string> &out,
                                          const Deadline &deadline) {
  std::vector<std::string> blobs(nRanks);
  blobs[0] = mine;
  std::vector<int> pending;
  for (int r = 1; r < nRanks; ++r)
    pending.push_back(r);
  // Poll all pending peers at once so a dead one is noticed at once even
  // while another is slow.
  while (!pending.empty()) {
    std::vector<pollfd> polls;
    for (int r : pending)
      polls.push_back({fds[r], POLLIN, 0});
    int n = poll(polls.data(), polls.size(), deadline.pollMs());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return breakWith(tleSystemError,
                       std::string("poll failed: ") + strerror(errno));
    if (n == 0)
      return breakWith(tleTimeout, "collective timed out after " +
                                       std::to_string(timeoutMs) +
                                       " ms waiting for rank(s) " +
                                       rankList(pending));
    std::vector<int> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      int r = pending[i];
      if (polls[i].revents == 0) {
        still.push_back(r);
        continue;
      }
      FrameHeader h;
      Io io = recvFrame(fds[r], h, blobs[r], deadline);
      if (io == Io::Closed)
        return breakWith(tlePeerFailure,
                         "rank " + std::to_string(r) + " disconnected");
      if (io == Io::Timeout)
        return breakWith(tleTimeout, "collective timed out after " +
                                         std::to_string(timeoutMs) +
                                         " ms receiving from rank " +
                                         std::to_string(r));
      if (io != Io::Ok || h.kind != kContribution)
        return breakWith(tlePeerFailure, "rank " + std::to_string(r) +
                                             " sent a malformed message");
      if (h.seq != seq)
        return breakWith(tleInvalidArgument,
                         "collective mismatch: rank " + std::to_string(r) +
                             " is in its collective #" + std::to_string(h.seq) +
                             ", rank 0 in #" + std::to_string(seq) +
                             " (ranks must call collectives in the same "
                             "order)");
    }
    pending.swap(still);
  }
  std::string all;
  for (const std::string &b : blobs) {
    uint64_t n = b.size();
    all.append(reinterpret_cast<const char *>(&n), sizeof(n));
    all += b;
  }
  for (int r = 1; r < nRanks; ++r) {
    Io io = sendFrame(fds[r], kGathered, seq, all, deadline);
    if (io == Io::Closed)
      return breakWith(tlePeerFailure,
                       "rank " + std::to_string(r) + " disconnected");
    if (io != Io::Ok)
      return breakWith(tleTimeout, "collective timed out after " +
                                       std::to_string(timeoutMs) +
                                       " ms sending to rank " +
                                       std::to_string(r));
  }
  out = std::move(blobs);
  return tleSuccess;
}

tleResult_t SocketBootstrap::gatherAtPeer(const std::string &mine,
                                          std::vector<std::string> &out,
                                          const Deadline &deadline) {
  FrameHeader h;
  std::string payload;
  Io io = sendFrame(fds[0], kContribution, seq, mine, deadline);
  // Rank 0 may have given up and closed before our send; the reason it
  // sent first is still queued for us, so read it either way.
  if (io == Io::Ok)
    io = recvFrame(fds[0], h, payload, deadline);
  else if (io == Io::Closed &&
           recvFrame(fds[0], h, payload, Deadline(deadline, 100)) == Io::Ok)
    io = Io::Ok;
  if (io == Io::Closed)
    return breakWith(tlePeerFailure, "rank 0 disconnected");
  if (io == Io::Timeout)
    return breakWith(tleTimeout, "collective timed out after " +
                                     std::to_string(peerTimeoutMs()) +
                                     " ms waiting for rank 0");
  if (io != Io::Ok)
    return breakWith(tlePeerFailure, "rank 0 sent a malformed message");
  if (h.kind == kAbort)
    return breakWith(tlePeerFailure, "rank 0 reported: " + payload);
  if (h.kind != kGathered || h.seq != seq)
    return breakWith(tlePeerFailure, "rank 0 sent an unexpected message");
  std::vector<std::string> blobs;
  size_t at = 0;
  while (at + sizeof(uint64_t) <= payload.size()) {
    uint64_t n;
    memcpy(&n, payload.data() + at, sizeof(n));
    at += sizeof(n);
    if (n > payload.size() - at)
      break;
    blobs.emplace_back(payload, at, n);
    at += n;
  }
  if (blobs.size() != static_cast<size_t>(nRanks) || at != payload.size())
    return breakWith(tlePeerFailure, "rank 0 sent a malformed message");
  out = std::move(blobs);
  return tleSuccess;
}

} // namespace

tleResult_t randomBytes(void *out, size_t bytes) {
  char *p = static_cast<char *>(out);
  while (bytes > 0) {
    ssize_t n = getrandom(p, bytes, 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return failErrno(errno, "getrandom");
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return tleSuccess;
}

tleResult_t makeUniqueId(tleUniqueId &out) {
  IdLayout id = {};
  id.magic = kIdMagic;
  id.version = kWireVersion;
  uint8_t nonce[8];
  if (tleResult_t r = randomBytes(id.secret, sizeof(id.secret)))
    return r;
  if (tleResult_t r = randomBytes(nonce, sizeof(nonce)))
    return r;
  int at = snprintf(id.address, sizeof(id.address), "tle-%d-",
                    static_cast<int>(getpid()));
  for (uint8_t b : nonce)
    at += snprintf(id.address + at, sizeof(id.address) - at, "%02x", b);
  memset(&out, 0, sizeof(out));
  memcpy(&out, &id, sizeof(id));
  return tleSuccess;
}

tleResult_t connectSocketBootstrap(const tleUniqueId &rawId, int nRanks,
                                   int rank, int64_t timeoutMs,
                                   std::unique_ptr<Bootstrap> &out) {
  IdLayout id;
  memcpy(&id, &rawId, sizeof(id));
  if (id.magic != kIdMagic)
    return fail(tleInvalidArgument, "the unique id was not made by "
                                    "tleGetUniqueId");
  if (id.version != kWireVersion)
    return fail(tleInvalidArgument,
                "the unique id is of bootstrap version %u, this library "
                "speaks %u",
                id.version, kWireVersion);
  if (strnlen(id.address, sizeof(id.address)) == sizeof(id.address))
    return fail(tleInvalidArgument, "the unique id's address is corrupt");
  auto bs = std::make_unique<SocketBootstrap>(rank, nRanks, timeoutMs);
  tleResult_t r = rank == 0 ? bs->acceptPeers(id) : bs->joinRoot(id);
  if (r != tleSuccess)
    return r;
  out = std::move(bs);
  return tleSuccess;
}

} // namespace tle
