//===- ConfigTest.cpp - The device-wait timeout and its sources -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// config.timeoutMs == -1 takes TLE_BARRIER_TIMEOUT_MS, parsed strictly, or
// TLE_DEFAULT_TIMEOUT_MS; an explicit config value wins over the
// environment. The result lands in DevComm::timeoutNs. config.allocType
// (tleAllocDefault: TLE_CUDA_ALLOC) is checked on every backend, though
// only the CUDA one uses it; a config from an older tle.h, shorter than
// today's, takes the defaults of the fields it lacks. Also nSignals: the
// signal words it allocates, its range, and a config from before it; a
// config from before onError; and nContexts, the network contexts.
//
//===----------------------------------------------------------------------===//

#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <string>

namespace {

/// Sets (or unsets, for nullptr) the variable `name` for one test.
class EnvVar {
public:
  EnvVar(const char *name, const char *value) : name(name) {
    if (const char *old = getenv(name))
      saved = old, hadOld = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~EnvVar() {
    if (hadOld)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::string saved;
  bool hadOld = false;
};

/// TLE_BARRIER_TIMEOUT_MS for one test.
class EnvTimeout : public EnvVar {
public:
  explicit EnvTimeout(const char *value)
      : EnvVar("TLE_BARRIER_TIMEOUT_MS", value) {}
};

/// Creates a 1-rank communicator with `timeoutMs` and returns the DevComm's
/// timeout, or the creation status through `result`.
uint64_t timeoutNsFor(int64_t timeoutMs, tleResult_t &result) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.timeoutMs = timeoutMs;
  tleComm_t comm = nullptr;
  result = tleCommInitAll(&comm, 1, nullptr, &cfg);
  if (result != tleSuccess)
    return 0;
  void *dc;
  EXPECT_EQ(tleCommGetDevComm(comm, &dc), tleSuccess);
  uint64_t ns = static_cast<tle::DevComm *>(dc)->timeoutNs;
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  return ns;
}

TEST(ConfigTest, DefaultWithoutEnvironment) {
  EnvTimeout env(nullptr);
  tleResult_t r;
  EXPECT_EQ(timeoutNsFor(-1, r), TLE_DEFAULT_TIMEOUT_MS * 1000000ull);
  EXPECT_EQ(r, tleSuccess);
}

TEST(ConfigTest, EmptyEnvironmentCountsAsUnset) {
  EnvTimeout env("");
  tleResult_t r;
  EXPECT_EQ(timeoutNsFor(-1, r), TLE_DEFAULT_TIMEOUT_MS * 1000000ull);
  EXPECT_EQ(r, tleSuccess);
}

TEST(ConfigTest, EnvironmentValue) {
  EnvTimeout env("1234");
  tleResult_t r;
  EXPECT_EQ(timeoutNsFor(-1, r), 1234ull * 1000000ull);
  EXPECT_EQ(r, tleSuccess);
}

TEST(ConfigTest, EnvironmentZeroWaitsForever) {
  EnvTimeout env("0");
  tleResult_t r;
  EXPECT_EQ(timeoutNsFor(-1, r), 0u);
  EXPECT_EQ(r, tleSuccess);
}

TEST(ConfigTest, ExplicitConfigWinsOverEnvironment) {
  EnvTimeout env("not a number");
  tleResult_t r;
  EXPECT_EQ(timeoutNsFor(250, r), 250ull * 1000000ull);
  EXPECT_EQ(r, tleSuccess);
  EXPECT_EQ(timeoutNsFor(0, r), 0u);
  EXPECT_EQ(r, tleSuccess);
}

class BadEnvironmentTest : public testing::TestWithParam<const char *> {};

TEST_P(BadEnvironmentTest, IsRefused) {
  EnvTimeout env(GetParam());
  tleResult_t r;
  timeoutNsFor(-1, r);
  EXPECT_EQ(r, tleInvalidArgument);
  std::string detail = tleGetLastErrorDetail();
  EXPECT_NE(detail.find("TLE_BARRIER_TIMEOUT_MS"), std::string::npos) << detail;
}

INSTANTIATE_TEST_SUITE_P(Values, BadEnvironmentTest,
                         testing::Values("abc", "-5", "12ms", " 5", "5 ", "1e3",
                                         "0x10", "+7", "99999999999999999999"));

TEST(ConfigTest, LargestTimeoutDoesNotOverflow) {
  EnvTimeout env("9223372036854"); // INT64_MAX / 1e6
  tleResult_t r;
  EXPECT_EQ(timeoutNsFor(-1, r), 9223372036854ull * 1000000ull);
  EXPECT_EQ(r, tleSuccess);
  EnvTimeout env2("9223372036855");
  timeoutNsFor(-1, r);
  EXPECT_EQ(r, tleInvalidArgument);
}

// nSignals: the words exist on every rank, mapped into every peer, zero;
// out-of-range counts are refused with nothing created.
TEST(ConfigTest, SignalWordsAreAllocatedAndMapped) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  EXPECT_EQ(cfg.nSignals, 64u);
  cfg.nSignals = 5;
  tleComm_t comms[3] = {};
  ASSERT_EQ(tleCommInitAll(comms, 3, nullptr, &cfg), tleSuccess);
  const tle::DevComm *d[3];
  for (int r = 0; r < 3; ++r) {
    void *dc;
    ASSERT_EQ(tleCommGetDevComm(comms[r], &dc), tleSuccess);
    d[r] = static_cast<const tle::DevComm *>(dc);
    EXPECT_EQ(d[r]->nSignals, 5u);
    EXPECT_EQ(d[r]->signals, d[r]->signalPeers[r]);
    for (int p = 0; p < 3; ++p) {
      ASSERT_NE(d[r]->signalPeers[p], nullptr);
      for (int w = 0; w < 5; ++w)
        EXPECT_EQ(d[r]->signalPeers[p][w], 0u);
    }
  }
  // Rank r writes word r of rank (r + 1) % 3 through its mapping.
  for (int r = 0; r < 3; ++r)
    d[r]->signalPeers[(r + 1) % 3][r] = 100 + r;
  for (int r = 0; r < 3; ++r) {
    uint64_t words[5];
    ASSERT_EQ(tleCommGetSignals(comms[r], 0, 5, words), tleSuccess);
    int from = (r + 2) % 3;
    for (int w = 0; w < 5; ++w)
      EXPECT_EQ(words[w], w == from ? 100u + from : 0u) << r << " " << w;
  }
  uint64_t word;
  EXPECT_EQ(tleCommGetSignals(comms[0], 5, 1, &word), tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail()).find("the communicator has 5"),
            std::string::npos);
  // A range whose end passes 2^32 is quoted as it is, not wrapped (it used
  // to read "signals 4294967295..1").
  EXPECT_EQ(tleCommGetSignals(comms[0], 4294967295u, 2, &word),
            tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail())
                .find("signals 4294967295..4294967297 are out of range"),
            std::string::npos)
      << tleGetLastErrorDetail();
  uint32_t epoch;
  EXPECT_EQ(tleCommGetBarrierEpochs(comms[0], 4294967295u, 2, &epoch),
            tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail())
                .find("slots 4294967295..4294967297 are out of range"),
            std::string::npos)
      << tleGetLastErrorDetail();
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);

  for (uint32_t bad : {0u, (1u << 20) + 1}) {
    cfg.nSignals = bad;
    tleComm_t comm = nullptr;
    EXPECT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleInvalidArgument);
    EXPECT_EQ(comm, nullptr);
    EXPECT_NE(std::string(tleGetLastErrorDetail()).find("config.nSignals"),
              std::string::npos);
  }
}

