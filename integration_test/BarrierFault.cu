//===- BarrierFault.cu - Timeouts and bad indices on real GPUs ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Faults must be reported, never hang and never corrupt memory. A faulting
// launch kills its CUDA context (a trap is sticky), so every case runs in a
// child process that this harness forks before any CUDA call, captures,
// times and judges. Every case runs on all N GPUs of the machine:
//
//  - timeout:    one process, all GPUs; only rank 0 calls the barrier.
//                Rank 0's wait must give up after TLE_BARRIER_TIMEOUT_MS
//                (1000, from the environment), the launch must fail, and
//                tleCommGetError must name rank 0, slot 3, epoch 1 and
//                every other rank as missing; the child prints it and exits
//                non-zero within 2x the timeout of the launch.
//  - timeout-mp: the same with one process per rank (config.timeoutMs).
//  - oob:        one process per rank. Rank 0 calls the barrier with a slot
//                index past nBarriers, chosen so that an unchecked arrive
//                would store into a canary buffer on rank 1. The record must
//                say tleIndexOutOfRange, and the canary and rank 1's inbox
//                must be unchanged, as read back by rank 1's own process
//                once rank 0's launch has failed: after a trap, CUDA calls
//                of the faulting process fail on every device, so only
//                another process can still judge the memory. Ranks 2 and up
//                only take part in the collectives.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/detail/DevComm.h"
#include "tle/device.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace tle::gpu;

namespace {

constexpr int kTimeoutMs = 1000;
constexpr uint32_t kSlots = 8;
constexpr uint32_t kFaultSlot = 3;
/// Exit status of a child that saw the expected fault and reported it.
constexpr int kExitReported = 3;
/// Ranks of every case: set by main from the machine before any fork.
int gRanks = 2;

__global__ void barrierOnce(const void *comm, uint32_t slot) {
  flagcxIntraBarrierSyncS(comm, kCoopBlock, slot, false, kAcqRel);
}

/// Prints the launch status and the device record; returns the child's
/// exit status.
int report(tleComm_t comm, cudaError_t launch, uint64_t launchNs) {
  std::printf("launch result after %.1f ms: %s\n",
              (hostNowNs() - launchNs) / 1e6, cudaGetErrorString(launch));
  tleErrorInfo info;
  std::memset(&info, 0, sizeof(info));
  tleResult_t r = tleCommGetError(comm, &info);
  if (info.result == tleSuccess) {
    std::printf("no device error record (tleCommGetError: %s)\n",
                tleGetErrorString(r));
    return 1;
  }
  std::printf("FAULT-RECORD code=%d(%s) rank=%d slot=%u epoch=%u "
              "missing=0x%x block=%d thread=%d nBarriers=%u elapsed_ms=%.1f\n",
              int(info.result), tleGetErrorString(info.result), info.rank,
              info.slot, info.epoch, info.missingMask, info.block, info.thread,
              info.nBarriers, info.elapsedNs / 1e6);
  std::printf("message: %s\n", info.message);
  return kExitReported;
}

int caseTimeoutSingle() {
  if (gpusOrSkip(gRanks) < gRanks)
    return kExitSkip;
  // timeoutMs -1: the deadline comes from TLE_BARRIER_TIMEOUT_MS, which
  // the harness sets, so the environment path is exercised too.
  tleConfig_t cfg = cudaConfig(kSlots, -1);
  std::vector<tleComm_t> comms(gRanks);
  std::vector<int> devs(gRanks);
  for (int r = 0; r < gRanks; ++r)
    devs[r] = r;
  TK(tleCommInitAll(comms.data(), gRanks, devs.data(), &cfg));
  void *dc0;
  TK(tleCommGetDevComm(comms[0], &dc0));
  CK(cudaSetDevice(0));
  uint64_t t0 = hostNowNs();
  std::printf("LAUNCH-NS=%llu\n", (unsigned long long)t0);
  barrierOnce<<<1, 128>>>(dc0, kFaultSlot);
  CK_LAUNCH();
  cudaError_t err = cudaDeviceSynchronize();
  return report(comms[0], err, t0);
}

/// Waits up to `timeoutMs` for one byte from the other rank's process on
/// `fd`. Returns the byte, -1 at end of file (that process closed the pipe
/// or died) and -2 on timeout or error.
int awaitPeer(int fd, int timeoutMs) {
  uint64_t deadline = hostNowNs() + uint64_t(timeoutMs) * 1000000ull;
  for (;;) {
    int64_t leftNs = int64_t(deadline - hostNowNs());
    if (leftNs <= 0)
      return -2;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, int(leftNs / 1000000) + 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -2;
    if (n == 0)
      continue;
    unsigned char c;
    ssize_t k = read(fd, &c, 1);
    if (k == 1)
      return c;
    if (k == 0)
      return -1;
    if (errno != EINTR)
      return -2;
  }
}

/// Sends one byte to the other rank's process.
void tellPeer(int fd, char c) {
  if (write(fd, &c, 1) != 1)
    std::perror("write to the other rank's process");
}

/// The other ranks' processes and rank 0's pipes to them, while they run
/// (index r - 1 for rank r). Global so that the atexit hook also reaps
/// them when rank 0 leaves through CK / TK.
std::vector<pid_t> gPeers;
std::vector<int> gToPeers;
constexpr int kPeerGraceMs = 10000;

/// Closes the pipes to the other ranks (their cue that rank 0 is done:
/// their parts return at the latest then) and reaps them, killing any
/// still there after kPeerGraceMs. Returns the wait status of the first
/// rank that failed, else rank 1's; -1 when there were none.
int finishPeers() {
  if (gPeers.empty())
    return -1;
  std::vector<pid_t> pids;
  pids.swap(gPeers);
  for (int fd : gToPeers)
    close(fd);
  gToPeers.clear();
  std::fflush(stdout);
  int result = -1;
  bool failed = false;
  uint64_t deadline = hostNowNs() + uint64_t(kPeerGraceMs) * 1000000ull;
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = -1;
    while (waitpid(pids[i], &status, WNOHANG) != pids[i]) {
      if (hostNowNs() > deadline) {
        std::printf("rank %zu's process hung: killing it\n", i + 1);
        kill(pids[i], SIGKILL);
        waitpid(pids[i], &status, 0);
        break;
      }
      usleep(1000);
    }
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (i == 0 || (!ok && !failed))
      result = status;
    failed = failed || !ok;
    if (!ok && i > 0)
      std::printf("rank %zu's process failed: wait status 0x%x\n", i + 1,
                  status);
  }
  return result;
}

