//===- TraceTest.cu - The barrier's trace ring on real GPUs ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommTraceStart on two GPUs (one process, tleCommInitAll):
//  - records: C CTAs x R rounds of a block sync record exactly a begin and
//             an end per CTA and round on each rank, with %globaltimer
//             stamps that never go back along a CTA's events;
//  - off:     after tleCommTraceStop the same kernel records nothing;
//  - trapped: rank 1 skips the barrier, rank 0's wait times out and traps;
//             the ring lives in host-mapped memory, so the begin of the
//             wait that never ended is still there to read.
// Each case runs in a child forked before any CUDA call (a trap poisons the
// process's contexts), which prints PASS or FAIL lines; the parent checks
// the exit statuses.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include "tle/trace.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

using namespace tle::gpu;

namespace {

constexpr int kRanks = 2;

__global__ void syncRounds(const void *comm, int rounds, int skipRank,
                           int rank) {
  if (rank == skipRank)
    return;
  for (int i = 0; i < rounds; ++i)
    flagcxIntraBarrierSyncS(comm, kCoopBlock, blockIdx.x, false, kAcqRel);
}

int failures = 0;
void expect(bool ok, const std::string &what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  failures += !ok;
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}

/// The ts of every event of `tid` on `pid`, in order.
std::vector<double> times(const std::string &events, int pid, uint64_t tid) {
  std::vector<double> out;
  std::string key = "\"pid\":" + std::to_string(pid) +
                    ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  for (size_t at = events.find(key); at != std::string::npos;
       at = events.find(key, at + 1))
    out.push_back(std::stod(events.substr(at + key.size())));
  return out;
}

struct World {
  tleComm_t comm[kRanks];
  void *dcomm[kRanks];
  explicit World(int64_t timeoutMs) {
    tleConfig_t cfg = cudaConfig(64, timeoutMs);
    int devs[kRanks] = {0, 1};
    TK(tleCommInitAll(comm, kRanks, devs, &cfg));
    for (int r = 0; r < kRanks; ++r)
      TK(tleCommGetDevComm(comm[r], &dcomm[r]));
  }
  /// Launches on both ranks and waits; false if a launch failed.
  bool run(int ctas, int rounds, int skipRank) {
    for (int r = 0; r < kRanks; ++r) {
      CK(cudaSetDevice(r));
      syncRounds<<<ctas, 128>>>(dcomm[r], rounds, skipRank, r);
      CK_LAUNCH();
    }
    bool ok = true;
    for (int r = 0; r < kRanks; ++r) {
      cudaSetDevice(r);
      ok &= cudaDeviceSynchronize() == cudaSuccess;
    }
    return ok;
  }
  std::string take() {
    uint64_t origin = 0, first = 0;
    std::string events;
    TK(tle::traceTakeEvents(comm, kRanks, std::nullopt, origin, events, first));
    return events;
  }
};

void recordsAndOff() {
  World w(10000);
  for (int r = 0; r < kRanks; ++r)
    TK(tleCommTraceStart(w.comm[r], 1u << 16));
  constexpr int kCtas = 8, kRounds = 200;
  expect(w.run(kCtas, kRounds, -1), "records: the launch succeeds");
  std::string events = w.take();
  for (int r = 0; r < kRanks; ++r) {
    std::string pid = "\"pid\":" + std::to_string(r) + ",";
    size_t begins = count(events, "\"ph\":\"B\"," + pid);
    size_t ends = count(events, "\"ph\":\"E\"," + pid);
    expect(begins == size_t(kCtas) * kRounds && ends == begins,
           "records: rank " + std::to_string(r) + " has " +
               std::to_string(begins) + " begins and " + std::to_string(ends) +
               " ends (want " + std::to_string(kCtas * kRounds) + " each)");
    bool ordered = true;
    for (uint64_t cta = 0; cta < kCtas; ++cta) {
      std::vector<double> t = times(events, r, cta * 1024);
      ordered &=
          t.size() == size_t(2 * kRounds) && std::is_sorted(t.begin(), t.end());
    }
    expect(ordered, "records: rank " + std::to_string(r) +
                        ": every CTA's stamps are in order");
  }
  for (int r = 0; r < kRanks; ++r)
    TK(tleCommTraceStop(w.comm[r]));
  expect(w.run(kCtas, kRounds, -1), "off: the launch succeeds");
  for (int r = 0; r < kRanks; ++r)
    TK(tleCommTraceStart(w.comm[r], 1u << 16));
  expect(w.take().empty(), "off: nothing was recorded while off");
}

void trapped() {
  World w(1000);
  for (int r = 0; r < kRanks; ++r)
    TK(tleCommTraceStart(w.comm[r], 1u << 10));
  expect(!w.run(1, 1, /*skipRank=*/1), "trapped: the launch fails");
  std::string events = w.take();
  expect(count(events, "\"name\":\"sync\",\"cat\":\"barrier\",\"ph\":\"B\","
                       "\"pid\":0,") == 1 &&
             count(events, "\"ph\":\"E\"") == 0,
         "trapped: rank 0's wait began and never ended: " + events);
}

int inChild(void (*fn)()) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    fn();
    std::fflush(stdout);
    _exit(failures ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // No CUDA call here before the forks: gpusOrSkip runs in a child too.
  int status = inChild([] {
    if (!gpusOrSkip(kRanks))
      _exit(kExitSkip);
  });
  if (status == kExitSkip)
    return kExitSkip; // a skip, not a pass (SKIP_RETURN_CODE)
  int bad = 0;
  bad += inChild(recordsAndOff) != 0;
  bad += inChild(trapped) != 0;
  if (bad)
    std::printf("FAIL: %d case(s)\n", bad);
  return bad ? 1 : 0;
}
