//===- FromNcclTest.cpp - Communicators over an NCCL communicator ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommInitFromNccl against a fake NCCL: an all-gather through shared
// memory and a process-shared pthread barrier, so that its ranks may be
// threads of one process, processes, or both. This executable exports the
// fake under NCCL's own names (ncclAllGather, ...), which is how libtle's
// run-time lookup finds a libnccl the program linked; the tests also pass
// the functions explicitly. Checked: ranks of one process get a working
// communicator whose collectives (tleMemAlloc) run through the fake;
// across processes the emulator is refused (its memory files need file
// descriptors, which NCCL cannot carry); ranks spread over processes
// unevenly are refused on every rank; bad arguments are refused.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "backends/nccl/NcclNet.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

/// The shared state of one fake NCCL communicator.
struct FakeWorld {
  pthread_barrier_t barrier;
  int size;
  std::atomic<int> calls; ///< all-gathers, over all ranks
  static constexpr size_t kSlotBytes = 1 << 16;
  char slots[8][kSlotBytes];
};

/// One rank's ncclComm_t of the fake.
struct FakeComm {
  FakeWorld *world;
  int rank;
  int device;
};

/// A fake world in memory that forked children share.
FakeWorld *newWorld(int size) {
  void *p = mmap(nullptr, sizeof(FakeWorld), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  auto *w = static_cast<FakeWorld *>(p);
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&w->barrier, &attr, size);
  w->size = size;
  w->calls = 0;
  return w;
}

void deleteWorld(FakeWorld *w) {
  pthread_barrier_destroy(&w->barrier);
  munmap(w, sizeof(FakeWorld));
}

} // namespace

