//===- HangReport.cu - The job's report of a hang on a GPU ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommGetJobError on CUDA ranks that share GPU 0 (docs/gpu.md, "Ranks
// sharing one GPU"), one case per way a job hangs; each prints the merged
// report and checks its JSON for the culprit, the ranks, the slot or
// signal word and the call site of the wait (the kernels call the ...At
// entry points with the id of their source line, registered with
// tleSiteRegisterText as tlec's table would be; the kill case's record is
// the watchdog's, which names no call):
//
//  - skip:   one process, tleCommInitAll with devices {0, 0}, one stream
//            per rank, onError = return. Rank 0 waits on barrier slot 1;
//            rank 1 launches nothing (it skipped the barrier). Rank 0's
//            wait times out; the report must name rank 1 as the culprit
//            (exited), rank 0 waiting on slot 1 with rank 1 missing.
//  - signal: the same set; rank 1 waits on its signal word 5, which rank 0
//            never signals. The report must name signal 5 of rank 1 and
//            rank 0, which left the kernel, as the culprit.
//  - kill:   two processes on GPU 0 (tleCommInitRank, device 0), forked
//            before any CUDA call. Rank 0 blocks in a barrier with a 30 s
//            timeout; rank 1's process is killed. Rank 0's watchdog ends
//            the wait; its report must name rank 1 as dead and the culprit.
//
// One GPU shows the protocol's faults and reports, not memory-ordering
// bugs. Usage: tle-gpu-hang-report [--cases skip,signal,kill]
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <string>
#include <vector>

using namespace tle::gpu;

