//===- NvshmemBench.cu - NVSHMEM's barrier for the side-by-side table -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// NVSHMEM's device barrier in a kernel loop, timed like the others (slowest
// CTA, %globaltimer after one untimed round). NVSHMEM has one barrier per
// team, so one CTA runs nvshmemx_barrier_all_block() and N CTAs run
// nvshmemx_barrier_block() on N teams that each span every PE (a team per
// CTA is NVSHMEM's nearest equivalent of a barrier slot per CTA). One PE
// per GPU of the machine, like the TLE figures. Also
// NVSHMEM's signals in the ping-pong of BarrierBench.cu's `signal` section,
// between PEs 0 and 1: one thread, nvshmemx_signal_op(ADD 1) to the peer's
// word, then nvshmem_signal_wait_until(GE) on its own.
//
// NVSHMEM needs one process per GPU and a bootstrap. mpirun/nvshmrun are
// not available on the GPU machine, so this program forks one child per GPU
// (before any CUDA call) and bootstraps them with NVSHMEM's unique-id
// plugin, the id passed through a pipe. The children report through shared
// memory; the parent prints RESULT lines like the other benchmarks.
// Multicast stays off: NVSHMEM_DISABLE_NVLS=1 (set by bench/run.sh).
//
//===----------------------------------------------------------------------===//

#include "GpuSupport.h"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace tle::gpu;