// The fake, under NCCL's names and with its calling convention; exported
// from this executable (ENABLE_EXPORTS) so that dlsym finds them.
extern "C" {

__attribute__((visibility("default"))) int
ncclAllGather(const void *send, void *recv, size_t count, int datatype,
              void *comm, void *stream) {
  (void)stream;
  auto *c = static_cast<FakeComm *>(comm);
  if (datatype != 0 || count > FakeWorld::kSlotBytes)
    return 4; // ncclInvalidArgument
  FakeWorld *w = c->world;
  ++w->calls;
  memcpy(w->slots[c->rank], send, count);
  pthread_barrier_wait(&w->barrier);
  for (int p = 0; p < w->size; ++p)
    memcpy(static_cast<char *>(recv) + p * count, w->slots[p], count);
  pthread_barrier_wait(&w->barrier);
  return 0;
}

__attribute__((visibility("default"))) int ncclCommCount(void *comm,
                                                         int *count) {
  *count = static_cast<FakeComm *>(comm)->world->size;
  return 0;
}

/// When >= 0, the rank every fake ncclCommUserRank reports.
int fakeClaimedRank = -1;

__attribute__((visibility("default"))) int ncclCommUserRank(void *comm,
                                                            int *rank) {
  *rank = fakeClaimedRank >= 0 ? fakeClaimedRank
                               : static_cast<FakeComm *>(comm)->rank;
  return 0;
}

__attribute__((visibility("default"))) int ncclCommCuDevice(void *comm,
                                                            int *device) {
  *device = static_cast<FakeComm *>(comm)->device;
  return 0;
}

// NCCL 2.28's device API, faked: the LSA team (a node) is `fakeNodeSize`
// consecutive ranks; `fakeGinFails` makes creation fail as NCCL does on a
// machine without a GIN-capable network.
int fakeNodeSize = 1;
bool fakeInterleaved = false; ///< nodes of every other rank, not runs
bool fakeGinFails = false;
int fakeVersion = 22809;

__attribute__((visibility("default"))) int ncclGetVersion(int *version) {
  *version = fakeVersion;
  return 0;
}

__attribute__((visibility("default"))) int
ncclDevCommCreate(void *comm, const void *requirements, void *out) {
  auto *c = static_cast<FakeComm *>(comm);
  auto *req =
      static_cast<const tle::NcclDevCommRequirements228 *>(requirements);
  if (fakeGinFails || !req->ginForceEnable || req->ginContextCount != 1)
    return 5; // ncclInvalidUsage
  auto *d = static_cast<tle::NcclDevComm228 *>(out);
  *d = {};
  d->rank = c->rank;
  d->nRanks = c->world->size;
  d->lsaSize = fakeNodeSize;
  d->lsaRank = fakeInterleaved ? c->rank / (c->world->size / fakeNodeSize)
                               : c->rank % fakeNodeSize;
  // Where the fake keeps the signal and counter counts it was asked for.
  memcpy(d->rest, &req->ginSignalCount, sizeof(int));
  memcpy(d->rest + sizeof(int), &req->ginCounterCount, sizeof(int));
  return 0;
}

__attribute__((visibility("default"))) int ncclDevCommDestroy(void *,
                                                              const void *) {
  return 0;
}

// NCCL's windows, faked: each registration is recorded and gets a handle of
// its own; `fakeWindowFails` refuses them as NCCL refuses memory it cannot
// map.
struct FakeRegistration {
  void *comm, *buff;
  size_t size;
  int flags;
  void *window;
  bool deregistered;
};
std::mutex fakeWindowsLock;
std::vector<FakeRegistration> fakeWindows;
bool fakeWindowFails = false;
char fakeWindowHandles[64];

__attribute__((visibility("default"))) int
ncclCommWindowRegister(void *comm, void *buff, size_t size, void **window,
                       int flags) {
  std::lock_guard<std::mutex> lock(fakeWindowsLock);
  if (fakeWindowFails)
    return 4; // ncclInvalidArgument
  *window = &fakeWindowHandles[fakeWindows.size() % sizeof(fakeWindowHandles)];
  fakeWindows.push_back({comm, buff, size, flags, *window, false});
  return 0;
}

__attribute__((visibility("default"))) int
ncclCommWindowDeregister(void *comm, void *window) {
  std::lock_guard<std::mutex> lock(fakeWindowsLock);
  for (FakeRegistration &w : fakeWindows)
    if (w.comm == comm && w.window == window && !w.deregistered) {
      w.deregistered = true;
      return 0;
    }
  return 4;
}

} // extern "C"

namespace {

using namespace tle::test;

tleNcclFunctions_t fakeFunctions() {
  tleNcclFunctions_t f = {};
  f.size = sizeof(f);
  f.allGather = &ncclAllGather;
  f.commCount = &ncclCommCount;
  f.commUserRank = &ncclCommUserRank;
  f.commCuDevice = &ncclCommCuDevice;
  f.getVersion = &ncclGetVersion;
  f.devCommCreate = &ncclDevCommCreate;
  f.devCommDestroy = &ncclDevCommDestroy;
  f.commWindowRegister = &ncclCommWindowRegister;
  f.commWindowDeregister = &ncclCommWindowDeregister;
  return f;
}

/// The emulator backend (the fake has no GPUs).
tleConfig_t emulatorConfig() {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.nBarriers = 8;
  cfg.bootstrapTimeoutMs = 10000;
  return cfg;
}

/// Runs `body(rank)` on one thread per rank and joins them.
template <typename Body> void perRankThread(int n, Body body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { body(r); });
  for (std::thread &t : threads)
    t.join();
}

class FromNccl : public testing::TestWithParam<bool> {};

