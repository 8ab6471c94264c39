//===- BootstrapSecurityTest.cpp - Attacks on the bootstrap -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The reproducers of issue 18, run against real ranks in forked children.
// The attacker is another local process: it finds rank 0's listener in
// /proc/net/unix as any user can, connects without the id, announces huge
// frames, or binds the id's address once rank 0 has closed it and waits for
// a late rank. The tests that need an attacker of another uid run as root
// and drop to `nobody` in the attacking child. Also: no shared-memory name
// is left behind when ranks are killed with SIGKILL at any moment.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "bootstrap/Wire.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace tle::test;
namespace wire = tle::wire;

class BootstrapSecurityTest : public ProcessFixture {};

constexpr uid_t kNobody = 65534;

sockaddr_un abstractAddress(const std::string &name, socklen_t &len) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path + 1, name.data(), name.size());
  len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

/// A blocking connection to the abstract socket `name`; -1 on failure.
int connectTo(const std::string &name) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un addr = abstractAddress(name, len);
  if (connect(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// A listener bound to the abstract socket `name`; -1 when it is taken.
int listenOn(const std::string &name) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un addr = abstractAddress(name, len);
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0 ||
      listen(fd, 16) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// The abstract address and the secret inside an id (what an attacker
/// does not have; the tests use them to play the attacker's part and to
/// look for the secret in what it received).
std::string addressOf(const tleUniqueId &id) {
  wire::IdLayout layout;
  memcpy(&layout, &id, sizeof(layout));
  return std::string(layout.address,
                     strnlen(layout.address, sizeof(layout.address)));
}
std::string secretOf(const tleUniqueId &id) {
  wire::IdLayout layout;
  memcpy(&layout, &id, sizeof(layout));
  return std::string(reinterpret_cast<const char *>(layout.secret),
                     sizeof(layout.secret));
}

/// Everything that arrives on `fd` within `ms` milliseconds or until EOF.
std::string drain(int fd, int ms) {
  std::string got;
  auto end = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    int left =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             end - Clock::now())
                             .count());
    pollfd p = {fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0)
      return got;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n <= 0)
      return got;
    got.append(buf, n);
  }
}

/// A frame header as the bootstrap's wire format lays it out.
std::string header(uint32_t kind, uint64_t bytes) {
  wire::FrameHeader h = {wire::kFrameMagic, kind, 0, bytes};
  return std::string(reinterpret_cast<const char *>(&h), sizeof(h));
}

bool sendBytes(int fd, const std::string &bytes) {
  return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

std::string listenerPrefix() { return "tle-" + std::to_string(getpid()) + "-"; }

// Reproducer: rank 0 used to take one handshake at a time with a 2 s
// deadline each, so idle connections from anyone stalled the bootstrap
// past its timeout. Now handshakes run concurrently, each with its own
// deadline, and the real ranks join at once.
TEST_F(BootstrapSecurityTest, IdleConnectionsDoNotStallRankZero) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(6000);
  Child r0 = start([&](std::string &) { return joinOnly(3, id, 0, cfg); });
  std::string name = awaitListener(listenerPrefix(), 5000);
  ASSERT_FALSE(name.empty()) << "rank 0 never listened";
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    int fd = connectTo(name);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  Child r1 = start([&](std::string &) { return joinOnly(3, id, 1, cfg); });
  Child r2 = start([&](std::string &) { return joinOnly(3, id, 2, cfg); });
  for (Child *c : {&r0, &r1, &r2}) {
    Outcome o = collect(*c, 15000);
    ASSERT_TRUE(o.finished);
    EXPECT_EQ(o.result, tleSuccess) << o.detail;
    EXPECT_LT(o.seconds, 4.0);
  }
  for (int fd : idle)
    close(fd);
}

