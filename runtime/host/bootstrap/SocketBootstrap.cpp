//===- SocketBootstrap.cpp - Rendezvous of processes ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One process per rank (torchrun/mpirun style). The unique id names an
// abstract Unix socket (no file to clean up when a rank dies) and carries a
// 128-bit secret that never crosses the wire. Rank 0 listens; every other
// rank connects and the two authenticate each other (docs/runtime.md,
// "Security"):
//   - each checks the other's uid as the kernel reports it (SO_PEERCRED);
//   - peer -> 0 Hello (version, nRanks, rank, peer nonce);
//   - 0 -> peer Challenge (rank 0's nonce);
//   - peer -> 0 Proof: HMAC(secret, transcript with both nonces);
//   - 0 -> peer Welcome: rank 0's own HMAC over the same transcript, or a
//     Refuse that says why (wrong secret, nRanks, rank taken...).
// Rank 0 runs every handshake at once, each connection with its own
// deadline, and reads no more before authentication than the message it
// expects (wire::decodeFrame), so connections from anyone cannot stall or
// bloat it. The connections stay open for the communicator's lifetime and
// carry every later collective as a star through rank 0: each rank sends
// its blob (and any file descriptors, SCM_RIGHTS), rank 0 answers with all
// of them. Every wait polls with the step's deadline, so a dead peer (EOF)
// or a missing one (deadline) fails the step; rank 0 then tells the others
// why before they would time out.
//
// Between collectives a watchdog thread polls the connections for a close
// (POLLRDHUP): a rank that destroys its communicator says goodbye first,
// so a close without one is a death, which the communicator turns into a
// fault every wait gives up on (comm/Comm.cpp). Rank 0 relays a death to the
// others (kPeerGone). The watchdog reads a connection only under the same
// lock as the collectives, and leaves a frame a collective must see
// (a kAbort) where it is.
//
// Three files, one per topic: framed I/O with deadlines (SocketIo.h),
// rank 0's admission of the ranks (SocketAdmission.h), and here the
// bootstrap itself: joining, the collectives and the watchdog.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/Bootstrap.h"
#include "bootstrap/Sha256.h"
#include "bootstrap/SocketAdmission.h"
#include "bootstrap/SocketIo.h"
#include "bootstrap/Wire.h"
#include "diag/Error.h"
#include "tle/detail/DevComm.h"
#include "tle/support/Log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <list>
#include <mutex>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace tle {
namespace {

using namespace sock;
using wire::Step;

static_assert(sizeof(wire::IdLayout) <= sizeof(tleUniqueId));
static_assert(wire::kMaxRanks == kMaxRanks,
              "the wire format's rank bound is the communicator's");

class SocketBootstrap final : public Bootstrap {
public:
  SocketBootstrap(const wire::IdLayout &id, int rank, int nRanks,
                  int64_t timeoutMs, bool anyUid)
      : id(id), myRank(rank), nRanks(nRanks), timeoutMs(timeoutMs),
        anyUid(anyUid), fds(nRanks) {}
  ~SocketBootstrap() override;

  tleResult_t watch(PeerLost onLost) override;
  std::vector<int> lostPeers() const override {
    std::lock_guard<std::mutex> lock(lostLock);
    return lostRanks;
  }
  void stopWatching() override;
  void markJoined() { joined = true; }

  int rank() const override { return myRank; }
  int size() const override { return nRanks; }

  tleResult_t acceptPeers();
  tleResult_t joinRoot();
  tleResult_t allGather(const std::string &mine,
                        std::vector<std::string> &out) override {
    std::vector<std::vector<UniqueFd>> none;
    return allGatherFds(mine, {}, out, none);
  }
  tleResult_t allGatherFds(const std::string &mine,
                           const std::vector<int> &myFds,
                           std::vector<std::string> &out,
                           std::vector<std::vector<UniqueFd>> &outFds) override;

private:
  tleResult_t breakWith(tleResult_t code, const std::string &reason);
  tleResult_t connectToRoot(const Deadline &deadline);
  tleResult_t handshake(const Deadline &deadline);
  tleResult_t gatherAtRoot(const std::string &mine,
                           const std::vector<int> &myFds,
                           std::vector<std::string> &out,
                           std::vector<std::vector<UniqueFd>> &outFds,
                           const Deadline &deadline);
  tleResult_t gatherAtPeer(const std::string &mine,
                           const std::vector<int> &myFds,
                           std::vector<std::string> &out,
                           std::vector<std::vector<UniqueFd>> &outFds,
                           const Deadline &deadline);

