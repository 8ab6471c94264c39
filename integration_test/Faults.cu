//===- Faults.cu - Faults a program survives, on real GPUs ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Issue 14's recovery scenarios on CUDA ranks (GPUs 0 and 1), each case in
// processes forked before any CUDA call, with its timings printed:
//
//  - return:   one process per rank, onError = return. Rank 1 skips a
//              barrier; rank 0's launch must end without a trap (the CUDA
//              context stays usable), every thread of its block must get
//              tleTimeout from tleTritonBarrier, tleCommGetError must name
//              rank 1 as missing; rank 0 then destroys the communicator,
//              creates a new one in the same process and runs a correct
//              barrier stress round (data checked) with rank 1.
//  - kill:     one process per rank, a 10-second barrier loop; rank 1's
//              process is killed with SIGKILL after 2 s. Rank 0's watchdog
//              must end its launch with tlePeerFailure naming rank 1 within
//              1 s of the kill; nothing may be left in /dev/shm, no process
//              behind. Prints WATCHDOG-LATENCY-MS.
//  - abort:    one process, both GPUs; rank 0 blocks in a barrier that rank
//              1 never calls, or in a signal wait on a word rank 1 never
//              signals, and a second host thread calls tleCommAbort.
//              The launch must end (no trap) with tleAborted recorded;
//              prints ABORT-LATENCY-US (the host's store to the kernel's
//              end as cudaStreamQuery sees it), over several repetitions,
//              for both waits in both onError modes.
//
// Usage: tle-gpu-faults [--cases return,kill,abort]
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/detail/DevComm.h"
#include "tle/device.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace tle::gpu;