// nContexts: every network context's signal words, counters and shadows
// (nSignalWords of each), the net handles of the contexts that exist;
// out-of-range counts are refused with nothing created; a config from
// before the field gets the default, 4.
TEST(ConfigTest, NetworkContextsEachHaveTheirWords) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  EXPECT_EQ(cfg.nContexts, 4u);
  cfg.nSignals = 5;
  cfg.nContexts = 3;
  tleComm_t comms[2] = {};
  ASSERT_EQ(tleCommInitAll(comms, 2, nullptr, &cfg), tleSuccess);
  for (tleComm_t c : comms) {
    void *dcp;
    ASSERT_EQ(tleCommGetDevComm(c, &dcp), tleSuccess);
    const auto *d = static_cast<const tle::DevComm *>(dcp);
    EXPECT_EQ(d->nContexts, 3u);
    EXPECT_EQ(d->nSignals, 5u);
    EXPECT_EQ(d->nSignalWords, 15u);
    EXPECT_EQ(d->nCounters, 5u);
    EXPECT_EQ(d->counters, d->signals + 15);
    for (uint32_t w = 0; w < 15 + 15; ++w)
      EXPECT_EQ(d->signals[w], 0u) << w; // the words, then the counters
    for (uint32_t w = 0; w < 15; ++w)
      EXPECT_EQ(d->shadows[w], 0u) << w;
    for (uint32_t k = 0; k < tle::kMaxContexts; ++k) {
      EXPECT_EQ(d->nets[k].magic, k < 3 ? tle::kDevNetMagic : 0u) << k;
      if (k < 3)
        EXPECT_EQ(d->nets[k].context, k);
    }
  }
  for (tleComm_t c : comms)
    EXPECT_EQ(tleCommDestroy(c), tleSuccess);

  for (uint32_t bad : {0u, uint32_t(TLE_MAX_CONTEXTS) + 1}) {
    cfg.nContexts = bad;
    tleComm_t comm = nullptr;
    EXPECT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleInvalidArgument);
    EXPECT_EQ(comm, nullptr);
    EXPECT_NE(std::string(tleGetLastErrorDetail()).find("config.nContexts"),
              std::string::npos)
        << tleGetLastErrorDetail();
  }

  tleConfig_t old = TLE_CONFIG_INITIALIZER;
  old.nContexts = 7; // past the shorter struct: not read
  old.size = offsetof(tleConfig_t, nContexts);
  tleComm_t comm = nullptr;
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &old), tleSuccess);
  void *dcp;
  ASSERT_EQ(tleCommGetDevComm(comm, &dcp), tleSuccess);
  EXPECT_EQ(static_cast<const tle::DevComm *>(dcp)->nContexts, 4u);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