TEST_P(FromNccl, RanksOfOneProcessShareMemoryThroughTheirExchanges) {
  const bool explicitFunctions = GetParam();
  const int n = 3;
  FakeWorld *world = newWorld(n);
  std::vector<FakeComm> fakes;
  for (int r = 0; r < n; ++r)
    fakes.push_back({world, r, 0});
  tleNcclFunctions_t functions = fakeFunctions();
  tleConfig_t cfg = emulatorConfig();
  std::vector<tleComm_t> comms(n);
  std::vector<tleMem_t> mems(n), meets(n);
  std::vector<tleResult_t> results(n, tleInternalError);
  std::vector<std::string> details(n);
  perRankThread(n, [&](int r) {
    results[r] = tleCommInitFromNccl(
        &comms[r], &fakes[r], explicitFunctions ? &functions : nullptr, &cfg);
    if (results[r] == tleSuccess)
      results[r] = tleMemAlloc(comms[r], 4096, &mems[r]);
    details[r] = tleGetLastErrorDetail();
  });
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(results[r], tleSuccess) << r << ": " << details[r];
  EXPECT_GT(world->calls.load(), 0);
  for (int r = 0; r < n; ++r) {
    int rank, size;
    tleBackend_t backend;
    EXPECT_EQ(tleCommRank(comms[r], &rank), tleSuccess);
    EXPECT_EQ(tleCommSize(comms[r], &size), tleSuccess);
    EXPECT_EQ(tleCommBackend(comms[r], &backend), tleSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, n);
    EXPECT_EQ(backend, tleBackendEmulator);
    void *h, *dc;
    tleMemGetHandle(mems[r], &h);
    tleCommGetDevComm(comms[r], &dc);
    auto *sym = static_cast<tle::SymMem *>(h);
    auto *devComm = static_cast<tle::DevComm *>(dc);
    for (int p = 0; p < n; ++p) {
      static_cast<uint32_t *>(sym->ptrs[p])[r] = 10 * p + r;
      tle::inboxOf(*devComm, p)[3 * devComm->inboxStride + r] = r + 1;
    }
  }
  // A second allocation through the fake, from every rank's thread.
  perRankThread(
      n, [&](int r) { results[r] = tleMemAlloc(comms[r], 64, &meets[r]); });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[r], tleSuccess);
    void *local, *dc;
    tleMemGetLocalPtr(mems[r], &local);
    tleCommGetDevComm(comms[r], &dc);
    auto *devComm = static_cast<tle::DevComm *>(dc);
    for (int q = 0; q < n; ++q) {
      EXPECT_EQ(static_cast<uint32_t *>(local)[q], uint32_t(10 * r + q));
      EXPECT_EQ(tle::inboxOf(*devComm, r)[3 * devComm->inboxStride + q],
                uint32_t(q + 1));
    }
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(tleMemFree(meets[r]), tleSuccess);
    EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
    EXPECT_EQ(tleCommDestroy(comms[r]), tleSuccess);
  }
  deleteWorld(world);
}

INSTANTIATE_TEST_SUITE_P(Functions, FromNccl, testing::Bool(),
                         [](const testing::TestParamInfo<bool> &info) {
                           return info.param ? "Given" : "FoundInProcess";
                         });

class FromNcclProcesses : public ProcessFixture {};

TEST_F(FromNcclProcesses, EmulatorAcrossProcessesIsRefusedOnEveryRank) {
  FakeWorld *world = newWorld(2);
  std::vector<Child> children;
  for (int r = 0; r < 2; ++r)
    children.push_back(start([world, r](std::string &) {
      FakeComm fake{world, r, 0};
      tleConfig_t cfg = emulatorConfig();
      tleComm_t comm;
      return tleCommInitFromNccl(&comm, &fake, nullptr, &cfg);
    }));
  for (int r = 0; r < 2; ++r) {
    Outcome o = collect(children[r], 20000);
    ASSERT_TRUE(o.finished) << "rank " << r << " hung";
    EXPECT_NE(o.result, tleSuccess);
    EXPECT_NE(o.detail.find("memory files"), std::string::npos)
        << "rank " << r << ": " << o.detail;
  }
  deleteWorld(world);
}