  /// How long a peer waits for rank 0 in a collective. Rank 0 is the one
  /// that knows which rank is missing and tells the others, so peers give
  /// it a grace period past the common timeout to deliver that report
  /// rather than racing it with a vaguer one of their own.
  int64_t peerTimeoutMs() const {
    return timeoutMs == 0 ? 0
                          : timeoutMs + std::max<int64_t>(500, timeoutMs / 4);
  }

  wire::IdLayout id;
  int myRank;
  int nRanks;
  int64_t timeoutMs;
  bool anyUid;
  /// The watchdog's loop, and what it does with a connection that polled
  /// ready: false once it no longer needs watching (a goodbye, a death).
  void watchLoop();
  bool onWatched(int conn, short revents, bool &readable);
  /// A death: mark the channel broken, relay it (rank 0), report it.
  void lost(int rank);

  /// Rank 0: fds[r] is the connection to rank r. Others: fds[0].
  std::vector<UniqueFd> fds;
  uint64_t seq = 0;
  bool broken = false;
  std::string brokenReason;
  /// Every rank joined and authenticated: only then is a goodbye owed (an
  /// unauthenticated end, an impostor perhaps, gets nothing).
  bool joined = false;
  /// Held by a collective and by the watchdog while it reads: a frame is
  /// read by one of them, whole.
  std::mutex ioLock;
  PeerLost onLost;
  /// What lostPeers reports (its own lock: ioLock is held while the
  /// watchdog reads).
  mutable std::mutex lostLock;
  std::vector<int> lostRanks;
  /// The watchdog thread, which exists only in the process that made it:
  /// a child forked later holds this object but no such thread.
  std::unique_ptr<std::thread> watchdog;
  pid_t owner = getpid();
  UniqueFd wakeRead, wakeWrite; ///< a pipe that stops the watchdog
};

tleResult_t SocketBootstrap::watch(PeerLost callback) {
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC) != 0)
    return failErrno(errno, "pipe for the watchdog");
  wakeRead = UniqueFd(pipeFds[0]);
  wakeWrite = UniqueFd(pipeFds[1]);
  onLost = std::move(callback);
  try {
    watchdog = std::make_unique<std::thread>([this] { watchLoop(); });
  } catch (const std::system_error &e) {
    return fail(tleSystemError, "cannot start the watchdog thread: %s",
                e.what());
  }
  return tleSuccess;
}

void SocketBootstrap::stopWatching() {
  if (!watchdog)
    return;
  if (getpid() != owner) {
    // A forked child: the thread is the parent's, and so is the pipe.
    (void)watchdog.release();
    return;
  }
  char byte = 0;
  ssize_t ignored = write(wakeWrite.get(), &byte, 1);
  (void)ignored;
  watchdog->join();
  watchdog.reset();
}

SocketBootstrap::~SocketBootstrap() {
  stopWatching();
  // A forked child is not the rank: its goodbye would end the peers' watch
  // of the parent.
  if (!joined || getpid() != owner)
    return;
  // Best effort and never blocking: a peer that reads its connection only
  // later still finds the goodbye before the close.
  std::string frame = wire::encodeFrame(wire::kGoodbye, 0, std::string());
  for (UniqueFd &fd : fds)
    if (fd) {
      ssize_t ignored = send(fd.get(), frame.data(), frame.size(),
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)ignored;
    }
}

void SocketBootstrap::watchLoop() {
  // Rank 0 watches every peer for a close only (their frames are for its
  // collectives); a peer also reads what rank 0 sends outside a collective
  // (a goodbye, a relayed death) until a frame it must leave arrives.
  std::vector<bool> watching(nRanks, false), readable(nRanks, false);
  for (int c = myRank == 0 ? 1 : 0; c < (myRank == 0 ? nRanks : 1); ++c)
    watching[c] = static_cast<bool>(fds[c]);
  readable[0] = myRank != 0;
  for (;;) {
    std::vector<pollfd> polls{{wakeRead.get(), POLLIN, 0}};
    std::vector<int> conns;
    for (int c = 0; c < nRanks; ++c)
      if (watching[c]) {
        short events = POLLRDHUP;
        if (readable[c])
          events |= POLLIN;
        polls.push_back({fds[c].get(), events, 0});
        conns.push_back(c);
      }
    int n = poll(polls.data(), polls.size(), -1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || polls[0].revents)
      return;
    for (size_t i = 1; i < polls.size(); ++i)
      if (polls[i].revents) {
        int c = conns[i - 1];
        bool canRead = readable[c];
        watching[c] = onWatched(c, polls[i].revents, canRead);
        readable[c] = canRead;
      }
  }
}