/// A process that connects to `name` in a loop and never speaks, keeping
/// its newest 200 connections open, until it is killed (or 20 s pass).
pid_t startFlood(const std::string &name) {
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  setenv("TLE_BOOTSTRAP_ANY_UID", "1", 1);
  socklen_t len;
  sockaddr_un addr = abstractAddress(name, len);
  std::vector<int> open;
  auto end = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < end) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), len) != 0) {
      close(fd);
      usleep(100); // the backlog is full: let rank 0 accept
      continue;
    }
    open.push_back(fd);
    if (open.size() > 200) {
      close(open.front());
      open.erase(open.begin());
    }
  }
  _exit(0);
}

// Reproducer (issue 32, item 5): silent connections in a loop from three
// processes (another user's, under TLE_BOOTSTRAP_ANY_UID=1) filled rank
// 0's handshake table, and "drop the oldest" evicted the real ranks in the
// middle of their handshake: every bootstrap failed. A connection that
// sent a valid Hello is never evicted in favour of a silent one. Loopback
// only, bounded: the flood is killed once the ranks are done.
TEST_F(BootstrapSecurityTest, FloodOfSilentConnectionsDoesNotEvictRanks) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(8000);
  const int n = 3;
  Child r0 = start([&](std::string &) { return joinOnly(n, id, 0, cfg); });
  std::string name = awaitListener(listenerPrefix(), 5000);
  ASSERT_FALSE(name.empty()) << "rank 0 never listened";
  std::vector<pid_t> floods;
  for (int i = 0; i < 3; ++i)
    floods.push_back(startFlood(name));
  usleep(200 * 1000); // the table is full before the ranks connect
  std::vector<Child> ranks;
  for (int r = 1; r < n; ++r)
    ranks.push_back(
        start([&, r](std::string &) { return joinOnly(n, id, r, cfg); }));
  Outcome o0 = collect(r0, 15000);
  std::vector<Outcome> others;
  for (Child &c : ranks)
    others.push_back(collect(c, 15000));
  for (pid_t pid : floods) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  ASSERT_TRUE(o0.finished);
  EXPECT_EQ(o0.result, tleSuccess) << o0.detail;
  for (Outcome &o : others) {
    ASSERT_TRUE(o.finished);
    EXPECT_EQ(o.result, tleSuccess) << o.detail;
  }
}

// Reproducer: an unauthenticated header announcing 2^30 bytes made rank 0
// allocate and zero 1 GiB before any check. Rank 0 runs with an address
// space too small for that; it must refuse the frame and go on to admit
// the real rank.
TEST_F(BootstrapSecurityTest, HugeHelloIsRefusedBeforeAllocating) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(5000);
  Child r0 = start([&](std::string &) {
    capAddressSpace(256);
    return joinOnly(2, id, 0, cfg);
  });
  std::string name = awaitListener(listenerPrefix(), 5000);
  ASSERT_FALSE(name.empty());
  int fd = connectTo(name);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(sendBytes(fd, header(wire::kHello, uint64_t(1) << 30)));
  // The refusal (or EOF) arrives at once: rank 0 does not wait for the
  // announced gigabyte.
  drain(fd, 1000);
  close(fd);
  Child r1 = start([&](std::string &) { return joinOnly(2, id, 1, cfg); });
  for (Child *c : {&r0, &r1}) {
    Outcome o = collect(*c);
    ASSERT_TRUE(o.finished);
    EXPECT_EQ(o.result, tleSuccess) << o.detail;
  }
}

/// Plays rank 0 at `listenFd` for one connecting rank: records what the
/// rank sends, answers as far as the protocol lets one answer without the
/// secret (a challenge of its choosing, then a made-up welcome) and
/// returns everything received.
std::string impersonateRankZero(int listenFd, int ms) {
  pollfd p = {listenFd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1)
    return std::string();
  int fd = accept(listenFd, nullptr, nullptr);
  std::string got = drain(fd, 300);
  std::string challenge(wire::kNonceBytes, '\x5a');
  sendBytes(fd, header(wire::kChallenge, challenge.size()) + challenge);
  got += drain(fd, 300);
  std::string mac(wire::kMacBytes, '\x33');
  sendBytes(fd, header(wire::kWelcome, mac.size()) + mac);
  got += drain(fd, 300);
  close(fd);
  return got;
}