TEST_F(FromNcclProcesses, RanksSpreadUnevenlyOverProcessesAreRefused) {
  // Ranks 0 and 1 are threads of one child, rank 2 another child.
  FakeWorld *world = newWorld(3);
  auto ranks = [world](std::vector<int> mine) {
    return [world, mine](std::string &detail) {
      std::vector<tleResult_t> results(mine.size());
      std::vector<std::string> details(mine.size());
      std::vector<std::thread> threads;
      for (size_t i = 0; i < mine.size(); ++i)
        threads.emplace_back([&, i] {
          FakeComm fake{world, mine[i], 0};
          tleConfig_t cfg = emulatorConfig();
          tleComm_t comm;
          results[i] = tleCommInitFromNccl(&comm, &fake, nullptr, &cfg);
          details[i] = tleGetLastErrorDetail();
        });
      for (std::thread &t : threads)
        t.join();
      for (size_t i = 0; i < mine.size(); ++i)
        if (results[i] != tleNotSupported ||
            details[i].find("3 ranks live in 2 processes") ==
                std::string::npos) {
          detail = "rank " + std::to_string(mine[i]) + ": " + details[i];
          return tleInternalError;
        }
      return tleSuccess;
    };
  };
  Child a = start(ranks({0, 1}));
  Child b = start(ranks({2}));
  for (Child *c : {&a, &b}) {
    Outcome o = collect(*c, 20000);
    ASSERT_TRUE(o.finished);
    EXPECT_EQ(o.result, tleSuccess) << o.detail;
  }
  deleteWorld(world);
}

TEST(FromNcclArguments, AreRefused) {
  FakeWorld *world = newWorld(1);
  FakeComm fake{world, 0, 0};
  tleComm_t comm = reinterpret_cast<tleComm_t>(0x1);
  EXPECT_EQ(tleCommInitFromNccl(nullptr, &fake, nullptr, nullptr),
            tleInvalidArgument);
  EXPECT_EQ(tleCommInitFromNccl(&comm, nullptr, nullptr, nullptr),
            tleInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  tleNcclFunctions_t f = fakeFunctions();
  f.size = 8;
  EXPECT_EQ(tleCommInitFromNccl(&comm, &fake, &f, nullptr), tleInvalidArgument);
  f = fakeFunctions();
  f.allGather = nullptr;
  EXPECT_EQ(tleCommInitFromNccl(&comm, &fake, &f, nullptr), tleInvalidArgument);
  // NULL config means the CUDA backend, which this build or machine lacks
  // (or, with a GPU, device 0 exists and it works: either way no crash).
  tleResult_t r = tleCommInitFromNccl(&comm, &fake, nullptr, nullptr);
  if (r == tleSuccess)
    EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  else
    EXPECT_TRUE(r == tleNotSupported || r == tleCudaError) << r;
  deleteWorld(world);
}

/// Two threads whose fake ncclCommUserRank both say rank 0, or whose
/// all-gather returns `junk` instead of what the ranks sent: every rank
/// must refuse with a reason.
struct BadExchange {
  explicit BadExchange(bool junk) : world(newWorld(2)) {
    fakeClaimedRank = junk ? -1 : 0;
    fakes = {{world, 0, 0}, {world, 1, 0}};
    tleNcclFunctions_t f = fakeFunctions();
    if (junk)
      f.allGather = &junkAllGather;
    tleConfig_t cfg = emulatorConfig();
    cfg.bootstrapTimeoutMs = 3000;
    perRankThread(2, [&](int r) {
      results[r] = tleCommInitFromNccl(&comms[r], &fakes[r], &f, &cfg);
      details[r] = tleGetLastErrorDetail();
    });
  }
  ~BadExchange() {
    fakeClaimedRank = -1;
    for (tleComm_t c : comms)
      if (c)
        tleCommDestroy(c);
    deleteWorld(world);
  }
  /// Gathers, then overwrites what arrived with 0xff bytes (a corrupt
  /// length of 2^64 - 1 in the first step).
  static int junkAllGather(const void *send, void *recv, size_t count,
                           int datatype, void *comm, void *stream) {
    int r = ncclAllGather(send, recv, count, datatype, comm, stream);
    memset(recv, 0xff, count * static_cast<FakeComm *>(comm)->world->size);
    return r;
  }
  FakeWorld *world;
  std::vector<FakeComm> fakes;
  tleComm_t comms[2] = {};
  tleResult_t results[2] = {tleSuccess, tleSuccess};
  std::string details[2];
};

// Reproducers (issue 32, item 16): two ranks that both claim rank 0 were
// accepted; a corrupt all-gather ended with std::string's internals as the
// message. Both are refused on every rank, saying what is wrong.
TEST(FromNcclArguments, TwoRanksClaimingOneRankAreRefused) {
  BadExchange x(/*junk=*/false);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(x.results[r], tleInvalidArgument) << x.details[r];
    EXPECT_EQ(x.comms[r], nullptr);
    EXPECT_NE(x.details[r].find("the exchange through NCCL is inconsistent: "
                                "at rank 1's place it returned rank 0's "
                                "contribution"),
              std::string::npos)
        << x.details[r];
  }
}