bool SocketBootstrap::onWatched(int conn, short revents, bool &readable) {
  std::lock_guard<std::mutex> lock(ioLock);
  int fd = fds[conn].get();
  bool closed = revents & (POLLRDHUP | POLLHUP | POLLERR);
  // Read what is there. While the connection is open, only a goodbye or a
  // relayed death is taken (a collective's frame stays for it); once it is
  // closed, everything, looking for the goodbye.
  for (;;) {
    wire::FrameHeader h;
    if (!closed) {
      ssize_t n =
          recv(fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n == 0) {
        closed = true;
        continue;
      }
      if (n < static_cast<ssize_t>(sizeof(h)))
        return true; // a collective took it, or the rest is on its way
      if (h.kind != wire::kGoodbye && h.kind != wire::kPeerGone) {
        readable = false;
        return true;
      }
    }
    std::string payload;
    std::vector<UniqueFd> stale;
    const char *why;
    Io got =
        recvFrame(fd, Step::Watching, h, payload, Deadline(100), why, &stale);
    if (got != Io::Ok)
      break; // closed, or a frame cut short: the end of what is there
    if (h.kind == wire::kGoodbye)
      return false;
    if (h.kind == wire::kPeerGone) {
      int32_t rank;
      memcpy(&rank, payload.data(), sizeof(rank));
      if (rank >= 0 && rank < nRanks)
        lost(rank);
    }
  }
  // Closed without a goodbye: the process at the other end died.
  lost(myRank == 0 ? conn : 0);
  return false;
}

void SocketBootstrap::lost(int rank) {
  {
    std::lock_guard<std::mutex> lock(lostLock);
    lostRanks.push_back(rank);
  }
  std::string reason = "rank " + std::to_string(rank) + "'s process died";
  if (!broken) {
    broken = true;
    brokenReason = reason;
  }
  if (myRank == 0) {
    std::string payload(sizeof(int32_t), '\0');
    int32_t r = rank;
    memcpy(payload.data(), &r, sizeof(r));
    Deadline brief(100);
    for (int q = 1; q < nRanks; ++q)
      if (q != rank && fds[q])
        sendFrame(fds[q].get(), wire::kPeerGone, 0, payload, brief);
  }
  TLE_LOG(Warn, myRank,
          "watchdog: %s (its connection closed without a "
          "goodbye); every wait on the communicator gives up",
          reason.c_str());
  if (onLost)
    onLost(rank);
}

/// Marks the channel unusable, tells the peers (rank 0 only; best effort,
/// briefly) and records the failure.
tleResult_t SocketBootstrap::breakWith(tleResult_t code,
                                       const std::string &reason) {
  broken = true;
  brokenReason = reason;
  if (myRank == 0) {
    Deadline brief(100);
    for (int r = 1; r < nRanks; ++r)
      if (fds[r])
        sendFrame(fds[r].get(), wire::kAbort, seq, reasonPayload(reason),
                  brief);
  }
  return fail(code, "%s", reason.c_str());
}

tleResult_t SocketBootstrap::acceptPeers() {
  UniqueFd listenFd(
      socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listenFd)
    return failErrno(errno, "socket");
  socklen_t len;
  sockaddr_un addr = abstractAddress(id.address, len);
  if (bind(listenFd.get(), reinterpret_cast<sockaddr *>(&addr), len) != 0) {
    if (errno == EADDRINUSE)
      return fail(tleInvalidArgument,
                  "the unique id's address is in use: another communicator "
                  "is being created from the same id, or another process "
                  "holds the address");
    return failErrno(errno, "bind to the unique id's address");
  }
  if (listen(listenFd.get(), 128) != 0)
    return failErrno(errno, "listen");

  Admission admission(id, nRanks, anyUid, fds);
  std::string reason;
  tleResult_t r = admission.run(listenFd.get(), Deadline(timeoutMs), reason);
  // Every rank is in, or the bootstrap failed: later connections to this
  // id have nothing to join, and closing frees the address for a new
  // communicator.
  listenFd.reset();
  if (r == tleTimeout)
    reason = "bootstrap timed out after " + std::to_string(timeoutMs) +
             " ms: " + reason;
  admission.refuseAll(r == tleSuccess ? "every rank has already joined"
                                      : reason);
  return r == tleSuccess ? r : breakWith(r, reason);
}

