//===- ConfigTest.cpp - The device-wait timeout and its sources --*- C++
//-*-===//
//
// config.timeoutMs == -1 takes TLE_BARRIER_TIMEOUT_MS, parsed strictly, or
// TLE_DEFAULT_TIMEOUT_MS; an explicit config value wins over the
// environment. The result lands in DevComm::timeoutNs.
//
//===----------------------------------------------------------------------===//

#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

/// Sets (or unsets, for nullptr) TLE_BARRIER_TIMEOUT_MS for one test.
class EnvTimeout {
public:
  explicit EnvTimeout(const char *value) {
    if (const char *old = getenv(kName))
      saved = old, hadOld = true;
    if (value)
      setenv(kName, value, 1);
    else
      unsetenv(kName);
  }
  ~EnvTimeout() {
    if (hadOld)
      setenv(kName, saved.c_str(), 1);
    else
      unsetenv(kName);
  }

private:
  static constexpr const char *kName = "TLE_BARRIER_TIMEOUT_MS";
  std::string saved;
  bool hadOld = false;
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

} // namespace