TEST(FromNcclArguments, ACorruptAllGatherIsRefused) {
  BadExchange x(/*junk=*/true);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(x.results[r], tleInvalidArgument) << x.details[r];
    EXPECT_EQ(x.comms[r], nullptr);
    EXPECT_EQ(x.details[r].find("basic_string"), std::string::npos)
        << x.details[r];
    EXPECT_NE(x.details[r].find("the exchange through NCCL is inconsistent: "
                                "at rank 0's place it returned no "
                                "contribution"),
              std::string::npos)
        << x.details[r];
  }
}

} // namespace

/// TLE_NETWORK for the life of a test.
class NetworkEnv {
public:
  explicit NetworkEnv(const char *value) { setenv("TLE_NETWORK", value, 1); }
  ~NetworkEnv() {
    unsetenv("TLE_NETWORK");
    fakeNodeSize = 1;
    fakeInterleaved = false;
    fakeGinFails = false;
    fakeVersion = 22809;
    fakeWindowFails = false;
    fakeWindows.clear();
  }
};

/// What `n` ranks made from the fake got: each rank's communicator (null
/// on failure), status and error detail. `fakes` must outlive the
/// communicators (their exchanges call the fake).
struct Created {
  std::vector<FakeComm> fakes;
  std::vector<tleComm_t> comms;
  std::vector<tleResult_t> results;
  std::vector<std::string> details;
};

/// Creates `n` ranks from the fake, one thread each.
Created initAll(int n, FakeWorld *world, const tleConfig_t &cfg) {
  tleNcclFunctions_t functions = fakeFunctions();
  Created c;
  for (int r = 0; r < n; ++r)
    c.fakes.push_back({world, r, 0});
  c.comms.assign(n, nullptr);
  c.results.assign(n, tleInternalError);
  c.details.assign(n, "");
  perRankThread(n, [&](int r) {
    c.results[r] =
        tleCommInitFromNccl(&c.comms[r], &c.fakes[r], &functions, &cfg);
    c.details[r] = tleGetLastErrorDetail();
  });
  return c;
}

/// Every rank of `c` refused with tleNotSupported, its detail holding
/// `why`, and left no communicator.
void expectRefusedEverywhere(const Created &c, const std::string &why) {
  for (size_t r = 0; r < c.results.size(); ++r) {
    EXPECT_EQ(c.results[r], tleNotSupported) << r << ": " << c.details[r];
    EXPECT_NE(c.details[r].find(why), std::string::npos) << c.details[r];
    EXPECT_EQ(c.comms[r], nullptr);
  }
}

