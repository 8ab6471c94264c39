//===- ChildProcess.h - Forked ranks for multi-process tests ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The tests of one process per rank run each rank in a forked child. A child
// reports (status, detail) through a pipe and leaves with _exit, never
// returning into the test framework; the parent collects the report with a
// deadline and kills a child that hangs, so a hang is a test failure rather
// than a stuck suite. Also: which /dev/shm names a process left behind, and
// which abstract Unix sockets are listening (what any local user sees in
// /proc/net/unix); and a cap on a child's address space, for tests that an
// input does not make the library allocate.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_UNITTESTS_HOST_CHILDPROCESS_H
#define TLE_UNITTESTS_HOST_CHILDPROCESS_H

#include "tle/tle.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <poll.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tle::test {

using Clock = std::chrono::steady_clock;

/// What a child reported.
struct Outcome {
  tleResult_t result = tleInternalError;
  std::string detail;
  bool finished = false; ///< reported before the deadline
  double seconds = 0;    ///< from spawn to report
};

struct Child {
  pid_t pid;
  int fd;
  Clock::time_point start;
};

/// Runs `body` in a child; its return value and the thread's last error
/// detail are sent back. Pass `detail` to report something else.
inline Child spawn(std::function<tleResult_t(std::string &detail)> body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  Child child{fork(), fds[0], Clock::now()};
  if (child.pid == 0) {
    close(fds[0]);
    std::string detail;
    tleResult_t r = body(detail);
    if (r != tleSuccess && detail.empty())
      detail = tleGetLastErrorDetail();
    std::string msg = std::to_string(static_cast<int>(r)) + "\n" + detail;
    ssize_t ignored = write(fds[1], msg.data(), msg.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  return child;
}

/// Collects a child's report, killing it if it has not reported within
/// `timeoutMs` (a hang is a failure of the test).
inline Outcome collect(Child &child, int timeoutMs = 10000) {
  Outcome out;
  std::string msg;
  auto deadline = child.start + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    int left =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - Clock::now())
                             .count());
    pollfd p = {child.fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0)
      break;
    char buf[512];
    ssize_t n = read(child.fd, buf, sizeof(buf));
    if (n <= 0) {
      out.finished = !msg.empty();
      break;
    }
    msg.append(buf, n);
  }
  out.seconds =
      std::chrono::duration<double>(Clock::now() - child.start).count();
  close(child.fd);
  if (!out.finished)
    kill(child.pid, SIGKILL);
  waitpid(child.pid, nullptr, 0);
  size_t nl = msg.find('\n');
  if (out.finished && nl != std::string::npos) {
    out.result = static_cast<tleResult_t>(std::stoi(msg.substr(0, nl)));
    out.detail = msg.substr(nl + 1);
  }
  return out;
}

/// Names in /dev/shm that start with "tle-<pid>-" (the names the CPU
/// backend used to give its segments), or with "tle-" when `pid` is 0.
inline std::vector<std::string> segmentsOf(pid_t pid) {
  std::vector<std::string> found;
  std::string prefix = pid ? "tle-" + std::to_string(pid) + "-" : "tle-";
  if (DIR *dir = opendir("/dev/shm")) {
    while (dirent *e = readdir(dir))
      if (strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
        found.push_back(e->d_name);
    closedir(dir);
  }
  return found;
}

/// Abstract Unix socket names (without the leading '@') starting with
/// `prefix` that some process listens on, as /proc/net/unix shows them to
/// every local user.
inline std::vector<std::string>
listeningAbstractSockets(const std::string &prefix) {
  std::vector<std::string> found;
  std::ifstream in("/proc/net/unix");
  std::string line;
  std::getline(in, line); // the column titles
  while (std::getline(in, line)) {
    // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 is
    // __SO_ACCEPTCON, a listening socket.
    size_t at = line.find(" @");
    if (at == std::string::npos || line.find(" 00010000 ") == std::string::npos)
      continue;
    std::string name = line.substr(at + 2);
    if (name.compare(0, prefix.size(), prefix) == 0)
      found.push_back(name);
  }
  return found;
}

/// Polls /proc/net/unix until a socket whose name starts with `prefix`
/// listens; "" after `timeoutMs`.
inline std::string awaitListener(const std::string &prefix, int timeoutMs) {
  auto end = Clock::now() + std::chrono::milliseconds(timeoutMs);
  while (Clock::now() < end) {
    std::vector<std::string> names = listeningAbstractSockets(prefix);
    if (!names.empty())
      return names[0];
    usleep(2000);
  }
  return std::string();
}

/// A fixture whose children must leave no /dev/shm name behind: every
/// child is started through start(), and TearDown checks their pids.
class ProcessFixture : public testing::Test {
protected:
  void TearDown() override {
    for (pid_t pid : pids)
      EXPECT_TRUE(segmentsOf(pid).empty())
          << "leaked /dev/shm/" << segmentsOf(pid)[0];
    EXPECT_TRUE(segmentsOf(getpid()).empty());
  }
  Child start(std::function<tleResult_t(std::string &)> body) {
    Child c = spawn(std::move(body));
    pids.push_back(c.pid);
    return c;
  }
  std::vector<pid_t> pids;
};

/// A communicator configuration with the given bootstrap deadline.
inline tleConfig_t bootstrapConfig(int64_t bootstrapMs,
                                   uint32_t nBarriers = 16) {
  tleConfig_t c = TLE_CONFIG_INITIALIZER;
  c.nBarriers = nBarriers;
  c.bootstrapTimeoutMs = bootstrapMs;
  return c;
}

/// Joins and returns the status of tleCommInitRank (destroying on success).
inline tleResult_t joinOnly(int n, const tleUniqueId &id, int rank,
                            const tleConfig_t &cfg) {
  tleComm_t comm;
  tleResult_t r = tleCommInitRank(&comm, n, &id, rank, 0, &cfg);
  if (r == tleSuccess)
    tleCommDestroy(comm);
  return r;
}

/// Caps this process's address space at its current size plus `extraMiB`,
/// so that a 1 GiB allocation fails instead of quietly succeeding.
inline void capAddressSpace(size_t extraMiB) {
  std::ifstream status("/proc/self/status");
  std::string line;
  size_t vmKiB = 0;
  while (std::getline(status, line))
    if (line.compare(0, 7, "VmSize:") == 0)
      vmKiB = std::stoull(line.substr(7));
  rlimit lim;
  lim.rlim_cur = lim.rlim_max = (vmKiB + extraMiB * 1024) * 1024;
  setrlimit(RLIMIT_AS, &lim);
}

} // namespace tle::test

#endif // TLE_UNITTESTS_HOST_CHILDPROCESS_H