// Reproducer: a late rank (or a rank of a reused id) used to send the raw
// secret to whoever listened at the id's address once rank 0 had closed
// it. Now it proves knowledge of the secret with a MAC over nonces, sends
// nothing an impostor can reuse, and refuses an impostor that cannot prove
// the secret back.
TEST_F(BootstrapSecurityTest, ImpostorAtTheAddressLearnsNoSecret) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(3000);
  // A real communicator of the id comes and goes.
  Child r0 = start([&](std::string &) { return joinOnly(2, id, 0, cfg); });
  Child r1 = start([&](std::string &) { return joinOnly(2, id, 1, cfg); });
  for (Child *c : {&r0, &r1}) {
    Outcome o = collect(*c);
    ASSERT_TRUE(o.finished);
    ASSERT_EQ(o.result, tleSuccess) << o.detail;
  }
  // The attacker takes the address and waits for a late rank.
  int listenFd = listenOn(addressOf(id));
  ASSERT_GE(listenFd, 0);
  Child late = start([&](std::string &) { return joinOnly(2, id, 1, cfg); });
  std::string got = impersonateRankZero(listenFd, 3000);
  close(listenFd);
  Outcome o = collect(late);
  ASSERT_TRUE(o.finished);
  EXPECT_FALSE(got.empty()) << "the late rank never connected";
  EXPECT_EQ(got.find(secretOf(id)), std::string::npos)
      << "the impostor received the id's secret";
  EXPECT_EQ(o.result, tlePeerFailure);
  EXPECT_NE(o.detail.find("could not prove it holds the unique id's secret"),
            std::string::npos)
      << o.detail;
}

// A rank must not trust a huge frame from whoever listens at the address
// either: before rank 0 has proven itself, a frame larger than the
// expected message is refused without allocating.
TEST_F(BootstrapSecurityTest, ImpostorsHugeFrameIsRefused) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  int listenFd = listenOn(addressOf(id));
  ASSERT_GE(listenFd, 0);
  tleConfig_t cfg = bootstrapConfig(3000);
  Child rank = start([&](std::string &) {
    capAddressSpace(256);
    return joinOnly(2, id, 1, cfg);
  });
  pollfd p = {listenFd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 3000), 1);
  int fd = accept(listenFd, nullptr, nullptr);
  drain(fd, 200);
  sendBytes(fd, header(wire::kRefuse, uint64_t(1) << 30));
  Outcome o = collect(rank);
  close(fd);
  close(listenFd);
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.result, tlePeerFailure) << o.detail;
  EXPECT_NE(o.detail.find("malformed"), std::string::npos) << o.detail;
}

// Drops the calling (child) process to the `nobody` user.
bool becomeNobody() { return setgid(kNobody) == 0 && setuid(kNobody) == 0; }

// Another user may find and connect to rank 0's listener; rank 0 refuses
// the connection by its kernel-reported uid before reading anything.
TEST_F(BootstrapSecurityTest, OtherUsersAreRefusedByUid) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to act as another user";
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(1500);
  Child r0 = start([&](std::string &) { return joinOnly(2, id, 0, cfg); });
  std::string name = awaitListener(listenerPrefix(), 5000);
  ASSERT_FALSE(name.empty());
  Child intruder = start([&](std::string &detail) {
    if (!becomeNobody()) {
      detail = "setuid failed";
      return tleInternalError;
    }
    int fd = connectTo(name);
    if (fd < 0) {
      detail = "connect failed";
      return tleInternalError;
    }
    // Whatever it says, the answer is a refusal naming its uid.
    wire::HelloMessage hello = {};
    hello.version = wire::kVersion;
    hello.nRanks = 2;
    hello.rank = 1;
    std::string payload(reinterpret_cast<const char *>(&hello), sizeof(hello));
    sendBytes(fd, header(wire::kHello, payload.size()) + payload);
    detail = drain(fd, 1000);
    return tleSuccess;
  });
  Outcome oi = collect(intruder);
  ASSERT_TRUE(oi.finished);
  EXPECT_NE(oi.detail.find("uid 65534"), std::string::npos) << oi.detail;
  Outcome o0 = collect(r0);
  ASSERT_TRUE(o0.finished);
  EXPECT_EQ(o0.result, tleTimeout);
  EXPECT_NE(o0.detail.find("refused a peer: a process of uid 65534"),
            std::string::npos)
      << o0.detail;
}