namespace {

constexpr int kMaxConfigs = 8;
constexpr int kMaxReps = 9;
/// PEs of the run: every GPU (set in main, before the fork).
int gRanks = 2;

/// What the children write for the parent: per rank, configuration and
/// repetition, the slowest CTA's nanoseconds (0: not measured).
struct Shared {
  double ns[tle::kMaxRanks][kMaxConfigs][kMaxReps];
  double signalNs[kMaxReps]; ///< rank 0's ping-pong time per repetition
  int ok[tle::kMaxRanks];
};

__global__ void nvshmemBarrierLoop(const nvshmem_team_t *teams, int useAll,
                                   int iters, unsigned long long *out) {
  if (useAll)
    nvshmemx_barrier_all_block();
  else
    nvshmemx_barrier_block(teams[blockIdx.x]);
  const uint64_t t0 = globalTimer();
  for (int i = 0; i < iters; ++i) {
    if (useAll)
      nvshmemx_barrier_all_block();
    else
      nvshmemx_barrier_block(teams[blockIdx.x]);
  }
  const uint64_t dt = globalTimer() - t0;
  if (threadIdx.x == 0)
    out[blockIdx.x] = dt;
}

/// The signal ping-pong: PE 0 adds 1 to PE 1's word and waits for its own
/// to reach the round; PE 1 the reverse. One untimed round trip lines the
/// PEs up; launch k starts from `first` = k * (iters + 1).
__global__ void nvshmemSignalPingPong(uint64_t *word, int pe, int iters,
                                      uint64_t first, unsigned long long *out) {
  const int peer = 1 - pe;
  uint64_t t0 = 0;
  for (int i = 0; i <= iters; ++i) {
    if (i == 1)
      t0 = globalTimer();
    const uint64_t target = first + uint64_t(i) + 1;
    if (pe == 0) {
      nvshmemx_signal_op(word, 1, NVSHMEM_SIGNAL_ADD, peer);
      nvshmem_signal_wait_until(word, NVSHMEM_CMP_GE, target);
    } else {
      nvshmem_signal_wait_until(word, NVSHMEM_CMP_GE, target);
      nvshmemx_signal_op(word, 1, NVSHMEM_SIGNAL_ADD, peer);
    }
  }
  out[0] = globalTimer() - t0;
}

int child(int rank, int idPipe[2], Shared *sh, const std::vector<int> &ctas,
          int iters, int reps) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < gRanks)
    return kExitSkip;
  CK(cudaSetDevice(rank));
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (rank == 0) {
    if (nvshmemx_get_uniqueid(&id) != 0) {
      std::printf("nvshmemx_get_uniqueid failed\n");
      return 1;
    }
  }
  if (!shareIdOverPipe(rank, idPipe, id, gRanks))
    return 1;
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  nvshmemx_set_attr_uniqueid_args(rank, gRanks, &id, &attr);
  nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
  if (nvshmem_my_pe() != rank || nvshmem_n_pes() != gRanks) {
    std::printf("nvshmem: pe %d of %d, expected %d of %d\n", nvshmem_my_pe(),
                nvshmem_n_pes(), rank, gRanks);
    return 1;
  }
  const int maxCtas = *std::max_element(ctas.begin(), ctas.end());
  std::vector<nvshmem_team_t> teams(maxCtas);
  for (int i = 0; i < maxCtas; ++i)
    if (nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, gRanks, nullptr, 0,
                                   &teams[i]) != 0) {
      std::printf("nvshmem_team_split_strided failed at team %d (raise "
                  "NVSHMEM_MAX_TEAMS?)\n",
                  i);
      return 1;
    }
  nvshmem_team_t *dteams;
  unsigned long long *dout;
  CK(cudaMalloc(&dteams, maxCtas * sizeof(nvshmem_team_t)));
  CK(cudaMalloc(&dout, maxCtas * sizeof(unsigned long long)));
  CK(cudaMemcpy(dteams, teams.data(), maxCtas * sizeof(nvshmem_team_t),
                cudaMemcpyHostToDevice));
  std::vector<unsigned long long> h(maxCtas);
  for (size_t ci = 0; ci < ctas.size(); ++ci) {
    int c = ctas[ci];
    int useAll = c == 1;
    for (int rep = 0; rep < reps; ++rep) {
      const nvshmem_team_t *t = dteams;
      int it = iters;
      unsigned long long *o = dout;
      void *args[] = {&t, &useAll, &it, &o};
      // Collective launch: NVSHMEM's requirement for kernels that
      // synchronize across PEs (co-residency of all CTAs).
      int err = nvshmemx_collective_launch((const void *)nvshmemBarrierLoop,
                                           dim3(c), dim3(128), args, 0, 0);
      if (err != 0) {
        std::printf("nvshmemx_collective_launch failed (%d)\n", err);
        return 1;
      }
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(h.data(), dout, c * sizeof(h[0]), cudaMemcpyDeviceToHost));
      sh->ns[rank][ci][rep] =
          double(*std::max_element(h.begin(), h.begin() + c));
    }
  }
  // Signals: one symmetric word (zero-filled here, and a barrier so the
  // peer's first signal comes after the fill).
  uint64_t *word = static_cast<uint64_t *>(nvshmem_malloc(sizeof(uint64_t)));
  if (!word) {
    std::printf("nvshmem_malloc failed\n");
    return 1;
  }
  CK(cudaMemset(word, 0, sizeof(uint64_t)));
  CK(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  // PEs 0 and 1 play; the others (on a machine of more GPUs) only took
  // part in the collective allocation.
  for (int rep = 0; rep < reps && rank < 2; ++rep) {
    uint64_t first = uint64_t(rep) * uint64_t(iters + 1);
    nvshmemSignalPingPong<<<1, 1>>>(word, rank, iters, first, dout);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    if (rank == 0) {
      unsigned long long ns = 0;
      CK(cudaMemcpy(&ns, dout, sizeof(ns), cudaMemcpyDeviceToHost));
      sh->signalNs[rep] = double(ns);
    }
  }
  nvshmem_free(word);
  CK(cudaFree(dteams));
  CK(cudaFree(dout));
  nvshmem_finalize();
  sh->ok[rank] = 1;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> ctas = {1, 8, 32, 132};
  int iters = 20000, reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--ctas")
      ctas = parseIntList(argv[i + 1]);
    else if (a == "--iters")
      iters = std::atoi(argv[i + 1]);
    else if (a == "--reps")
      reps = std::clamp(std::atoi(argv[i + 1]), 1, kMaxReps);
  }
  if (ctas.empty() || ctas.size() > size_t(kMaxConfigs))
    return 2;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // One team per CTA; NVSHMEM's default limit is 32 teams.
  setenv("NVSHMEM_MAX_TEAMS", "160", 0);
  // Intra-node only: no network transport to load.
  setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0);
  setenv("NVSHMEM_BOOTSTRAP", "UID", 0);
  // Both ranks are on this host; the machine may have no other interface.
  setenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo", 0);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  Shared *sh = new (mem) Shared();
  gRanks = ranksFromChild();
  if (!gRanks)
    return kExitSkip;
  int idPipe[2];
  if (pipe(idPipe) != 0)
    return 1;
  std::fflush(stdout);
  std::vector<pid_t> pids(gRanks);
  for (int r = 0; r < gRanks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      int rc = child(r, idPipe, sh, ctas, iters, reps);
      std::fflush(stdout);
      std::_Exit(rc);
    }
  }
  close(idPipe[0]);
  close(idPipe[1]);
  int skipped = 0, failed = 0;
  for (int r = 0; r < gRanks; ++r) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == kExitSkip)
      ++skipped;
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !sh->ok[r])
      ++failed;
  }
  if (skipped) {
    std::printf("SKIPPED: no CUDA device pair\n");
    return kExitSkip;
  }
  if (failed) {
    std::printf("nvshmem benchmark failed\n");
    return 1;
  }
  for (size_t ci = 0; ci < ctas.size(); ++ci) {
    std::vector<double> worst(reps);
    for (int rep = 0; rep < reps; ++rep)
      for (int r = 0; r < gRanks; ++r)
        worst[rep] = std::max(worst[rep], sh->ns[r][ci][rep]);
    for (double &v : worst)
      v = v / 1e3 / iters;
    printStats("latency", "nvshmem", std::to_string(ctas[ci]), worst,
               ctas[ci] == 1 ? "nvshmemx_barrier_all_block"
                             : "nvshmemx_barrier_block; one team per CTA");
  }
  std::vector<double> ping(sh->signalNs, sh->signalNs + reps);
  for (double &v : ping)
    v = v / 2e3 / iters;
  printStats("signal", "nvshmem-signal", "thread", ping,
             "ping-pong/2: nvshmemx_signal_op ADD 1 + "
             "nvshmem_signal_wait_until GE; one thread");
  return 0;
}