void reapPeersAtExit() { finishPeers(); }

/// One rank's part of a multi-process case, given its communicator and the
/// pipes to and from rank 0's process (for rank 0: to and from rank 1's);
/// returns an exit status.
using RankPart = int (*)(tleComm_t comm, int toPeer, int fromPeer);

/// Runs a case with one process per rank on devices 0..gRanks-1: ranks 1
/// and up in children forked here, before any CUDA call (a forked CUDA
/// context is unusable), each of which gets the unique id through its pipe
/// from rank 0, which then carries rank 0's messages; rank 0 in this
/// process. Rank 1 runs `rank1`, the others `others`. Rank 0's exit status
/// is the one the harness judges, so this process also waits for the
/// others (their output reaches the harness through the inherited stdout
/// before we exit) and turns a failure of any into status 1.
int runRanks(const tleConfig_t &cfg, RankPart rank0, RankPart rank1,
             RankPart others) {
  std::vector<int> ups;
  std::fflush(stdout);
  for (int r = 1; r < gRanks; ++r) {
    int down[2], up[2]; // rank 0 -> rank r, rank r -> rank 0
    if (pipe(down) != 0 || pipe(up) != 0) {
      std::perror("pipe");
      return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      close(down[1]);
      close(up[0]);
      // Not the other ranks' pipes: only rank 0's closing ends a part.
      for (int fd : gToPeers)
        close(fd);
      for (int fd : ups)
        close(fd);
      tleUniqueId id;
      if (read(down[0], &id, sizeof(id)) != ssize_t(sizeof(id)))
        std::_Exit(kExitSkip); // rank 0 found too few GPUs
      tleComm_t comm;
      TK(tleCommInitRank(&comm, gRanks, &id, r, r, &cfg));
      int rc = (r == 1 ? rank1 : others)(comm, up[1], down[0]);
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(rc);
    }
    close(down[0]);
    close(up[1]);
    gPeers.push_back(pid);
    gToPeers.push_back(down[1]);
    ups.push_back(up[0]);
  }
  signal(SIGPIPE, SIG_IGN); // a dead peer must not kill rank 0's report
  std::atexit(reapPeersAtExit);
  if (gpusOrSkip(gRanks) < gRanks) {
    finishPeers(); // the others see their closed pipes and skip too
    return kExitSkip;
  }
  tleUniqueId id;
  TK(tleGetUniqueId(&id));
  for (int fd : gToPeers)
    if (write(fd, &id, sizeof(id)) != ssize_t(sizeof(id))) {
      std::perror("write unique id");
      finishPeers(); // the harness's _Exit runs no atexit hook
      return 1;
    }
  tleComm_t comm;
  TK(tleCommInitRank(&comm, gRanks, &id, 0, 0, &cfg));
  int rc = rank0(comm, gToPeers[0], ups[0]);
  int status = finishPeers();
  for (int fd : ups)
    close(fd);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return rc;
  if (WIFEXITED(status))
    std::printf("a peer's process failed: exit status %d\n",
                WEXITSTATUS(status));
  else
    std::printf("a peer's process failed: wait status 0x%x\n", status);
  return 1;
}