// A caller compiled against the tle.h that had no nSignals passes a
// shorter struct: it gets the default, and its other fields are honoured.
TEST(ConfigTest, AConfigWithoutNSignalsGetsTheDefault) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.nSignals = 0; // beyond the old size: must not be read
  cfg.nBarriers = 3;
  cfg.size = offsetof(tleConfig_t, nSignals);
  tleComm_t comm = nullptr;
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleSuccess)
      << tleGetLastErrorDetail();
  void *dc;
  ASSERT_EQ(tleCommGetDevComm(comm, &dc), tleSuccess);
  EXPECT_EQ(static_cast<const tle::DevComm *>(dc)->nSignals, 64u);
  EXPECT_EQ(static_cast<const tle::DevComm *>(dc)->nBarriers, 3u);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  // The tle.h before allocType had no nSignals either.
  cfg.size = offsetof(tleConfig_t, allocType);
  ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleSuccess)
      << tleGetLastErrorDetail();
  ASSERT_EQ(tleCommGetDevComm(comm, &dc), tleSuccess);
  EXPECT_EQ(static_cast<const tle::DevComm *>(dc)->nSignals, 64u);
  EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
}

// A caller compiled against the tle.h of the signals (nSignals last) has no
// onError: it gets the default (TLE_ON_ERROR, else trap), and nSignals is
// honoured.
TEST(ConfigTest, AConfigWithoutOnErrorGetsTheDefault) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.onError = static_cast<tleOnError_t>(99); // beyond the old size: unread
  cfg.nSignals = 5;
  cfg.size = offsetof(tleConfig_t, onError);
  for (const char *env : {"", "return"}) {
    EnvVar var("TLE_ON_ERROR", env);
    tleComm_t comm = nullptr;
    ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleSuccess)
        << tleGetLastErrorDetail();
    void *dc;
    ASSERT_EQ(tleCommGetDevComm(comm, &dc), tleSuccess);
    const auto *d = static_cast<const tle::DevComm *>(dc);
    EXPECT_EQ(d->nSignals, 5u);
    EXPECT_EQ(d->flags, *env ? tle::kDevCommOnErrorReturn : 0u) << env;
    EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  }
}

} // namespace

namespace {

tleResult_t initWith(const tleConfig_t &cfg) {
  tleComm_t comm = nullptr;
  tleResult_t r = tleCommInitAll(&comm, 1, nullptr, &cfg);
  if (r == tleSuccess)
    EXPECT_EQ(tleCommDestroy(comm), tleSuccess);
  return r;
}

TEST(ConfigTest, AllocTypesAndTheirEnvironment) {
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  EXPECT_EQ(cfg.allocType, tleAllocDefault);
  for (tleAllocType_t t :
       {tleAllocDefault, tleAllocCudaMalloc, tleAllocCuMem, tleAllocAuto}) {
    cfg.allocType = t;
    EXPECT_EQ(initWith(cfg), tleSuccess) << t;
  }
  cfg.allocType = static_cast<tleAllocType_t>(4);
  EXPECT_EQ(initWith(cfg), tleInvalidArgument);
  EXPECT_NE(std::string(tleGetLastErrorDetail()).find("config.allocType 4"),
            std::string::npos)
      << tleGetLastErrorDetail();
  cfg.allocType = tleAllocDefault;
  for (const char *good : {"cudamalloc", "cumem", "auto", ""}) {
    EnvVar env("TLE_CUDA_ALLOC", good);
    EXPECT_EQ(initWith(cfg), tleSuccess) << good;
  }
  for (const char *bad : {"CUMEM", "ipc", "cumem ", "1"}) {
    EnvVar env("TLE_CUDA_ALLOC", bad);
    EXPECT_EQ(initWith(cfg), tleInvalidArgument) << bad;
    EXPECT_NE(std::string(tleGetLastErrorDetail()).find("TLE_CUDA_ALLOC"),
              std::string::npos);
  }
  // An explicit type does not read the environment at all.
  EnvVar env("TLE_CUDA_ALLOC", "nonsense");
  cfg.allocType = tleAllocCuMem;
  EXPECT_EQ(initWith(cfg), tleSuccess);
}

TEST(ConfigTest, ConfigOfAnOlderHeaderTakesDefaultsForNewFields) {
  // The tle.h before allocType: its struct ended at bootstrapTimeoutMs.
  tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
  cfg.size = offsetof(tleConfig_t, allocType);
  cfg.allocType = static_cast<tleAllocType_t>(99); // past `size`: unread
  EXPECT_EQ(initWith(cfg), tleSuccess) << tleGetLastErrorDetail();
  cfg.size = offsetof(tleConfig_t, allocType) - 1;
  EXPECT_EQ(initWith(cfg), tleInvalidArgument);
  cfg.size = sizeof(tleConfig_t);
  EXPECT_EQ(initWith(cfg), tleInvalidArgument);
}

} // namespace