TEST(FromNcclNetwork, NodesComeFromNcclsLsaTeamAndNetWordsAreGinSignals) {
  NetworkEnv env("gin");
  fakeNodeSize = 2;
  const int n = 4;
  FakeWorld *world = newWorld(n);
  tleConfig_t cfg = emulatorConfig();
  cfg.nSignals = 5;
  Created created = initAll(n, world, cfg);
  std::vector<tleComm_t> &comms = created.comms;
  std::vector<tleResult_t> &results = created.results;
  std::vector<std::string> &details = created.details;
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(results[r], tleSuccess) << r << ": " << details[r];
  for (int r = 0; r < n; ++r) {
    int rank, size;
    EXPECT_EQ(tleCommRank(comms[r], &rank), tleSuccess);
    EXPECT_EQ(tleCommSize(comms[r], &size), tleSuccess);
    EXPECT_EQ(rank, r); // the world rank, NCCL's
    EXPECT_EQ(size, n);
    void *dcp;
    ASSERT_EQ(tleCommGetDevComm(comms[r], &dcp), tleSuccess);
    auto *dc = static_cast<tle::DevComm *>(dcp);
    EXPECT_EQ(dc->rank, r % 2);
    EXPECT_EQ(dc->size, 2);
    EXPECT_EQ(dc->node, r / 2);
    EXPECT_EQ(dc->nNodes, 2);
    EXPECT_EQ(dc->netKind, tle::kNetNcclGin);
    // Every network context's 5 signal words (4 contexts by default),
    // then the INTER and WORLD barrier words.
    EXPECT_EQ(dc->nNetWords, 4 * 5u + 2 * 8u);
    // DevComm::net is the copy of NCCL's device communicator.
    auto *copy = static_cast<const tle::NcclDevComm228 *>(dc->net);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->rank, r);
    int asked;
    memcpy(&asked, copy->rest, sizeof(int));
    EXPECT_EQ(asked, int(dc->nNetWords));
    // GIN's counters are TLE's counters on this communicator: every
    // network context's.
    memcpy(&asked, copy->rest + sizeof(int), sizeof(int));
    EXPECT_EQ(asked, int(dc->nContexts * dc->nCounters));
    EXPECT_GT(dc->nCounters, 0u);
  }
  // The node-local half is the node's: buffers are mapped within the node.
  std::vector<tleMem_t> mems(n);
  perRankThread(
      n, [&](int r) { results[r] = tleMemAlloc(comms[r], 64, &mems[r]); });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[r], tleSuccess);
    void *h;
    tleMemGetHandle(mems[r], &h);
    auto *sym = static_cast<tle::SymMem *>(h);
    EXPECT_EQ(sym->size, 2);
    EXPECT_EQ(sym->rank, r % 2);
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
    EXPECT_EQ(tleCommDestroy(comms[r]), tleSuccess);
  }
  deleteWorld(world);
}

/// Allocates a buffer of `bytes` on every rank of `comms` (one thread each)
/// and returns each rank's device handle; the buffers go to `mems`.
std::vector<tle::SymMem *> allocEverywhere(std::vector<tleComm_t> &comms,
                                           size_t bytes,
                                           std::vector<tleMem_t> &mems) {
  int n = static_cast<int>(comms.size());
  std::vector<tleResult_t> results(n, tleInternalError);
  mems.assign(n, nullptr);
  perRankThread(
      n, [&](int r) { results[r] = tleMemAlloc(comms[r], bytes, &mems[r]); });
  std::vector<tle::SymMem *> handles(n, nullptr);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(results[r], tleSuccess) << r;
    void *h = nullptr;
    if (mems[r])
      tleMemGetHandle(mems[r], &h);
    handles[r] = static_cast<tle::SymMem *>(h);
  }
  return handles;
}