namespace {

constexpr uint32_t kSlots = 8;
constexpr int kThreads = 64;

/// The lines of the two waits below: their call sites.
constexpr int kBarrierLine = __LINE__ + 4;
constexpr int kSignalLine = __LINE__ + 11;
/// Waits on slot 1 (the other rank never calls it), passing `site`.
__global__ void waitBarrier(const void *comm, int32_t site, int *status) {
  int s = tleTritonBarrierAt(reinterpret_cast<int64_t>(comm),
                             ::tle::kBarrierSync, kCoopBlock, 1, kAcqRel, site);
  if (threadIdx.x == 0)
    *status = s;
}

/// Waits on this rank's signal word 5 (no rank signals it).
__global__ void waitSignal(const void *comm, int32_t site, int *status) {
  int s = tleTritonSignalWaitAt(reinterpret_cast<int64_t>(comm), 5, 1,
                                kCoopBlock, kAcquire, site);
  if (threadIdx.x == 0)
    *status = s;
}

/// "file:line" of a call in this file.
std::string siteText(int line) {
  return std::string(__FILE__) + ":" + std::to_string(line);
}

/// The job's report as JSON text (printed), and its status.
std::string jobReport(tleComm_t comm, tleResult_t &status) {
  size_t needed = 0;
  status = tleCommGetJobError(comm, nullptr, 0, &needed);
  std::string json(needed, '\0');
  tleCommGetJobError(nullptr, json.data(), json.size(), nullptr);
  json.resize(needed ? needed - 1 : 0);
  std::printf("JOB-REPORT-JSON %s\n", json.c_str());
  return json;
}

/// Whether the JSON holds `part`, said as a check.
bool expect(const std::string &json, const std::string &part) {
  bool ok = json.find(part) != std::string::npos;
  if (!ok)
    std::printf("FAIL: the report lacks %s\n", part.c_str());
  return ok;
}

/// `waiter` runs `kernel` on its stream; the other rank runs nothing.
int oneProcessCase(int waiter, void (*kernel)(const void *, int32_t, int *),
                   int line, std::vector<std::string> checks) {
  std::string where = siteText(line);
  auto site = static_cast<int32_t>(tleSiteRegisterText(where.c_str()));
  checks.push_back("\"site\": \"" + where + "\"");
  checks.push_back(") at " + where + " on ");
  tleConfig_t cfg = cudaConfig(kSlots, 1000);
  cfg.onError = TLE_ON_ERROR_RETURN;
  tleComm_t comms[2];
  int devices[2] = {0, 0};
  TK(tleCommInitAll(comms, 2, devices, &cfg));
  void *dc;
  TK(tleCommGetDevComm(comms[waiter], &dc));
  int *status;
  CK(cudaMallocManaged(&status, sizeof(int)));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  kernel<<<1, kThreads, 0, stream>>>(dc, site, status);
  CK_LAUNCH();
  CK(cudaStreamSynchronize(stream)); // a wait that gave up returned
  tleResult_t result;
  std::string json = jobReport(comms[1 - waiter], result); // either rank
  bool ok = *status == tleTimeout && result == tleTimeout;
  if (!ok)
    std::printf("FAIL: kernel status %d, report status %d (want %d)\n", *status,
                result, tleTimeout);
  for (const std::string &c : checks)
    ok &= expect(json, c);
  CK(cudaStreamDestroy(stream));
  CK(cudaFree(status));
  for (tleComm_t c : comms)
    TK(tleCommDestroy(c));
  return ok ? 0 : 1;
}

int caseSkip() {
  return oneProcessCase(0, waitBarrier, kBarrierLine,
                        {"\"culprit\": 1",
                         "{\"rank\": 0, \"fate\": \"waiting\", \"wait\": "
                         "\"barrier\", \"error\": \"",
                         "\"slot\": 1, \"epoch\": 1", "\"missing\": [1]",
                         "{\"rank\": 1, \"fate\": \"exited\"}",
                         "rank 1 never arrived at slot 1 epoch 1"});
}

int caseSignal() {
  return oneProcessCase(1, waitSignal, kSignalLine,
                        {"\"culprit\": 0",
                         "{\"rank\": 0, \"fate\": \"exited\"}",
                         "\"wait\": \"signal\"",
                         "\"signal\": 5, \"seen\": 0, "
                         "\"wanted\": 1",
                         "signal 5 of rank 1 never reached 1"});
}

struct Shared {
  std::atomic<int> ready[2];
};

int caseKill() {
  tleUniqueId id;
  TK(tleGetUniqueId(&id));
  auto *shared = static_cast<Shared *>(mmap(nullptr, sizeof(Shared),
                                            PROT_READ | PROT_WRITE,
                                            MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (shared) Shared{};
  std::fflush(stdout);
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = fork();
    if (pids[rank] != 0)
      continue;
    CK(cudaSetDevice(0));
    tleConfig_t cfg = cudaConfig(kSlots, 30000);
    cfg.onError = TLE_ON_ERROR_RETURN;
    cfg.bootstrapTimeoutMs = 5000;
    tleComm_t comm;
    TK(tleCommInitRank(&comm, 2, &id, rank, 0, &cfg));
    shared->ready[rank] = 1;
    if (rank == 1) {
      pause(); // until killed
      _exit(1);
    }
    void *dc;
    TK(tleCommGetDevComm(comm, &dc));
    int *status;
    CK(cudaMallocManaged(&status, sizeof(int)));
    auto site = static_cast<int32_t>(
        tleSiteRegisterText(siteText(kBarrierLine).c_str()));
    waitBarrier<<<1, kThreads>>>(dc, site, status);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    tleResult_t result;
    std::string json = jobReport(comm, result);
    bool ok = *status == tlePeerFailure && result == tlePeerFailure;
    if (!ok)
      std::printf("FAIL: kernel status %d, report status %d (want %d)\n",
                  *status, result, tlePeerFailure);
    ok &= expect(json, "\"culprit\": 1");
    ok &= expect(json, "{\"rank\": 1, \"fate\": \"dead\"}");
    ok &= expect(json, "rank 1 died");
    // The wait that gave up adds its line to the watchdog's record.
    ok &= expect(json, "\"site\": \"" + siteText(kBarrierLine) + "\"");
    ok &= expect(json, "gave up its waits (the first at " +
                           siteText(kBarrierLine) + ")");
    TK(tleCommDestroy(comm));
    std::fflush(stdout);
    _exit(ok ? 0 : 1);
  }
  while (!shared->ready[0] || !shared->ready[1])
    usleep(1000);
  usleep(1000000); // rank 0 is in its wait
  kill(pids[1], SIGKILL);
  int status0 = 0, status1 = 0;
  waitpid(pids[0], &status0, 0);
  waitpid(pids[1], &status1, 0);
  munmap(shared, sizeof(Shared));
  return WIFEXITED(status0) && WEXITSTATUS(status0) == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> cases = {"kill", "skip", "signal"};
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--cases")
      cases = parseList(argv[i + 1]);
  // The kill case forks before this process touches CUDA; the others run
  // here afterwards.
  int failures = 0;
  bool counted = false;
  for (const std::string &c : cases) {
    if (c != "kill" && !counted) {
      counted = true;
      if (gpusOrSkip(1) == 0)
        return kExitSkip;
    }
    std::printf("== case %s\n", c.c_str());
    int rc = c == "skip"     ? caseSkip()
             : c == "signal" ? caseSignal()
             : c == "kill"
                 ? (counted ? (std::printf("FAIL: kill must come "
                                           "first\n"),
                               1)
                            : caseKill())
                 : (std::printf("FAIL: unknown case %s\n", c.c_str()), 1);
    std::printf("== case %s: %s\n", c.c_str(), rc ? "FAIL" : "ok");
    failures += rc != 0;
  }
  return failures ? 1 : 0;
}