tleResult_t SocketBootstrap::connectToRoot(const Deadline &deadline) {
  socklen_t len;
  sockaddr_un addr = abstractAddress(id.address, len);
  auto backoff = std::chrono::milliseconds(1);
  for (;;) {
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd)
      return failErrno(errno, "socket");
    int err = 0;
    if (connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), len) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        int soErr = 0;
        socklen_t soLen = sizeof(soErr);
        if (waitFd(fd.get(), POLLOUT, deadline) == Io::Ok &&
            getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soErr, &soLen) == 0)
          err = soErr;
        else
          err = ETIMEDOUT;
      }
    }
    if (err == 0) {
      fds[0] = std::move(fd);
      return tleSuccess;
    }
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
}

tleResult_t SocketBootstrap::joinRoot() {
  Deadline deadline(timeoutMs);
  if (tleResult_t r = connectToRoot(deadline))
    return r;
  // Anyone can bind the address once rank 0 has closed it: check who
  // listens before saying anything.
  ucred cred;
  if (!peerCredentials(fds[0].get(), cred))
    return failErrno(errno, "reading the credentials of rank 0's socket");
  if (!anyUid && cred.uid != geteuid())
    return fail(tlePeerFailure,
                "the process listening at the unique id's address (pid %d) "
                "runs as uid %u, this rank as uid %u: it is not rank 0 of "
                "this communicator, and nothing was sent to it (set "
                "TLE_BOOTSTRAP_ANY_UID=1 if ranks run as different users)",
                static_cast<int>(cred.pid), static_cast<unsigned>(cred.uid),
                static_cast<unsigned>(geteuid()));
  return handshake(deadline);
}

tleResult_t SocketBootstrap::handshake(const Deadline &deadline) {
  int fd = fds[0].get();
  tleResult_t status;
  wire::Nonce peerNonce = freshNonce(status);
  if (status != tleSuccess)
    return status;
  wire::HelloMessage hello = {};
  hello.version = wire::kVersion;
  hello.nRanks = nRanks;
  hello.rank = myRank;
  memcpy(hello.nonce, peerNonce.data(), peerNonce.size());

  // One round trip per step; each answer is Refuse or what the step wants.
  wire::FrameHeader h;
  std::string payload;
  const char *why = nullptr;
  auto exchange = [&](uint32_t kind, const std::string &out, Step step) {
    Io io = sendFrame(fd, kind, 0, out, deadline);
    if (io == Io::Ok)
      io = recvFrame(fd, step, h, payload, deadline, why);
    if (io == Io::Timeout)
      return fail(tleTimeout,
                  "bootstrap timed out after %lld ms waiting for rank 0 to "
                  "admit rank %d",
                  static_cast<long long>(timeoutMs), myRank);
    if (io == Io::Malformed)
      return fail(tlePeerFailure,
                  "the process at the unique id's address sent a malformed "
                  "handshake frame (%s)",
                  why);
    if (io != Io::Ok)
      return fail(tlePeerFailure,
                  "rank 0 closed the connection while admitting rank %d",
                  myRank);
    // A refusal is not authenticated: at worst an impostor makes this rank
    // fail, which it could do by not answering.
    if (h.kind == wire::kRefuse)
      return fail(
          tlePeerFailure, "rank 0 refused rank %d: %s", myRank,
          wire::printableReason(
              reinterpret_cast<const uint8_t *>(payload.data()), payload.size())
              .c_str());
    return tleSuccess;
  };

  if (tleResult_t r = exchange(wire::kHello, wire::encodeHello(hello),
                               Step::PeerAwaitsChallenge))
    return r;
  wire::Nonce rootNonce;
  memcpy(rootNonce.data(), payload.data(), rootNonce.size());
  wire::Mac proof = wire::handshakeMac(id, wire::Role::Peer, peerNonce,
                                       rootNonce, nRanks, myRank);
  if (tleResult_t r =
          exchange(wire::kProof,
                   std::string(reinterpret_cast<const char *>(proof.data()),
                               proof.size()),
                   Step::PeerAwaitsWelcome))
    return r;
  wire::Mac expected = wire::handshakeMac(id, wire::Role::Root, peerNonce,
                                          rootNonce, nRanks, myRank);
  if (!equalConstantTime(reinterpret_cast<const uint8_t *>(payload.data()),
                         expected.data(), expected.size()))
    return fail(tlePeerFailure,
                "the process at the unique id's address could not prove it "
                "holds the unique id's secret: it is not rank 0 of this "
                "communicator (an impostor, or rank 0 of another id)");
  return tleSuccess;
}

