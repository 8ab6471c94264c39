//===- GpuSupport.h - Helpers shared by the GPU tests and benchmarks -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Error checks that abort a test or benchmark process with the failing call
// and its message (tests may exit; the library never does), the "SKIPPED"
// convention for machines without two GPUs, how many ranks a program runs
// (every GPU of the machine, up to what one communicator serves), the ABI
// encodings spelled as named constants, and small timing and process
// helpers. Both integration_test/ and bench/ include this header; it is not
// part of the library.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_INTEGRATION_TEST_GPUSUPPORT_H
#define TLE_INTEGRATION_TEST_GPUSUPPORT_H

#include "tle/device.h"
#include "tle/tle.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

/// Aborts the process when a CUDA call fails.
#define CK(call)                                                               \
  do {                                                                         \
    cudaError_t ckErr_ = (call);                                               \
    if (ckErr_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__,  \
                   #call, cudaGetErrorString(ckErr_),                          \
                   cudaGetErrorName(ckErr_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// Checks a launch: the configuration error (if any) is reported by
/// cudaGetLastError right after the launch, not by the launch statement.
#define CK_LAUNCH() CK(cudaGetLastError())

/// Aborts the process when a TLE host call fails, with the library's detail.
#define TK(call)                                                               \
  do {                                                                         \
    tleResult_t tkRes_ = (call);                                               \
    if (tkRes_ != tleSuccess) {                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__,   \
                   #call, tleGetErrorString(tkRes_), tleGetLastErrorDetail()); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace tle::gpu {

/// ABI encodings (tle/abi.def), under the short names the tests use.
using ::tle::kCoopBlock;
using ::tle::kCoopGrid;
using ::tle::kCoopThread;
using ::tle::kCoopWarp;
constexpr ::tle::MemoryOrder kRelaxed = ::tle::kOrderRelaxed;
constexpr ::tle::MemoryOrder kAcquire = ::tle::kOrderAcquire;
constexpr ::tle::MemoryOrder kRelease = ::tle::kOrderRelease;
constexpr ::tle::MemoryOrder kAcqRel = ::tle::kOrderAcqRel;
constexpr ::tle::MemoryOrder kSeqCst = ::tle::kOrderSeqCst;

/// Exit status of a test process that found no usable GPUs (after printing
/// "SKIPPED: ..."): ctest reports the test as skipped (SKIP_RETURN_CODE in
/// integration_test/CMakeLists.txt), never as passed.
constexpr int kExitSkip = 77;

/// Number of CUDA devices, or 0 (after printing why) when CUDA reports an
/// error or fewer than `needed` devices exist. Call only in a process that
/// will not fork afterwards: it initialises the driver.
inline int gpusOrSkip(int needed = 2) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    std::printf("SKIPPED: no CUDA device (cudaGetDeviceCount: %s)\n",
                cudaGetErrorString(err));
    return 0;
  }
  if (n < needed) {
    std::printf("SKIPPED: no CUDA device pair (%d visible, %d needed)\n", n,
                needed);
    return 0;
  }
  return n;
}

/// The ranks a program runs on `visible` GPUs: one per GPU, at most what one
/// communicator serves (tle::kMaxRanks); TLE_GPU_RANKS lowers it (to run
/// the 2-GPU configuration on a bigger machine).
inline int ranksFor(int visible) {
  int n = std::min(visible, ::tle::kMaxRanks);
  if (const char *env = std::getenv("TLE_GPU_RANKS")) {
    char *end = nullptr;
    long want = std::strtol(env, &end, 10);
    if (!*env || *end || want < 2 || want > ::tle::kMaxRanks) {
      std::fprintf(stderr, "TLE_GPU_RANKS='%s' is not a rank count in 2..%d\n",
                   env, ::tle::kMaxRanks);
      std::exit(2);
    }
    n = std::min(n, int(want));
  }
  return n;
}

/// The number of ranks (ranksFor the visible GPUs), found by a child
/// process, so that the caller may still fork rank processes: a child
/// cannot use a CUDA driver its parent initialised. 0 (after printing
/// "SKIPPED: ...") when fewer than two GPUs are usable.
inline int ranksFromChild() {
  int fds[2];
  if (pipe(fds) != 0)
    return 0;
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
      n = 0;
    ssize_t ignored = write(fds[1], &n, sizeof(n));
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  int n = 0;
  if (pid < 0 || read(fds[0], &n, sizeof(n)) != ssize_t(sizeof(n)))
    n = 0;
  close(fds[0]);
  if (pid > 0)
    waitpid(pid, nullptr, 0);
  n = ranksFor(n);
  if (n < 2)
    std::printf("SKIPPED: fewer than two usable CUDA devices (%d)\n", n);
  return n < 2 ? 0 : n;
}

/// Monotonic host clock in ns (CLOCK_MONOTONIC is system-wide, so a parent
/// can subtract timestamps printed by its children).
/// One figure of the benchmarks, as the line bench/run.sh collects into
/// bench.csv: RESULT,<section>,<impl>,<x>,<us>,<note>. The note is the last
/// field, so its commas become semicolons.
inline void printResult(const char *section, const std::string &impl,
                        const std::string &x, double us,
                        const std::string &note = "") {
  std::string n = note;
  std::replace(n.begin(), n.end(), ',', ';');
  std::printf("RESULT,%s,%s,%s,%.4f,%s\n", section, impl.c_str(), x.c_str(),
              us, n.c_str());
  std::fflush(stdout);
}

/// A figure measured `v.size()` times: the median as the figure, and the
/// count, min and max ahead of the note ("n=7;min=1.2;max=1.4;..."), which
/// bench/report.py reads back for the spread and the plots' error bars.
inline void printStats(const char *section, const std::string &impl,
                       const std::string &x, std::vector<double> v,
                       const std::string &note = "") {
  std::sort(v.begin(), v.end());
  char spread[96];
  std::snprintf(spread, sizeof(spread), "n=%zu;min=%.4f;max=%.4f", v.size(),
                v.front(), v.back());
  printResult(section, impl, x, v[v.size() / 2],
              note.empty() ? spread : std::string(spread) + ";" + note);
}

/// Runs rankMain(r, idPipe) in one forked process per rank r < n (an id
/// pipe made first, for shareIdOverPipe), waits for them all and counts
/// the ranks that skipped (exit kExitSkip) and those that failed (any other
/// non-zero exit or a signal, each reported). No CUDA call may come before
/// it in this process: a forked child cannot use a driver its parent
/// initialised. False if the pipe or a fork failed.
inline bool forkRanks(int n, const std::function<int(int, int *)> &rankMain,
                      int &skipped, int &failed) {
  skipped = failed = 0;
  int idPipe[2];
  if (pipe(idPipe) != 0) {
    std::perror("pipe");
    return false;
  }
  std::fflush(stdout);
  std::vector<pid_t> pids(n);
  for (int r = 0; r < n; ++r) {
    pids[r] = fork();
    if (pids[r] < 0) {
      std::perror("fork");
      return false;
    }
    if (pids[r] == 0) {
      int rc = rankMain(r, idPipe);
      std::fflush(stdout);
      std::_Exit(rc);
    }
  }
  close(idPipe[0]);
  close(idPipe[1]);
  for (int r = 0; r < n; ++r) {
    int status;
    waitpid(pids[r], &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitSkip)
      ++skipped;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("rank %d process: %s %d\n", r,
                  WIFEXITED(status) ? "exit status" : "killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      ++failed;
    }
  }
  return true;
}

/// Hands a unique id (TLE's, NCCL's, NVSHMEM's: any trivially copyable
/// type) from rank 0 to the other nRanks-1 rank processes of a fork()ed run
/// through `fds` (a pipe made before the fork): rank 0 writes one copy per
/// reader, each in one write, which the pipe keeps whole (an id is at most
/// PIPE_BUF bytes), so the pipe always holds whole ids and each reader's
/// read of one id gets a whole one. Each process closes the ends it does
/// not use. False on a short write or read (EOF: rank 0 gave up before
/// sending).
template <typename Id>
bool shareIdOverPipe(int rank, int fds[2], Id &id, int nRanks = 2) {
  static_assert(sizeof(Id) <= 4096, "an id must fit one atomic pipe write");
  if (rank == 0) {
    close(fds[0]);
    bool ok = true;
    for (int r = 1; r < nRanks && ok; ++r)
      ok = write(fds[1], &id, sizeof(id)) == ssize_t(sizeof(id));
    close(fds[1]);
    return ok;
  }
  close(fds[1]);
  size_t got = 0;
  while (got < sizeof(id)) {
    ssize_t k =
        read(fds[0], reinterpret_cast<char *>(&id) + got, sizeof(id) - got);
    if (k <= 0)
      break;
    got += size_t(k);
  }
  close(fds[0]);
  return got == sizeof(id);
}

inline uint64_t hostNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

/// Parses "1,8,132" into integers.
inline std::vector<int> parseIntList(const char *s) {
  std::vector<int> out;
  while (s && *s) {
    out.push_back(std::atoi(s));
    const char *comma = std::strchr(s, ',');
    s = comma ? comma + 1 : nullptr;
  }
  return out;
}

/// Parses "a,b,c" into strings.
inline std::vector<std::string> parseList(const char *s) {
  std::vector<std::string> out;
  std::string cur;
  for (; s && *s; ++s) {
    if (*s == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *s;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

/// A reusable barrier for the host threads of one process (std::barrier
/// is C++20; the CUDA sources build as C++17, see CMakeLists.txt).
class HostBarrier {
public:
  explicit HostBarrier(int n) : n_(n) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(m_);
    unsigned phase = phase_;
    if (++count_ == n_) {
      count_ = 0;
      ++phase_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return phase_ != phase; });
    }
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  unsigned phase_ = 0;
};

/// Seconds between two events recorded around `body` on `s`.
template <typename Body> double timed(cudaStream_t s, Body body) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a, s));
  body();
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms / 1e3;
}

/// Instantiates the captured graph `g`, launches it once to warm up, meets
/// the other ranks' threads at `meet`, and returns the seconds `replays`
/// back-to-back launches take on `s`. Destroys the graph.
inline double timeGraphReplays(cudaStream_t s, cudaGraph_t g, int replays,
                               HostBarrier &meet) {
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  meet.arriveAndWait();
  double t = timed(s, [&] {
    for (int i = 0; i < replays; ++i)
      CK(cudaGraphLaunch(ge, s));
  });
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return t;
}

/// A communicator configuration for the CUDA backend.
inline tleConfig_t cudaConfig(uint32_t nBarriers, int64_t timeoutMs = -1) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.backend = tleBackendCuda;
  cfg.nBarriers = nBarriers;
  cfg.timeoutMs = timeoutMs;
  return cfg;
}

} // namespace tle::gpu

#ifdef __CUDACC__
namespace tle::gpu {
/// The GPU's global nanosecond timer (same clock on every SM of a GPU).
__device__ __forceinline__ uint64_t globalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/// Busy-waits `ns` nanoseconds: "independent work" that occupies the SM
/// without touching memory.
__device__ __forceinline__ void spinNs(uint64_t ns) {
  if (ns == 0)
    return;
  uint64_t end = globalTimer() + ns;
  while (globalTimer() < end) {
  }
}
} // namespace tle::gpu
#endif

#endif // TLE_INTEGRATION_TEST_GPUSUPPORT_H