// An impostor of another user at the id's address receives not a single
// byte: the rank checks the listener's uid before it speaks.
TEST_F(BootstrapSecurityTest, ImpostorOfAnotherUserReceivesNothing) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to act as another user";
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::string address = addressOf(id);
  Child impostor = start([&](std::string &detail) {
    close(ready[0]);
    if (!becomeNobody()) {
      detail = "setuid failed";
      return tleInternalError;
    }
    int listenFd = listenOn(address);
    ssize_t ignored = write(ready[1], "x", 1);
    (void)ignored;
    pollfd p = {listenFd, POLLIN, 0};
    if (listenFd < 0 || poll(&p, 1, 3000) != 1) {
      detail = "nobody connected";
      return tleInternalError;
    }
    int fd = accept(listenFd, nullptr, nullptr);
    detail = "received " + std::to_string(drain(fd, 1000).size()) + " bytes";
    return tleSuccess;
  });
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  tleConfig_t cfg = bootstrapConfig(3000);
  Child rank = start([&](std::string &) { return joinOnly(2, id, 1, cfg); });
  Outcome o = collect(rank);
  Outcome oi = collect(impostor);
  ASSERT_TRUE(o.finished && oi.finished);
  EXPECT_EQ(o.result, tlePeerFailure);
  EXPECT_NE(o.detail.find("runs as uid 65534"), std::string::npos) << o.detail;
  EXPECT_EQ(oi.detail, "received 0 bytes");
}

// TLE_BOOTSTRAP_ANY_UID=1 lifts the uid check, not the authentication:
// another user's connection gets a challenge and, without the secret, a
// refusal for its proof.
TEST_F(BootstrapSecurityTest, AnyUidStillNeedsTheSecret) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to act as another user";
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(1500);
  Child r0 = start([&](std::string &) {
    setenv("TLE_BOOTSTRAP_ANY_UID", "1", 1);
    return joinOnly(2, id, 0, cfg);
  });
  std::string name = awaitListener(listenerPrefix(), 5000);
  ASSERT_FALSE(name.empty());
  Child intruder = start([&](std::string &detail) {
    if (!becomeNobody())
      return tleInternalError;
    int fd = connectTo(name);
    wire::HelloMessage hello = {};
    hello.version = wire::kVersion;
    hello.nRanks = 2;
    hello.rank = 1;
    std::string payload(reinterpret_cast<const char *>(&hello), sizeof(hello));
    sendBytes(fd, header(wire::kHello, payload.size()) + payload);
    std::string challenge = drain(fd, 500);
    std::string proof(wire::kMacBytes, '\x11');
    sendBytes(fd, header(wire::kProof, proof.size()) + proof);
    detail = std::to_string(challenge.size()) + " " + drain(fd, 500);
    return tleSuccess;
  });
  Outcome oi = collect(intruder);
  ASSERT_TRUE(oi.finished);
  std::string challengeBytes =
      std::to_string(wire::kHeaderBytes + wire::kNonceBytes) + " ";
  EXPECT_EQ(oi.detail.compare(0, challengeBytes.size(), challengeBytes), 0)
      << oi.detail;
  EXPECT_NE(oi.detail.find("rank 1 presented a wrong secret"),
            std::string::npos)
      << oi.detail;
  Outcome o0 = collect(r0);
  ASSERT_TRUE(o0.finished);
  EXPECT_EQ(o0.result, tleTimeout);
}

TEST(BootstrapSettingTest, AnyUidMustBeZeroOrOne) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  setenv("TLE_BOOTSTRAP_ANY_UID", "yes", 1);
  tleComm_t comm = nullptr;
  tleConfig_t cfg = bootstrapConfig(200);
  EXPECT_EQ(tleCommInitRank(&comm, 2, &id, 1, 0, &cfg), tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail())
                .find("TLE_BOOTSTRAP_ANY_UID must be 0 or 1, not 'yes'"),
            std::string::npos)
      << tleGetLastErrorDetail();
  EXPECT_EQ(comm, nullptr);
  unsetenv("TLE_BOOTSTRAP_ANY_UID");
}