int timeoutRank0(tleComm_t comm, int, int) {
  void *dc;
  TK(tleCommGetDevComm(comm, &dc));
  CK(cudaSetDevice(0));
  uint64_t t0 = hostNowNs();
  std::printf("LAUNCH-NS=%llu\n", (unsigned long long)t0);
  barrierOnce<<<1, 128>>>(dc, kFaultSlot);
  CK_LAUNCH();
  cudaError_t err = cudaDeviceSynchronize();
  return report(comm, err, t0);
}

/// The other ranks never call the barrier and stay alive (their memory
/// stays mapped) until rank 0 is done and closes the pipe.
int timeoutRank1(tleComm_t, int, int fromPeer) {
  char c;
  while (read(fromPeer, &c, 1) > 0) {
  }
  return 0;
}

int caseTimeoutMulti() {
  return runRanks(cudaConfig(kSlots, kTimeoutMs), timeoutRank0, timeoutRank1,
                  timeoutRank1);
}

/// Canaries are allocated right after the inboxes, so that they likely sit
/// at higher addresses than rank 1's inbox.
constexpr size_t kCanaryBytes = 1 << 20;
/// Messages between the two processes of `oob`.
constexpr char kMsgCanaryReady = 'R', kMsgLaunchFailed = 'F';
/// Generous next to context creation and a 1 MiB fill; the harness kills
/// the case after 30 s anyway.
constexpr int kPeerWaitMs = 20000;

int oobRank0(tleComm_t comm, int toPeer, int fromPeer) {
  tleMem_t canary;
  TK(tleMemAlloc(comm, kCanaryBytes, &canary));
  // Rank 1 must have filled its canary before the launch, or its fill
  // would hide a stray store.
  int msg = awaitPeer(fromPeer, kPeerWaitMs);
  if (msg != kMsgCanaryReady) {
    std::printf("rank 1 never reported its canary filled (%d)\n", msg);
    return 1;
  }
  // Aim with the addresses as mapped in this process, where the arrive
  // would store: rank 1's inbox and canary as rank 0 sees them.
  void *dc, *mem;
  TK(tleCommGetDevComm(comm, &dc));
  TK(tleMemGetHandle(canary, &mem));
  tle::DevComm host;
  tle::SymMem sym;
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(&host, dc, sizeof(host), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&sym, mem, sizeof(sym), cudaMemcpyDeviceToHost));
  // Rank 0's arrive on slot s stores into rank 1's inbox at word
  // s * inboxStride + 0. Pick the smallest s >= nBarriers whose store would
  // land inside rank 1's canary, if the canary lies above the inbox.
  const uintptr_t inbox1 = reinterpret_cast<uintptr_t>(tle::inboxOf(host, 1));
  const uintptr_t can1 = reinterpret_cast<uintptr_t>(sym.ptrs[1]);
  const uint64_t strideBytes = uint64_t(host.inboxStride) * 4;
  uint32_t index = host.nBarriers;
  bool aimed = false;
  if (strideBytes && can1 > inbox1) {
    uint64_t s = (can1 - inbox1 + strideBytes - 1) / strideBytes;
    if (s >= host.nBarriers && s < 0x7fffffff &&
        inbox1 + s * strideBytes < can1 + kCanaryBytes) {
      index = uint32_t(s);
      aimed = true;
    }
  }
  std::printf("nBarriers=%u inboxStride=%u words; index %u %s\n",
              host.nBarriers, host.inboxStride, index,
              aimed ? "aims an unchecked arrive into rank 1's canary"
                    : "(canary not reachable: checking the record and the "
                      "inbox only)");
  uint64_t t0 = hostNowNs();
  std::printf("LAUNCH-NS=%llu\n", (unsigned long long)t0);
  barrierOnce<<<1, 128>>>(dc, index);
  CK_LAUNCH();
  cudaError_t err = cudaDeviceSynchronize();
  int rc = report(comm, err, t0);
  // No CUDA call after this: the trap poisoned this whole process.
  tellPeer(toPeer, kMsgLaunchFailed);
  return rc;
}