namespace {

constexpr uint32_t kSlots = 8;
constexpr int kThreads = 128;

/// Every thread's status of one Triton barrier, then one void barrier
/// that must give up at once on the failed communicator.
__global__ void statusBarrier(const void *comm, int *status) {
  status[threadIdx.x] =
      tleTritonBarrier(reinterpret_cast<int64_t>(comm), ::tle::kBarrierSync,
                       kCoopBlock, 3, kAcqRel);
  flagcxIntraBarrierSyncS(comm, kCoopBlock, 4, false, kAcqRel);
  if (threadIdx.x == 0)
    status[kThreads] = tleCommFailed(comm);
}

/// Rounds of a barrier with data: each writes round k into the peer's
/// copy, syncs, and checks its own copy. `bad` counts wrong reads.
__global__ void stressRounds(const void *comm, const void *mem, uint32_t rounds,
                             unsigned *bad) {
  int me = flagcxDevCommGetIntraRank(comm);
  for (uint32_t k = 0; k < rounds; ++k) {
    auto *peer = static_cast<uint32_t *>(
        flagcxGetIntraPointerS(mem, threadIdx.x * sizeof(uint32_t), 1 - me));
    __stcg(peer, k + 1);
    flagcxIntraBarrierSyncS(comm, kCoopBlock, 0, false, kAcqRel);
    auto *mine = static_cast<uint32_t *>(
        flagcxGetLocalPointerS(mem, threadIdx.x * sizeof(uint32_t)));
    if (__ldcg(mine) != k + 1)
      atomicAdd(bad, 1u);
    flagcxIntraBarrierSyncS(comm, kCoopBlock, 1, false, kAcqRel);
  }
}

/// Barriers until one gives up or `seconds` pass; `out[0]` the status of
/// the last barrier, out[1] the rounds done.
__global__ void loopFor(const void *comm, uint64_t seconds, int *out) {
  uint64_t end = globalTimer() + seconds * 1000000000ull;
  int status = 0;
  uint32_t rounds = 0;
  while (status == 0 && globalTimer() < end) {
    status = tleTritonBarrier(reinterpret_cast<int64_t>(comm),
                              ::tle::kBarrierSync, kCoopBlock, 0, kAcqRel);
    ++rounds;
  }
  if (threadIdx.x == 0) {
    out[0] = status;
    out[1] = static_cast<int>(rounds);
  }
}

/// Waits on slot 1, which the other rank never calls.
__global__ void blockedBarrier(const void *comm, int *status) {
  int s = tleTritonBarrier(reinterpret_cast<int64_t>(comm), ::tle::kBarrierSync,
                           kCoopBlock, 1, kAcqRel);
  if (threadIdx.x == 0)
    *status = s;
}

/// Waits on signal word 5, which no rank signals.
__global__ void blockedSignalWait(const void *comm, int *status) {
  int s = tleTritonSignalWait(reinterpret_cast<int64_t>(comm), 5, 1, kCoopBlock,
                              kAcquire);
  if (threadIdx.x == 0)
    *status = s;
}

/// What the forked ranks of one case share: MAP_SHARED, made before fork.
struct Shared {
  std::atomic<uint64_t> endNs[2];
  std::atomic<int> ready[2];
};

Shared *sharedPage() {
  void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  return new (p) Shared{};
}

tleConfig_t configFor(int64_t timeoutMs, tleOnError_t onError) {
  tleConfig_t cfg = cudaConfig(kSlots, timeoutMs);
  cfg.onError = onError;
  cfg.bootstrapTimeoutMs = 30000;
  return cfg;
}

/// Runs `body(rank)` in two forked processes; returns 0 when both exit 0.
template <typename Body> int twoProcesses(Body body, pid_t *pids = nullptr) {
  std::fflush(stdout);
  pid_t child[2];
  for (int r = 0; r < 2; ++r) {
    child[r] = fork();
    if (child[r] == 0) {
      int rc = body(r);
      std::fflush(stdout);
      _exit(rc);
    }
    if (pids)
      pids[r] = child[r];
  }
  int failures = 0;
  for (int r = 0; r < 2; ++r) {
    int status = 0;
    waitpid(child[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("rank %d's process: wait status 0x%x\n", r, status);
      ++failures;
    }
  }
  return failures;
}

/// The stress round of a fresh communicator of `id`: 0 when every read was
/// right.
int stressRound(const tleUniqueId &id, int rank, uint32_t rounds) {
  tleConfig_t cfg = configFor(5000, TLE_ON_ERROR_TRAP);
  tleComm_t comm;
  TK(tleCommInitRank(&comm, 2, &id, rank, rank, &cfg));
  tleMem_t mem;
  TK(tleMemAlloc(comm, kThreads * sizeof(uint32_t), &mem));
  void *dc, *handle;
  TK(tleCommGetDevComm(comm, &dc));
  TK(tleMemGetHandle(mem, &handle));
  unsigned *bad;
  CK(cudaMalloc(&bad, sizeof(unsigned)));
  CK(cudaMemset(bad, 0, sizeof(unsigned)));
  uint64_t t0 = hostNowNs();
  stressRounds<<<1, kThreads>>>(dc, handle, rounds, bad);
  CK_LAUNCH();
  CK(cudaDeviceSynchronize());
  unsigned wrong = 0;
  CK(cudaMemcpy(&wrong, bad, sizeof(wrong), cudaMemcpyDeviceToHost));
  std::printf("rank %d: recovery stress, %u rounds in %.1f ms, %u wrong "
              "reads\n",
              rank, rounds, (hostNowNs() - t0) / 1e6, wrong);
  CK(cudaFree(bad));
  TK(tleMemFree(mem));
  TK(tleCommDestroy(comm));
  return wrong ? 1 : 0;
}

int caseReturn() {
  tleUniqueId first, second;
  TK(tleGetUniqueId(&first));
  TK(tleGetUniqueId(&second));
  return twoProcesses([&](int rank) {
    CK(cudaSetDevice(rank));
    tleConfig_t cfg = configFor(500, TLE_ON_ERROR_RETURN);
    tleComm_t comm;
    TK(tleCommInitRank(&comm, 2, &first, rank, rank, &cfg));
    if (rank == 1) {
      // Skips the barrier: an orderly destroy (a goodbye, not a death).
      TK(tleCommDestroy(comm));
      return stressRound(second, rank, 100000);
    }
    void *dc;
    TK(tleCommGetDevComm(comm, &dc));
    int *status;
    CK(cudaMallocManaged(&status, (kThreads + 1) * sizeof(int)));
    uint64_t t0 = hostNowNs();
    statusBarrier<<<1, kThreads>>>(dc, status);
    CK_LAUNCH();
    cudaError_t err = cudaDeviceSynchronize();
    std::printf("rank 0: launch ended after %.1f ms: %s (onError = return: "
                "no trap)\n",
                (hostNowNs() - t0) / 1e6, cudaGetErrorString(err));
    if (err != cudaSuccess)
      return 1;
    int wrong = 0;
    for (int t = 0; t < kThreads; ++t)
      wrong += status[t] != tleTimeout;
    std::printf("rank 0: %d of %d threads got a status other than "
                "tleTimeout; tleCommFailed afterwards: %d\n",
                wrong, kThreads, status[kThreads]);
    tleErrorInfo info;
    tleCommGetError(comm, &info);
    std::printf("rank 0: record: %s\n", info.message);
    bool ok = wrong == 0 && status[kThreads] == tleTimeout &&
              info.result == tleTimeout && info.missingMask == 0b10;
    CK(cudaFree(status));
    TK(tleCommDestroy(comm));
    if (!ok) {
      std::printf("FAIL: return: the failed barrier was not reported as "
                  "specified\n");
      return 1;
    }
    return stressRound(second, rank, 100000);
  });
}

/// No name left in /dev/shm by TLE (the CPU backend's memory files have
/// none; CUDA IPC has none either): every name starting with "tle-".
int shmLeftovers() {
  int n = 0;
  if (DIR *dir = opendir("/dev/shm")) {
    while (dirent *e = readdir(dir))
      n += std::strncmp(e->d_name, "tle-", 4) == 0;
    closedir(dir);
  }
  return n;
}

int caseKill() {
  tleUniqueId id;
  TK(tleGetUniqueId(&id));
  Shared *shared = sharedPage();
  std::fflush(stdout);
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = fork();
    if (pids[rank] != 0)
      continue;
    CK(cudaSetDevice(rank));
    tleConfig_t cfg = configFor(30000, TLE_ON_ERROR_TRAP);
    tleComm_t comm;
    TK(tleCommInitRank(&comm, 2, &id, rank, rank, &cfg));
    void *dc;
    TK(tleCommGetDevComm(comm, &dc));
    int *out;
    CK(cudaMallocManaged(&out, 2 * sizeof(int)));
    shared->ready[rank] = 1;
    loopFor<<<1, kThreads>>>(dc, 10, out);
    CK_LAUNCH();
    cudaError_t err = cudaDeviceSynchronize();
    shared->endNs[rank] = hostNowNs();
    tleErrorInfo info;
    tleCommGetError(comm, &info);
    std::printf("rank %d: launch: %s; last status %d after %d rounds; "
                "record: %s\n",
                rank, cudaGetErrorString(err), out[0], out[1], info.message);
    bool ok = err == cudaSuccess && out[0] == tlePeerFailure &&
              info.result == tlePeerFailure && info.missingMask == 0b10;
    TK(tleCommDestroy(comm));
    std::fflush(stdout);
    _exit(ok ? 0 : 1);
  }
  while (!shared->ready[0] || !shared->ready[1])
    usleep(1000);
  usleep(2000000);
  uint64_t killed = hostNowNs();
  kill(pids[1], SIGKILL);
  int status0 = 0, status1 = 0;
  waitpid(pids[0], &status0, 0);
  waitpid(pids[1], &status1, 0);
  double ms = (double(shared->endNs[0]) - double(killed)) / 1e6;
  std::printf("WATCHDOG-LATENCY-MS=%.2f (SIGKILL of rank 1 to the end of "
              "rank 0's launch)\n",
              ms);
  int leftovers = shmLeftovers();
  bool ok = WIFEXITED(status0) && WEXITSTATUS(status0) == 0 &&
            WIFSIGNALED(status1) && ms < 1000 && leftovers == 0 &&
            waitpid(-1, nullptr, WNOHANG) == -1;
  if (!ok)
    std::printf("FAIL: kill: survivor status 0x%x, latency %.1f ms, %d names "
                "in /dev/shm\n",
                status0, ms, leftovers);
  return ok ? 0 : 1;
}

int caseAbort() {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid != 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  int failures = 0;
  // Barrier then signal waits, each in trap then return mode.
  for (int k = 0; k < 4; ++k) {
    bool signal = k >= 2;
    tleOnError_t mode = k % 2 ? TLE_ON_ERROR_RETURN : TLE_ON_ERROR_TRAP;
    const char *wait = signal ? "signal" : "barrier";
    std::vector<double> us;
    for (int rep = 0; rep < 10; ++rep) {
      tleConfig_t cfg = configFor(30000, mode);
      tleComm_t comms[2];
      int devs[2] = {0, 1};
      TK(tleCommInitAll(comms, 2, devs, &cfg));
      void *dc;
      TK(tleCommGetDevComm(comms[0], &dc));
      CK(cudaSetDevice(0));
      int *status;
      CK(cudaMallocManaged(&status, sizeof(int)));
      *status = -1;
      cudaStream_t stream;
      CK(cudaStreamCreate(&stream));
      if (signal)
        blockedSignalWait<<<1, kThreads, 0, stream>>>(dc, status);
      else
        blockedBarrier<<<1, kThreads, 0, stream>>>(dc, status);
      CK_LAUNCH();
      std::atomic<uint64_t> abortedAt{0};
      std::thread aborter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        abortedAt = hostNowNs();
        tleCommAbort(comms[0]);
      });
      cudaError_t err;
      while ((err = cudaStreamQuery(stream)) == cudaErrorNotReady) {
      }
      uint64_t end = hostNowNs();
      aborter.join();
      us.push_back((double(end) - double(abortedAt)) / 1e3);
      tleErrorInfo info;
      tleCommGetError(comms[0], &info);
      if (err != cudaSuccess || *status != tleAborted ||
          info.result != tleAborted) {
        std::printf("FAIL: abort (%s wait, %s): %s, status %d, record: %s\n",
                    wait, mode == TLE_ON_ERROR_TRAP ? "trap" : "return",
                    cudaGetErrorString(err), *status, info.message);
        ++failures;
      }
      CK(cudaStreamDestroy(stream));
      CK(cudaFree(status));
      TK(tleCommDestroy(comms[0]));
      TK(tleCommDestroy(comms[1]));
    }
    std::sort(us.begin(), us.end());
    std::printf("ABORT-LATENCY-US wait=%s onError=%s: min %.1f median %.1f "
                "max %.1f (tleCommAbort's store to cudaStreamQuery's "
                "success)\n",
                wait, mode == TLE_ON_ERROR_TRAP ? "trap" : "return", us.front(),
                us[us.size() / 2], us.back());
  }
  std::fflush(stdout);
  _exit(failures ? 1 : 0);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> cases = {"return", "kill", "abort"};
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--cases")
      cases = parseList(argv[i + 1]);
  if (ranksFromChild() < 2)
    return kExitSkip;
  int failures = 0;
  for (const std::string &c : cases) {
    std::printf("== case %s\n", c.c_str());
    int rc = c == "return" ? caseReturn()
             : c == "kill" ? caseKill()
             : c == "abort"
                 ? caseAbort()
                 : (std::printf("FAIL: unknown case %s\n", c.c_str()), 1);
    std::printf("== case %s: %s\n", c.c_str(), rc ? "FAIL" : "ok");
    failures += rc != 0;
  }
  return failures ? 1 : 0;
}
