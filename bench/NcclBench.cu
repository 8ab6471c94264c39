//===- NcclBench.cu - NCCL's figures for the side-by-side table -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The NCCL 2.28 half of the comparison, in its own program because it links
// a specific libnccl (PyTorch's wheel ships 2.28.9; the system one on the
// GPU machine is older and does not match the 2.28.9 device headers):
//   latency    ncclLsaBarrierSession<ncclCoopCta>::sync(acq_rel) in a
//              kernel loop, one barrier per CTA, slowest CTA, vs CTAs
//   allreduce  ncclAllReduce float sum 8 KB - 1 MB, eager and graph-captured,
//              on a non-zero input whose sum is checked after the warm-up,
//              the eager series and the graph replays: a wrong sum marks the
//              row "WRONG RESULT" (bench/report.py fails it) and the program
//              exits 1
// Every GPU of the machine, one thread per rank in one process.
// Output lines match BarrierBench.cu: RESULT,<section>,<impl>,<x>,<us>,<note>.
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include <nccl.h>
#include <nccl_device.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tle::gpu;

#define NK(call)                                                               \
  do {                                                                         \
    ncclResult_t nkRes_ = (call);                                              \
    if (nkRes_ != ncclSuccess) {                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,       \
                   #call, ncclGetErrorString(nkRes_));                         \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

/// Ranks of the run: every GPU of the machine (set in main).
int gRanks = 2;

__global__ void lsaSyncLoop(ncclDevComm dc, int iters,
                            unsigned long long *out) {
  ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), dc, ncclTeamLsa(dc),
                                         dc.lsaBarrier, blockIdx.x);
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed); // untimed: line up
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i)
    bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> ctasList = {1, 8, 32, 132};
  int iters = 20000, reps = 7;
  bool doLatency = true, doReduce = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--ctas" && v)
      ctasList = parseIntList(v), ++i;
    else if (a == "--iters" && v)
      iters = std::atoi(v), ++i;
    else if (a == "--reps" && v)
      reps = std::max(1, std::atoi(v)), ++i;
    else if (a == "--sections" && v) {
      std::string s = v;
      doLatency = s.find("latency") != std::string::npos;
      doReduce = s.find("allreduce") != std::string::npos;
      ++i;
    } else {
      std::printf("usage: tle-bench-nccl [--sections latency,allreduce] "
                  "[--ctas 1,8,32,132] [--iters N] [--reps N]\n");
      return 2;
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int visible = gpusOrSkip(2);
  if (!visible)
    return kExitSkip;
  gRanks = ranksFor(visible);
  int version = 0;
  NK(ncclGetVersion(&version));
  std::printf("INFO,nccl,version %d\n", version);
  if (version != NCCL_VERSION_CODE)
    std::printf("WARNING: libnccl %d does not match the headers (%d)\n",
                version, NCCL_VERSION_CODE);

  std::vector<ncclComm_t> comms(gRanks);
  std::vector<int> devs(gRanks);
  for (int r = 0; r < gRanks; ++r)
    devs[r] = r;
  NK(ncclCommInitAll(comms.data(), gRanks, devs.data()));

  if (doLatency) {
    for (int ctas : ctasList) {
      std::vector<double> worst(reps, 0);
      std::vector<std::thread> th;
      for (int r = 0; r < gRanks; ++r)
        th.emplace_back([&, r] {
          CK(cudaSetDevice(r));
          ncclDevCommRequirements reqs = {};
          reqs.lsaBarrierCount = ctas;
          ncclDevComm dc;
          NK(ncclDevCommCreate(comms[r], &reqs, &dc));
          unsigned long long *o;
          CK(cudaMalloc(&o, ctas * sizeof(unsigned long long)));
          std::vector<unsigned long long> h(ctas);
          for (int rep = 0; rep < reps; ++rep) {
            lsaSyncLoop<<<ctas, 128>>>(dc, iters, o);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data(), o, ctas * sizeof(h[0]),
                          cudaMemcpyDeviceToHost));
            double m = double(*std::max_element(h.begin(), h.end()));
            // Both threads write their slowest CTA; keep the larger.
            static std::mutex mu;
            std::lock_guard<std::mutex> lock(mu);
            worst[rep] = std::max(worst[rep], m);
          }
          CK(cudaFree(o));
          NK(ncclDevCommDestroy(comms[r], &dc));
        });
      for (auto &t : th)
        t.join();
      std::sort(worst.begin(), worst.end());
      for (double &v : worst)
        v = v / 1e3 / iters;
      printStats("latency", "nccl-lsa", std::to_string(ctas), worst,
                 "ncclLsaBarrierSession<ncclCoopCta> sync acq_rel");
    }
  }

  bool anyWrong = false;
  if (doReduce) {
    HostBarrier meet(gRanks);
    for (size_t bytes = 8 << 10; bytes <= (1u << 20); bytes *= 2) {
      // [rep][rank] seconds: each repetition's figure is its slower rank.
      std::vector<std::vector<double>> eager(reps, std::vector<double>(gRanks)),
          graph(reps, std::vector<double>(gRanks));
      // Elements each rank found wrong after the warm-up and the eager
      // series / after the graph replays.
      std::vector<size_t> wrongEager(gRanks), wrongGraph(gRanks);
      const int n = 1000, perGraph = 50, replays = 10;
      std::vector<std::thread> th;
      for (int r = 0; r < gRanks; ++r)
        th.emplace_back([&, r] {
          CK(cudaSetDevice(r));
          cudaStream_t s;
          CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
          float *in, *out;
          CK(cudaMalloc(&in, bytes));
          CK(cudaMalloc(&out, bytes));
          size_t count = bytes / 4;
          // Rank r holds (r+1) * (1 + i % 7): every sum is exact in float
          // and differs from a lost or doubled contribution.
          std::vector<float> h(count);
          for (size_t i = 0; i < count; ++i)
            h[i] = float(r + 1) * float(1 + i % 7);
          CK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
          const float sumOfRanks = float(gRanks * (gRanks + 1) / 2);
          // Wrong elements of `out`, which is then cleared, so that the
          // next check sees only what the calls after it wrote.
          auto wrongElements = [&] {
            CK(cudaStreamSynchronize(s));
            CK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
            size_t wrong = 0;
            for (size_t i = 0; i < count; ++i)
              wrong += h[i] != sumOfRanks * float(1 + i % 7);
            CK(cudaMemsetAsync(out, 0, bytes, s));
            return wrong;
          };
          CK(cudaMemset(out, 0, bytes));
          // Warm-up (NCCL sets up its channels on first use).
          for (int i = 0; i < 20; ++i)
            NK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comms[r], s));
          wrongEager[r] = wrongElements();
          CK(cudaStreamSynchronize(s));
          for (int rep = 0; rep < reps; ++rep) {
            meet.arriveAndWait();
            eager[rep][r] = timed(s, [&] {
              for (int i = 0; i < n; ++i)
                NK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comms[r],
                                 s));
            });
          }
          wrongEager[r] += wrongElements();
          cudaGraph_t g;
          CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
          for (int i = 0; i < perGraph; ++i)
            NK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comms[r], s));
          CK(cudaStreamEndCapture(s, &g));
          for (int rep = 0; rep < reps; ++rep)
            graph[rep][r] = timeGraphReplays(s, g, replays, meet);
          wrongGraph[r] = wrongElements();
          CK(cudaFree(in));
          CK(cudaFree(out));
          CK(cudaStreamDestroy(s));
        });
      for (auto &t : th)
        t.join();
      std::string x = std::to_string(bytes);
      size_t badEager = 0, badGraph = 0;
      for (int r = 0; r < gRanks; ++r)
        badEager += wrongEager[r], badGraph += wrongGraph[r];
      auto verdict = [](size_t bad) {
        return bad ? "; WRONG RESULT: " + std::to_string(bad) +
                         " elements differ from the sum"
                   : std::string("; sum checked");
      };
      if (badEager || badGraph) {
        std::printf("FAIL: ncclAllReduce %zu bytes: %zu wrong elements eager, "
                    "%zu after graph replays\n",
                    bytes, badEager, badGraph);
        anyWrong = true;
      }
      std::vector<double> eagerUs, graphUs;
      for (int rep = 0; rep < reps; ++rep) {
        eagerUs.push_back(
            *std::max_element(eager[rep].begin(), eager[rep].end()) / n * 1e6);
        graphUs.push_back(
            *std::max_element(graph[rep].begin(), graph[rep].end()) /
            (perGraph * replays) * 1e6);
      }
      printStats("allreduce", "nccl", x, eagerUs,
                 "ncclAllReduce eager" + verdict(badEager));
      printStats("allreduce", "nccl-graph", x, graphUs,
                 "ncclAllReduce graph-captured" + verdict(badGraph));
    }
  }
  for (auto c : comms)
    NK(ncclCommDestroy(c));
  return anyWrong ? 1 : 0;
}