/// Judges the memory in a process whose CUDA state no trap has touched: a
/// trap makes later CUDA calls of the faulting process fail on every
/// device, not only on the one that trapped.
int oobRank1(tleComm_t comm, int toPeer, int fromPeer) {
  tleMem_t canary;
  TK(tleMemAlloc(comm, kCanaryBytes, &canary));
  void *canaryPtr, *dc;
  TK(tleMemGetLocalPtr(canary, &canaryPtr));
  TK(tleCommGetDevComm(comm, &dc));
  CK(cudaSetDevice(1));
  CK(cudaMemset(canaryPtr, 0xA5, kCanaryBytes));
  CK(cudaDeviceSynchronize());
  tellPeer(toPeer, kMsgCanaryReady);
  int msg = awaitPeer(fromPeer, kPeerWaitMs);
  if (msg == -2) {
    std::printf("rank 0 never reported its launch\n");
    return 1;
  }
  if (msg != kMsgLaunchFailed)
    std::printf("rank 0 exited without reporting its launch; checking the "
                "memory anyway\n");
  tle::DevComm host;
  CK(cudaMemcpy(&host, dc, sizeof(host), cudaMemcpyDeviceToHost));
  std::vector<unsigned char> bytes(kCanaryBytes);
  CK(cudaMemcpy(bytes.data(), canaryPtr, kCanaryBytes, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (unsigned char b : bytes)
    bad += b != 0xA5;
  std::vector<uint32_t> inbox(size_t(host.nBarriers) * host.inboxStride);
  CK(cudaMemcpy(inbox.data(), tle::inboxOf(host, 1), inbox.size() * 4,
                cudaMemcpyDeviceToHost));
  size_t dirty = 0;
  for (uint32_t w : inbox)
    dirty += w != 0;
  std::printf("CANARY %s (%zu of %zu bytes changed); rank 1 inbox %s "
              "(%zu nonzero words)\n",
              bad ? "CORRUPTED" : "intact", bad, kCanaryBytes,
              dirty ? "CHANGED" : "untouched", dirty);
  return bad || dirty ? 1 : 0;
}

/// Ranks 2 and up: the canary's allocation is collective, so they take
/// part in it, then wait for rank 0 to finish.
int oobOther(tleComm_t comm, int, int fromPeer) {
  tleMem_t canary;
  TK(tleMemAlloc(comm, kCanaryBytes, &canary));
  char c;
  while (read(fromPeer, &c, 1) > 0) {
  }
  return 0;
}

int caseOutOfRange() {
  return runRanks(cudaConfig(kSlots, kTimeoutMs), oobRank0, oobRank1, oobOther);
}

/// What the harness expects of one case.
struct Case {
  const char *name;
  int (*run)();
  std::vector<std::string> mustContain;
  bool timed; ///< exit within 2x the timeout of the launch
};

struct Outcome {
  int status = -1;
  std::string output;
  double sinceLaunchMs = -1;
  double totalMs = 0;
};

Outcome runChild(const Case &c) {
  int out[2];
  if (pipe(out) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  uint64_t start = hostNowNs();
  pid_t pid = fork();
  if (pid == 0) {
    close(out[0]);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[1]);
    setenv("TLE_BARRIER_TIMEOUT_MS", "1000", 1);
    setvbuf(stdout, nullptr, _IOLBF, 0);
    int rc = c.run();
    std::fflush(stdout);
    std::fflush(stderr);
    // _Exit: after a trap the CUDA context is dead and nothing is left to
    // clean up; static destructors would only fail on it.
    std::_Exit(rc);
  }
  close(out[1]);
  Outcome o;
  uint64_t exitNs = 0;
  const uint64_t deadline = start + 30000000000ull; // context creation + 4x
  bool open = true, exited = false;
  while (!exited || open) {
    if (open) {
      pollfd p{out[0], POLLIN, 0};
      if (poll(&p, 1, 2) > 0) {
        char buf[4096];
        ssize_t k = read(out[0], buf, sizeof(buf));
        if (k > 0)
          o.output.append(buf, size_t(k));
        else
          open = false;
      }
    } else {
      usleep(1000);
    }
    if (!exited && waitpid(pid, &o.status, WNOHANG) == pid) {
      exited = true;
      exitNs = hostNowNs();
    }
    if (!exited && hostNowNs() > deadline) {
      std::printf("  child hung: killing it\n");
      kill(pid, SIGKILL);
      waitpid(pid, &o.status, 0);
      exited = true;
      exitNs = hostNowNs();
    }
    if (exited && open && hostNowNs() > exitNs + 2000000000ull)
      open = false; // a grandchild kept the pipe; stop reading
  }
  close(out[0]);
  o.totalMs = (exitNs - start) / 1e6;
  size_t at = o.output.find("LAUNCH-NS=");
  if (at != std::string::npos) {
    unsigned long long launch =
        std::strtoull(o.output.c_str() + at + 10, nullptr, 10);
    o.sinceLaunchMs = (double(exitNs) - double(launch)) / 1e6;
  }
  return o;
}

} // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // Counted in a child: this process forks the cases, which use CUDA.
  gRanks = ranksFromChild();
  if (!gRanks)
    return kExitSkip; // a skip, not a pass (it said why)
  std::printf("fault cases on %d ranks\n", gRanks);
  // Rank 0 waits for every other rank.
  char missing[64];
  std::snprintf(missing, sizeof(missing), "rank=0 slot=3 epoch=1 missing=0x%x",
                ((1u << gRanks) - 1) & ~1u);
  std::vector<Case> cases = {
      {"timeout", caseTimeoutSingle, {"FAULT-RECORD code=4(", missing}, true},
      {"timeout-mp", caseTimeoutMulti, {"FAULT-RECORD code=4(", missing}, true},
      {"oob", caseOutOfRange, {"FAULT-RECORD code=6(", "CANARY intact"}, false},
  };
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i)
    only.push_back(argv[i]);
  int failed = 0, skipped = 0, ran = 0;
  for (const Case &c : cases) {
    if (!only.empty() &&
        std::find(only.begin(), only.end(), c.name) == only.end())
      continue;
    ++ran;
    std::printf("=== fault case %s\n", c.name);
    Outcome o = runChild(c);
    std::string indented;
    for (char ch : o.output) {
      if (indented.empty() || indented.back() == '\n')
        indented += "  | ";
      indented += ch;
    }
    std::printf("%s", indented.c_str());
    if (!indented.empty() && indented.back() != '\n')
      std::printf("\n");
    if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == kExitSkip) {
      std::printf("  SKIPPED\n");
      ++skipped;
      continue;
    }
    std::vector<std::string> problems;
    if (!WIFEXITED(o.status))
      problems.push_back("killed by signal " +
                         std::to_string(WTERMSIG(o.status)));
    else if (WEXITSTATUS(o.status) != kExitReported)
      problems.push_back("exit status " +
                         std::to_string(WEXITSTATUS(o.status)) + " (expected " +
                         std::to_string(kExitReported) + ": fault reported)");
    for (const std::string &s : c.mustContain)
      if (o.output.find(s) == std::string::npos)
        problems.push_back("output lacks \"" + s + "\"");
    if (c.timed && (o.sinceLaunchMs < 0 || o.sinceLaunchMs > 2 * kTimeoutMs))
      problems.push_back("exited " + std::to_string(int(o.sinceLaunchMs)) +
                         " ms after the launch (limit " +
                         std::to_string(2 * kTimeoutMs) + ")");
    std::printf("  %s: exit after %.0f ms from launch, %.0f ms in all\n",
                problems.empty() ? "PASS" : "FAIL", o.sinceLaunchMs, o.totalMs);
    for (const std::string &p : problems)
      std::printf("    - %s\n", p.c_str());
    failed += !problems.empty();
  }
  if (skipped == ran && ran > 0) {
    std::printf("SKIPPED: no CUDA device pair\n");
    return kExitSkip;
  }
  // Some cases found the GPUs and others did not: nothing to trust.
  std::printf("%s: %d fault cases, %d failed, %d skipped\n",
              failed || skipped ? "FAIL" : "PASS", ran, failed, skipped);
  return failed || skipped ? 1 : 0;
}