/// Kills `child` with SIGKILL and reaps it.
void killChild(Child &child) {
  kill(child.pid, SIGKILL);
  waitpid(child.pid, nullptr, 0);
  close(child.fd);
}

// Reproducer: a rank killed between creating its shared memory and the
// confirmation round used to leave /dev/shm/tle-* behind. Rank 0 is killed
// while it waits in a collective allocation for rank 1, which never calls.
TEST_F(BootstrapSecurityTest, KillDuringAllocationLeavesNoName) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess);
  tleConfig_t cfg = bootstrapConfig(10000);
  Child r0 = start([&](std::string &) {
    tleComm_t comm;
    if (tleResult_t r = tleCommInitRank(&comm, 2, &id, 0, 0, &cfg))
      return r;
    tleMem_t mem;
    return tleMemAlloc(comm, 1 << 20, &mem);
  });
  Child r1 = start([&](std::string &) {
    tleComm_t comm;
    if (tleResult_t r = tleCommInitRank(&comm, 2, &id, 1, 0, &cfg))
      return r;
    sleep(30);
    return tleSuccess;
  });
  usleep(800 * 1000);
  killChild(r0);
  killChild(r1);
  EXPECT_TRUE(segmentsOf(r0.pid).empty()) << segmentsOf(r0.pid)[0];
  EXPECT_TRUE(segmentsOf(r1.pid).empty()) << segmentsOf(r1.pid)[0];
}

/// A rank's whole life: join, allocate twice, free, destroy.
tleResult_t busyRank(int n, const tleUniqueId &id, int rank) {
  tleConfig_t cfg = bootstrapConfig(5000);
  tleComm_t comm;
  if (tleResult_t r = tleCommInitRank(&comm, n, &id, rank, 0, &cfg))
    return r;
  for (int i = 0; i < 4; ++i) {
    tleMem_t mem;
    if (tleResult_t r = tleMemAlloc(comm, 4096 * (i + 1), &mem))
      return r;
    tleMemFree(mem);
  }
  return tleCommDestroy(comm);
}

// Nothing is left in /dev/shm whenever the ranks die: an undisturbed run
// measures how long a busy 3-rank group lives, then in each round every
// rank is killed at its own seeded moment within that life.
TEST_F(BootstrapSecurityTest, KillAtAnyMomentLeavesNoName) {
  auto startGroup = [&](std::vector<Child> &ranks) {
    tleUniqueId id;
    EXPECT_EQ(tleGetUniqueId(&id), tleSuccess);
    for (int r = 0; r < 3; ++r)
      ranks.push_back(
          start([&, r](std::string &) { return busyRank(3, id, r); }));
  };
  std::vector<Child> ranks;
  auto begin = Clock::now();
  startGroup(ranks);
  for (Child &c : ranks) {
    Outcome o = collect(c);
    ASSERT_TRUE(o.finished);
    ASSERT_EQ(o.result, tleSuccess) << o.detail;
  }
  auto lifeUs = std::chrono::duration_cast<std::chrono::microseconds>(
                    Clock::now() - begin)
                    .count();
  std::mt19937 rng(18);
  for (int round = 0; round < 20; ++round) {
    ranks.clear();
    begin = Clock::now();
    startGroup(ranks);
    std::vector<std::pair<int64_t, Child *>> kills;
    for (Child &c : ranks)
      kills.emplace_back(rng() % (lifeUs + 1), &c);
    std::sort(kills.begin(), kills.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    for (auto &[atUs, child] : kills) {
      std::this_thread::sleep_until(begin + std::chrono::microseconds(atUs));
      killChild(*child);
    }
    for (Child &c : ranks)
      EXPECT_TRUE(segmentsOf(c.pid).empty()) << "round " << round;
  }
}

} // namespace