TEST(FromNcclNetwork, BuffersOfAGinCommunicatorAreNcclWindowsOfTheirCopy) {
  // Every rank registers its own copy, whole, as a symmetric window of the
  // NCCL communicator, and the device handle names that window; freeing
  // the buffer deregisters it.
  NetworkEnv env("gin");
  fakeNodeSize = 2;
  const int n = 4;
  FakeWorld *world = newWorld(n);
  tleConfig_t cfg = emulatorConfig();
  cfg.nSignals = 3;
  Created created = initAll(n, world, cfg);
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(created.results[r], tleSuccess) << created.details[r];
  std::vector<tleMem_t> mems;
  std::vector<tle::SymMem *> h = allocEverywhere(created.comms, 8192, mems);
  ASSERT_EQ(fakeWindows.size(), size_t(n));
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(h[r], nullptr);
    const FakeRegistration *reg = nullptr;
    for (const FakeRegistration &w : fakeWindows)
      if (w.comm == &created.fakes[r])
        reg = &w;
    ASSERT_NE(reg, nullptr) << "rank " << r << " registered nothing";
    EXPECT_EQ(reg->buff, h[r]->ptrs[h[r]->rank]) << r;
    EXPECT_EQ(reg->size, 8192u) << r;
    EXPECT_EQ(reg->flags, tle::kNcclWinCollSymmetric) << r;
    EXPECT_EQ(h[r]->netWindow, reg->window) << r;
  }
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
  for (const FakeRegistration &w : fakeWindows)
    EXPECT_TRUE(w.deregistered);
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(tleCommDestroy(created.comms[r]), tleSuccess);
  deleteWorld(world);
}

TEST(FromNcclNetwork, ABufferNcclWillNotRegisterServesWithoutAWindow) {
  // NCCL refuses the memory (not cuMem): the buffer is still allocated and
  // mapped, and its handle names no window, which the device library
  // refuses GIN transfers on (NetTest.cpp). An NCCL whose table lacks
  // windows (an older tleNcclFunctions_t) gives the same.
  for (bool older : {false, true}) {
    NetworkEnv env("gin");
    fakeWindowFails = !older;
    const int n = 2;
    FakeWorld *world = newWorld(n);
    tleNcclFunctions_t functions = fakeFunctions();
    if (older)
      functions.size = offsetof(tleNcclFunctions_t, commWindowRegister);
    std::vector<FakeComm> fakes = {{world, 0, 0}, {world, 1, 0}};
    std::vector<tleComm_t> comms(n, nullptr);
    tleConfig_t cfg = emulatorConfig();
    perRankThread(n, [&](int r) {
      EXPECT_EQ(tleCommInitFromNccl(&comms[r], &fakes[r], &functions, &cfg),
                tleSuccess);
    });
    std::vector<tleMem_t> mems;
    std::vector<tle::SymMem *> h = allocEverywhere(comms, 4096, mems);
    for (int r = 0; r < n; ++r) {
      ASSERT_NE(h[r], nullptr);
      EXPECT_EQ(h[r]->netWindow, nullptr) << "older " << older;
      EXPECT_NE(h[r]->ptrs[h[r]->rank], nullptr);
    }
    EXPECT_TRUE(fakeWindows.empty());
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
      EXPECT_EQ(tleCommDestroy(comms[r]), tleSuccess);
    }
    deleteWorld(world);
  }
}

TEST(FromNcclNetwork, WithoutANetworkBuffersAreNotRegistered) {
  NetworkEnv env("none");
  const int n = 2;
  FakeWorld *world = newWorld(n);
  Created created = initAll(n, world, emulatorConfig());
  for (int r = 0; r < n; ++r)
    ASSERT_EQ(created.results[r], tleSuccess) << created.details[r];
  std::vector<tleMem_t> mems;
  std::vector<tle::SymMem *> h = allocEverywhere(created.comms, 4096, mems);
  EXPECT_TRUE(fakeWindows.empty());
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(h[r]->netWindow, nullptr);
    EXPECT_EQ(tleMemFree(mems[r]), tleSuccess);
    EXPECT_EQ(tleCommDestroy(created.comms[r]), tleSuccess);
  }
  deleteWorld(world);
}

