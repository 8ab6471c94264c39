//===- BarrierFault.cu - Timeouts and bad indices on real GPUs ------------===//
//
// Faults must be reported, never hang and never corrupt memory. A faulting
// launch kills its CUDA context (a trap is sticky), so every case runs in a
// child process that this harness forks before any CUDA call, captures,
// times and judges:
//
//  - timeout:    one process, both GPUs; rank 1 never calls the barrier.
//                Rank 0's wait must give up after TLE_BARRIER_TIMEOUT_MS
//                (1000, from the environment), the launch must fail, and
//                tleCommGetError must name rank 0, slot 3, epoch 1 and
//                missing peer 1; the child prints it and exits non-zero
//                within 2x the timeout of the launch.
//  - timeout-mp: the same with one process per rank (config.timeoutMs).
//  - oob:        rank 0 calls the barrier with a slot index past nBarriers,
//                chosen so that an unchecked arrive would store into a
//                canary buffer on rank 1. The record must say
//                tleIndexOutOfRange, and the canary and rank 1's inbox must
//                be unchanged (read back through device 1, which is alive).
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/detail/DevComm.h"
#include "tle/device.h"

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
  if (!gpusOrSkip(2))
    return kExitSkip;
  // timeoutMs -1: the deadline comes from TLE_BARRIER_TIMEOUT_MS, which
  // the harness sets, so the environment path is exercised too.
  tleConfig_t cfg = cudaConfig(kSlots, -1);
  tleComm_t comms[2];
  int devs[2] = {0, 1};
  TK(tleCommInitAll(comms, 2, devs, &cfg));
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

int caseTimeoutMulti() {
  int idPipe[2], lifePipe[2];
  if (pipe(idPipe) != 0 || pipe(lifePipe) != 0) {
    std::perror("pipe");
    return 1;
  }
  std::fflush(stdout);
  pid_t pid = fork(); // before any CUDA call in this process
  if (pid < 0) {
    std::perror("fork");
    return 1;
  }
  if (pid == 0) {
    // Rank 1: joins, never calls the barrier, and stays alive (its memory
    // stays mapped) until rank 0 exits and closes the life pipe.
    close(idPipe[1]);
    close(lifePipe[1]);
    tleUniqueId id;
    if (read(idPipe[0], &id, sizeof(id)) != ssize_t(sizeof(id)))
      std::_Exit(kExitSkip);
    tleConfig_t cfg = cudaConfig(kSlots, kTimeoutMs);
    tleComm_t comm;
    TK(tleCommInitRank(&comm, 2, &id, 1, 1, &cfg));
    char c;
    while (read(lifePipe[0], &c, 1) > 0) {
    }
    std::_Exit(0);
  }
  close(idPipe[0]);
  close(lifePipe[0]);
  if (!gpusOrSkip(2))
    return kExitSkip; // closing idPipe makes rank 1 exit too
  tleUniqueId id;
  TK(tleGetUniqueId(&id));
  if (write(idPipe[1], &id, sizeof(id)) != ssize_t(sizeof(id))) {
    std::perror("write unique id");
    return 1;
  }
  tleConfig_t cfg = cudaConfig(kSlots, kTimeoutMs);
  tleComm_t comm;
  TK(tleCommInitRank(&comm, 2, &id, 0, 0, &cfg));
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

int caseOutOfRange() {
  if (!gpusOrSkip(2))
    return kExitSkip;
  tleConfig_t cfg = cudaConfig(kSlots, kTimeoutMs);
  tleComm_t comms[2];
  int devs[2] = {0, 1};
  TK(tleCommInitAll(comms, 2, devs, &cfg));
  // Canaries allocated right after the inboxes, so that they likely sit at
  // higher addresses on device 1 than rank 1's inbox.
  constexpr size_t kCanaryBytes = 1 << 20;
  tleMem_t canary[2];
  TK(tleMemAllocAll(comms, 2, kCanaryBytes, canary));
  void *canaryPtr[2];
  for (int r = 0; r < 2; ++r) {
    TK(tleMemGetLocalPtr(canary[r], &canaryPtr[r]));
    CK(cudaSetDevice(r));
    CK(cudaMemset(canaryPtr[r], 0xA5, kCanaryBytes));
    CK(cudaDeviceSynchronize());
  }
  void *dc0;
  TK(tleCommGetDevComm(comms[0], &dc0));
  tle::DevComm host;
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(&host, dc0, sizeof(host), cudaMemcpyDeviceToHost));
  // Rank 0's arrive on slot s stores into rank 1's inbox at word
  // s * inboxStride + 0. Pick the smallest s >= nBarriers whose store would
  // land inside rank 1's canary, if the canary lies above the inbox.
  const uintptr_t inbox1 = reinterpret_cast<uintptr_t>(host.inbox[1]);
  const uintptr_t can1 = reinterpret_cast<uintptr_t>(canaryPtr[1]);
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
  barrierOnce<<<1, 128>>>(dc0, index);
  CK_LAUNCH();
  cudaError_t err = cudaDeviceSynchronize();
  int rc = report(comms[0], err, t0);

  // Judge the memory from device 1, whose context is untouched.
  CK(cudaSetDevice(1));
  std::vector<unsigned char> bytes(kCanaryBytes);
  CK(cudaMemcpy(bytes.data(), canaryPtr[1], kCanaryBytes,
                cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (unsigned char b : bytes)
    bad += b != 0xA5;
  std::vector<uint32_t> inbox(size_t(host.nBarriers) * host.inboxStride);
  CK(cudaMemcpy(inbox.data(), host.inbox[1], inbox.size() * 4,
                cudaMemcpyDeviceToHost));
  size_t dirty = 0;
  for (uint32_t w : inbox)
    dirty += w != 0;
  std::printf("CANARY %s (%zu of %zu bytes changed); rank 1 inbox %s "
              "(%zu nonzero words)\n",
              bad ? "CORRUPTED" : "intact", bad, kCanaryBytes,
              dirty ? "CHANGED" : "untouched", dirty);
  if (bad || dirty)
    return 1;
  return rc;
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
  std::vector<Case> cases = {
      {"timeout",
       caseTimeoutSingle,
       {"FAULT-RECORD code=4(", "rank=0 slot=3 epoch=1 missing=0x2"},
       true},
      {"timeout-mp",
       caseTimeoutMulti,
       {"FAULT-RECORD code=4(", "rank=0 slot=3 epoch=1 missing=0x2"},
       true},
      {"oob", caseOutOfRange, {"FAULT-RECORD code=6(", "CANARY intact"}, false},
  };
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i)
    only.push_back(argv[i]);
  setvbuf(stdout, nullptr, _IOLBF, 0);
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
    return 0;
  }
  std::printf("%s: %d fault cases, %d failed, %d skipped\n",
              failed ? "FAIL" : "PASS", ran, failed, skipped);
  return failed ? 1 : 0;
}