tleResult_t SocketBootstrap::allGatherFds(
    const std::string &mine, const std::vector<int> &myFds,
    std::vector<std::string> &out, std::vector<std::vector<UniqueFd>> &outFds) {
  std::lock_guard<std::mutex> lock(ioLock);
  if (broken)
    return fail(tlePeerFailure,
                "the communicator is unusable after an earlier failure: %s",
                brokenReason.c_str());
  if (myFds.size() > wire::kMaxFdsPerRank)
    return fail(tleInternalError, "%zu descriptors in one all-gather",
                myFds.size());
  ++seq;
  outFds.clear();
  outFds.resize(nRanks);
  if (myRank == 0)
    return gatherAtRoot(mine, myFds, out, outFds, Deadline(timeoutMs));
  return gatherAtPeer(mine, myFds, out, outFds, Deadline(peerTimeoutMs()));
}

tleResult_t SocketBootstrap::gatherAtRoot(
    const std::string &mine, const std::vector<int> &myFds,
    std::vector<std::string> &out, std::vector<std::vector<UniqueFd>> &outFds,
    const Deadline &deadline) {
  std::vector<std::string> blobs(nRanks);
  std::vector<uint32_t> fdCounts(nRanks, 0);
  blobs[0] = mine;
  fdCounts[0] = static_cast<uint32_t>(myFds.size());
  std::vector<int> pending;
  for (int r = 1; r < nRanks; ++r)
    pending.push_back(r);
  // Poll all pending peers at once so a dead one is noticed at once even
  // while another is slow.
  while (!pending.empty()) {
    std::vector<pollfd> polls;
    for (int r : pending)
      polls.push_back({fds[r].get(), POLLIN, 0});
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
      wire::FrameHeader h;
      std::string payload;
      const char *why;
      Io io = recvFrame(fds[r].get(), Step::RootAwaitsContribution, h, payload,
                        deadline, why, &outFds[r]);
      std::string who = "rank " + std::to_string(r);
      if (io == Io::Closed)
        return breakWith(tlePeerFailure, who + " disconnected");
      if (io == Io::Timeout)
        return breakWith(tleTimeout, "collective timed out after " +
                                         std::to_string(timeoutMs) +
                                         " ms receiving from " + who);
      if (io == Io::Ok && h.kind == wire::kGoodbye)
        return breakWith(tlePeerFailure, who + " destroyed its communicator");
      uint32_t nFds = 0;
      if (io == Io::Ok)
        why = wire::decodeContribution(
            reinterpret_cast<const uint8_t *>(payload.data()), payload.size(),
            blobs[r], nFds);
      if (io != Io::Ok || why || nFds != outFds[r].size())
        return breakWith(tlePeerFailure, who + " sent a malformed message");
      fdCounts[r] = nFds;
      if (h.seq != seq)
        return breakWith(tleInvalidArgument,
                         "collective mismatch: " + who +
                             " is in its collective #" + std::to_string(h.seq) +
                             ", rank 0 in #" + std::to_string(seq) +
                             " (ranks must call collectives in the same "
                             "order)");
    }
    pending.swap(still);
  }
  std::string all = wire::encodeGathered(blobs, fdCounts);
  std::vector<int> allFds(myFds);
  for (int r = 1; r < nRanks; ++r)
    for (const UniqueFd &fd : outFds[r])
      allFds.push_back(fd.get());
  for (int r = 1; r < nRanks; ++r) {
    Io io =
        sendFrame(fds[r].get(), wire::kGathered, seq, all, deadline, allFds);
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

tleResult_t SocketBootstrap::gatherAtPeer(
    const std::string &mine, const std::vector<int> &myFds,
    std::vector<std::string> &out, std::vector<std::vector<UniqueFd>> &outFds,
    const Deadline &deadline) {
  int fd = fds[0].get();
  wire::FrameHeader h;
  std::string payload;
  std::vector<UniqueFd> received;
  const char *why;
  Io io = sendFrame(
      fd, wire::kContribution, seq,
      wire::encodeContribution(mine, static_cast<uint32_t>(myFds.size())),
      deadline, myFds);
  // Rank 0 may have given up and closed before our send; the reason it
  // sent first is still queued for us, so read it either way.
  if (io == Io::Ok)
    io = recvFrame(fd, Step::PeerAwaitsGathered, h, payload, deadline, why,
                   &received);
  else if (io == Io::Closed &&
           recvFrame(fd, Step::PeerAwaitsGathered, h, payload,
                     Deadline(deadline, 100), why, &received) == Io::Ok)
    io = Io::Ok;
  if (io == Io::Closed)
    return breakWith(tlePeerFailure, "rank 0 disconnected");
  if (io == Io::Timeout)
    return breakWith(tleTimeout, "collective timed out after " +
                                     std::to_string(peerTimeoutMs()) +
                                     " ms waiting for rank 0");
  if (io != Io::Ok)
    return breakWith(tlePeerFailure, "rank 0 sent a malformed message");
  if (h.kind == wire::kGoodbye)
    return breakWith(tlePeerFailure, "rank 0 destroyed its communicator");
  if (h.kind == wire::kPeerGone) {
    int32_t dead = -1;
    memcpy(&dead, payload.data(), sizeof(dead));
    return breakWith(tlePeerFailure,
                     "rank " + std::to_string(dead) + "'s process died");
  }
  if (h.kind == wire::kAbort)
    return breakWith(tlePeerFailure,
                     "rank 0 reported: " +
                         wire::printableReason(
                             reinterpret_cast<const uint8_t *>(payload.data()),
                             payload.size()));
  if (h.seq != seq)
    return breakWith(tlePeerFailure, "rank 0 sent an unexpected message");
  std::vector<std::string> blobs;
  std::vector<uint32_t> fdCounts;
  why = wire::decodeGathered(reinterpret_cast<const uint8_t *>(payload.data()),
                             payload.size(), nRanks, blobs, fdCounts);
  size_t total = 0;
  for (uint32_t c : fdCounts)
    total += c;
  if (why || total != received.size())
    return breakWith(tlePeerFailure, "rank 0 sent a malformed message");
  // Descriptors arrive in rank order; this rank's own copies are dropped.
  size_t at = 0;
  for (int r = 0; r < nRanks; ++r)
    for (uint32_t i = 0; i < fdCounts[r]; ++i, ++at)
      if (r != myRank)
        outFds[r].push_back(std::move(received[at]));
  out = std::move(blobs);
  return tleSuccess;
}

/// TLE_BOOTSTRAP_ANY_UID: "1" lets ranks of different users join one
/// communicator (the MAC still authenticates them); unset, "" or "0" keeps
/// the same-user check.
tleResult_t readAnyUid(bool &out) {
  const char *v = getenv("TLE_BOOTSTRAP_ANY_UID");
  if (!v || !*v || strcmp(v, "0") == 0) {
    out = false;
    return tleSuccess;
  }
  if (strcmp(v, "1") == 0) {
    out = true;
    return tleSuccess;
  }
  return fail(tleInvalidArgument,
              "TLE_BOOTSTRAP_ANY_UID must be 0 or 1, not '%.32s'", v);
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
  wire::IdLayout id = {};
  id.magic = wire::kIdMagic;
  id.version = wire::kVersion;
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
  wire::IdLayout id;
  memcpy(&id, &rawId, sizeof(id));
  if (id.magic != wire::kIdMagic)
    return fail(tleInvalidArgument, "the unique id was not made by "
                                    "tleGetUniqueId");
  if (id.version != wire::kVersion)
    return fail(tleInvalidArgument,
                "the unique id is of bootstrap version %u, this library "
                "speaks %u",
                id.version, wire::kVersion);
  if (strnlen(id.address, sizeof(id.address)) == sizeof(id.address))
    return fail(tleInvalidArgument, "the unique id's address is corrupt");
  bool anyUid = false;
  if (tleResult_t r = readAnyUid(anyUid))
    return r;
  auto bs =
      std::make_unique<SocketBootstrap>(id, rank, nRanks, timeoutMs, anyUid);
  auto start = std::chrono::steady_clock::now();
  tleResult_t r = rank == 0 ? bs->acceptPeers() : bs->joinRoot();
  if (r != tleSuccess)
    return r;
  bs->markJoined();
  TLE_LOG(Info, rank, "bootstrap: %s in %lld ms (timeout %lld ms%s)",
          rank == 0
              ? ("all " + std::to_string(nRanks) + " ranks joined").c_str()
              : "joined rank 0",
          static_cast<long long>(
              std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count()),
          static_cast<long long>(timeoutMs),
          anyUid ? ", TLE_BOOTSTRAP_ANY_UID: any uid admitted" : "");
  out = std::move(bs);
  return tleSuccess;
}

} // namespace tle