TEST(FromNcclNetwork, WhatGinCannotCarryIsReportedWithItsReason) {
  // The device library's NotServed records (OneSided.h, checkNetData), as
  // tleCommGetError reads them: one reason per NotServedWhat, the peer as
  // its world rank.
  NetworkEnv env("gin");
  FakeWorld *world = newWorld(1);
  Created created = initAll(1, world, emulatorConfig());
  ASSERT_EQ(created.results[0], tleSuccess) << created.details[0];
  void *dcp;
  ASSERT_EQ(tleCommGetDevComm(created.comms[0], &dcp), tleSuccess);
  auto *dc = static_cast<tle::DevComm *>(dcp);
  struct Case {
    uint32_t what;
    const char *says;
  } cases[] = {{tle::kNotServedGet, "GIN has no get"},
               {tle::kNotServedAction, "a remote counter"},
               {tle::kNotServedNoWindow, "did not register"}};
  for (const Case &k : cases) {
    tle::ErrorRecord &e = *dc->error;
    e.code = tle::kDevErrNotServed;
    e.aux = k.what;
    e.value = 5;
    e.state = 2;
    tleErrorInfo info;
    EXPECT_EQ(tleCommGetError(created.comms[0], &info), tleNotSupported);
    std::string m = info.message;
    EXPECT_NE(m.find(k.says), std::string::npos) << m;
    EXPECT_NE(m.find("world rank 5"), std::string::npos) << m;
  }
  EXPECT_EQ(tleCommDestroy(created.comms[0]), tleSuccess);
  deleteWorld(world);
}

TEST(FromNcclNetwork, NoGinIsRefusedOnEveryRankWithNcclsWords) {
  NetworkEnv env("gin");
  fakeGinFails = true;
  FakeWorld *world = newWorld(2);
  expectRefusedEverywhere(initAll(2, world, emulatorConfig()),
                          "no GIN-capable network");
  deleteWorld(world);
}

TEST(FromNcclNetwork, UnequalOrInterleavedNodesAndOtherVersionsAreRefused) {
  NetworkEnv env("gin");
  FakeWorld *three = newWorld(3);
  fakeNodeSize = 2; // 3 ranks do not split into nodes of 2
  expectRefusedEverywhere(initAll(3, three, emulatorConfig()),
                          "TLE needs nodes of equal size");
  fakeNodeSize = 1;
  fakeVersion = 22903;
  expectRefusedEverywhere(initAll(3, three, emulatorConfig()), "NCCL 2.29.3");
  deleteWorld(three);
  // Nodes {0, 2} and {1, 3}: world rank = node * 2 + local does not hold.
  fakeVersion = 22809;
  fakeNodeSize = 2;
  fakeInterleaved = true;
  FakeWorld *four = newWorld(4);
  expectRefusedEverywhere(initAll(4, four, emulatorConfig()), "node-major");
  deleteWorld(four);
}

TEST(FromNcclNetwork, BadNetworkChoiceIsRefused) {
  NetworkEnv env("infiniband");
  FakeWorld *world = newWorld(1);
  FakeComm fake{world, 0, 0};
  tleConfig_t cfg = emulatorConfig();
  tleComm_t comm;
  EXPECT_EQ(tleCommInitFromNccl(&comm, &fake, nullptr, &cfg),
            tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail()).find("TLE_NETWORK"),
            std::string::npos);
  deleteWorld(world);
}

TEST(FromNcclNetwork, OlderFunctionTablesStillWork) {
  // A caller built before the device-API members passes the old size.
  FakeWorld *world = newWorld(1);
  FakeComm fake{world, 0, 0};
  tleNcclFunctions_t f = fakeFunctions();
  f.size = offsetof(tleNcclFunctions_t, getVersion);
  tleConfig_t cfg = emulatorConfig();
  tleComm_t comm;
  ASSERT_EQ(tleCommInitFromNccl(&comm, &fake, &f, &cfg), tleSuccess)
      << tleGetLastErrorDetail();
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  deleteWorld(world);
}
