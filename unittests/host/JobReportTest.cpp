//===- JobReportTest.cpp - tleCommGetJobError on emulated jobs ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The job's report end to end on CPU ranks (the emulator): a rank that
// skips a barrier and a signal never sent, in one process
// (tleCommInitAll, read directly) and across processes (tleCommInitRank,
// gathered through the bootstrap), and a rank whose process is killed (the
// watchdog's view). Each report must name the culprit, the ranks and the
// slot or signal word, as text and as JSON.
//
//===----------------------------------------------------------------------===//

#include "tle/barrier.h"
#include "tle/device.h"
#include "tle/emu.h"
#include "tle/signal.h"
#include "tle/tle.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tle;
using namespace tle::emu;
using nlohmann::json;

namespace {

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

LaunchOptions oneBlock() {
  LaunchOptions o;
  o.grid = {1, 1, 1};
  o.block = {32, 1, 1};
  return o;
}

/// tleCommGetJobError's document, sized by a first call with no buffer...
/// which gathers once: the second read is the thread's last report.
json jobError(tleComm_t comm, tleResult_t &status) {
  size_t needed = 0;
  status = tleCommGetJobError(comm, nullptr, 0, &needed);
  std::string buf(needed, '\0');
  EXPECT_EQ(tleCommGetJobError(nullptr, buf.data(), buf.size(), nullptr),
            tleSuccess);
  buf.resize(needed ? needed - 1 : 0);
  return json::parse(buf);
}

struct InProcRanks {
  explicit InProcRanks(int n) : comms(n) {
    tleConfig_t config = TLE_CONFIG_INITIALIZER;
    status = tleCommInitAll(comms.data(), n, nullptr, &config);
  }
  ~InProcRanks() {
    for (tleComm_t c : comms)
      if (c)
        tleCommDestroy(c);
  }
  tleResult_t status;
  std::vector<tleComm_t> comms;
};

TEST(JobReport, SkippedBarrierInOneProcess) {
  InProcRanks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r =
      launch(ranks.comms.data(), 2, oneBlock(), [](int rank, void *dc) {
        if (rank == 1)
          return; // rank 1 skips the barrier
        flagcxIntraBarrierSyncS(dc, kCoopBlock, 5, false, kOrderAcqRel);
      });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  tleResult_t status;
  json j = jobError(ranks.comms[1], status); // any rank of the set
  EXPECT_EQ(status, tleDeadlock);
  EXPECT_EQ(j["culprit"], 1);
  EXPECT_EQ(j["ranks"][0]["fate"], "waiting");
  EXPECT_EQ(j["ranks"][0]["slot"], 5);
  EXPECT_EQ(j["ranks"][0]["missing"], json::array({1}));
  EXPECT_EQ(j["ranks"][1]["fate"], "exited");
  std::string text = j["report"];
  // The emulator's deadlock record names no call.
  EXPECT_TRUE(contains(text, "\n  rank 0 block 0 thread 0 waits in a barrier "
                             "wait on slot 5 for epoch 1; missing peers: 1 "
                             "(deadlock)\n"))
      << text;
  EXPECT_TRUE(contains(text, "likely culprit: rank 1 never arrived at slot 5 "
                             "epoch 1 (rank 0 waits for it): it left the "
                             "kernel without it"))
      << text;
  EXPECT_EQ(std::string(tleGetLastErrorDetail()),
            "tleCommGetJobError: " + text);
  // Read, not cleared: the rank's own record is still there.
  tleErrorInfo info{};
  EXPECT_EQ(tleCommGetError(ranks.comms[0], &info), tleDeadlock);
  EXPECT_EQ(info.slot, 5u);
}

TEST(JobReport, AnEmulatorDeadlockNamesTheWaitsLine) {
  // The emulator writes a deadlock's record itself: it names the waiter's
  // source location (here the typed call's line) as a site.
  InProcRanks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  const int line = __LINE__ + 4;
  LaunchResult r =
      launch(ranks.comms.data(), 2, oneBlock(), [](int rank, void *dc) {
        if (rank == 1) // rank 0 never signals word 3
          tle::signalWait(dc, 3, 1, kCoopBlock, kOrderAcquire);
      });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  tleResult_t status;
  json j = jobError(ranks.comms[0], status);
  std::string site = std::string(__FILE__) + ":" + std::to_string(line);
  EXPECT_EQ(j["ranks"][1]["site"], site);
  EXPECT_TRUE(contains(j["report"], " at " + site + " on signal 3 of rank 1"))
      << j["report"];
}

TEST(JobReport, SignalNeverSentInOneProcess) {
  InProcRanks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r =
      launch(ranks.comms.data(), 2, oneBlock(), [](int rank, void *dc) {
        if (rank == 1) // rank 0 never signals word 3
          flagcxDevWaitSignal(dc, 3, 1, 64, 0, kCoopBlock, kOrderAcquire);
      });
  ASSERT_EQ(r.result, tleDeadlock) << r.message;
  tleResult_t status;
  json j = jobError(ranks.comms[0], status);
  EXPECT_EQ(status, tleDeadlock);
  EXPECT_EQ(j["culprit"], 0);
  EXPECT_EQ(j["ranks"][1]["wait"], "signal");
  EXPECT_EQ(j["ranks"][1]["signal"], 3);
  EXPECT_EQ(j["ranks"][1]["wanted"], 1);
  EXPECT_TRUE(contains(j["report"], "\n  rank 1 block 0 thread 0 waits in a "
                                    "signal wait on signal 3 of rank 1 for a "
                                    "value >= 1 (it holds 0) (deadlock)\n"))
      << j["report"];
  EXPECT_TRUE(contains(j["why"], "signal 3 of rank 1 never reached 1 (it "
                                 "holds 0): a signal never sent; ranks that "
                                 "left the kernel: 0"))
      << j["why"];
}

TEST(JobReport, NoFailureIsSuccess) {
  InProcRanks ranks(2);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(ranks.comms.data(), 2, oneBlock(), [](int, void *dc) {
    flagcxIntraBarrierSyncS(dc, kCoopBlock, 0, false, kOrderAcqRel);
  });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  tleResult_t status;
  json j = jobError(ranks.comms[0], status);
  EXPECT_EQ(status, tleSuccess);
  EXPECT_EQ(j["failed"], false);
  char small[8];
  size_t needed = 0;
  EXPECT_EQ(tleCommGetJobError(ranks.comms[0], small, sizeof small, &needed),
            tleSuccess);
  EXPECT_EQ(std::string(small), "{\"faile"); // cut, NUL-terminated
  EXPECT_GT(needed, sizeof small);
  EXPECT_EQ(tleCommGetJobError(ranks.comms[0], nullptr, 4, &needed),
            tleInvalidArgument);
}

/// How a forked rank of a two-process job behaves. WaitsAt waits through
/// tleIntraBarrierSyncAt with the site kSite, TypedWaits through the typed
/// C++ API (whose site is its file:line).
enum class Role { Waits, Skips, Dies, Hangs, WaitsAt, TypedWaits };

const char *const kSite = "ring.mlir:21:5";

/// One rank in a forked child: joins, runs its part of one barrier on slot
/// 2 (the device timeout 300 ms), then writes tleCommGetJobError's
/// document to `path`. Exit status: the report's status, 100+ on setup. A
/// rank that hangs waits forever (timeout 0) on slot 4 instead.
[[noreturn]] void childRank(const tleUniqueId &id, int rank, Role role,
                            const std::string &path,
                            int64_t bootstrapMs = 10000) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.timeoutMs = role == Role::Hangs ? 0 : 300;
  config.bootstrapTimeoutMs = bootstrapMs;
  tleComm_t comm = nullptr;
  if (tleCommInitRank(&comm, 2, &id, rank, -1, &config) != tleSuccess)
    _exit(100);
  if (role == Role::Dies) {
    // Once its peer is in the wait (it launches right after the init both
    // finish; its deadline is 300 ms): a peer that died first could leave
    // the waiter no wait to give up.
    usleep(100000);
    _exit(0); // no goodbye: the watchdog's death
  }
  if (role == Role::Hangs)
    launch(&comm, 1, oneBlock(), [](int, void *dc) {
      flagcxIntraBarrierSyncS(dc, kCoopBlock, 4, false, kOrderAcqRel);
    });
  if (role == Role::Waits) {
    LaunchResult r = launch(&comm, 1, oneBlock(), [](int, void *dc) {
      flagcxIntraBarrierSyncS(dc, kCoopBlock, 2, false, kOrderAcqRel);
    });
    if (r.result == tleSuccess)
      _exit(101);
  }
  if (role == Role::WaitsAt || role == Role::TypedWaits) {
    LaunchResult r = launch(&comm, 1, oneBlock(), [role](int, void *dc) {
      if (role == Role::WaitsAt)
        tleIntraBarrierSyncAt(dc, kCoopBlock, 2, false, kOrderAcqRel,
                              tleSiteRegisterText(kSite));
      else
        tle::barrierSync(dc, kCoopBlock, 2, kOrderAcqRel);
    });
    if (r.result == tleSuccess)
      _exit(101);
  }
  size_t needed = 0;
  tleResult_t s = tleCommGetJobError(comm, nullptr, 0, &needed);
  std::string buf(needed, '\0');
  tleCommGetJobError(nullptr, buf.data(), buf.size(), nullptr);
  std::ofstream(path) << buf.c_str();
  tleCommDestroy(comm);
  _exit(s);
}

int waitChild(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

json readJson(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::remove(path.c_str());
  return json::parse(s.str());
}

std::string tempPath(const char *what) {
  return "/tmp/tle-jobreport-" + std::to_string(getpid()) + "-" + what;
}

TEST(JobReport, SkippedBarrierAcrossProcesses) {
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess) << tleGetLastErrorDetail();
  std::string p0 = tempPath("skip0"), p1 = tempPath("skip1");
  pid_t a = fork();
  if (a == 0)
    childRank(id, 0, Role::Waits, p0);
  pid_t b = fork();
  if (b == 0)
    childRank(id, 1, Role::Skips, p1);
  EXPECT_EQ(waitChild(a), tleTimeout);
  EXPECT_EQ(waitChild(b), tleTimeout); // rank 0's status, on every rank
  json j0 = readJson(p0), j1 = readJson(p1);
  // One exchange: both ranks hold the same picture.
  EXPECT_EQ(j0, j1);
  EXPECT_EQ(j0["culprit"], 1);
  EXPECT_EQ(j0["ranks"][0]["fate"], "waiting");
  EXPECT_EQ(j0["ranks"][0]["slot"], 2);
  EXPECT_EQ(j0["ranks"][0]["missing"], json::array({1}));
  EXPECT_EQ(j0["ranks"][1]["fate"], "exited");
  EXPECT_TRUE(contains(j0["report"],
                       "rank 0 block 0 thread 0 waits in "
                       "tle.device_intra_barrier (flagcxIntraBarrierSyncS) "
                       "on slot 2 for epoch 1; missing peers: 1 "
                       "(timed out after"))
      << j0["report"];
}

TEST(JobReport, TheSiteOfATimedOutWaitIsNamedAcrossProcesses) {
  // A compiled call's site (tleIntraBarrierSyncAt's immediate, registered
  // as tlec's table would be), then a typed API call's (its file:line).
  // Each process has its own table of sites; the gather carries each
  // record's text to the others.
  for (Role role : {Role::WaitsAt, Role::TypedWaits}) {
    tleUniqueId id;
    ASSERT_EQ(tleGetUniqueId(&id), tleSuccess) << tleGetLastErrorDetail();
    tleSiteRegisterText(kSite);
    std::string p0 = tempPath("site0"), p1 = tempPath("site1");
    pid_t a = fork();
    if (a == 0)
      childRank(id, 0, role, p0);
    pid_t b = fork();
    if (b == 0)
      childRank(id, 1, Role::Skips, p1);
    EXPECT_EQ(waitChild(a), tleTimeout);
    EXPECT_EQ(waitChild(b), tleTimeout);
    json j0 = readJson(p0), j1 = readJson(p1);
    EXPECT_EQ(j0["culprit"], 1);
    std::string site = j0["ranks"][0]["site"];
    if (role == Role::WaitsAt)
      EXPECT_EQ(site, kSite);
    else
      EXPECT_TRUE(contains(site, "JobReportTest.cpp:")) << site;
    // Rank 1's process never ran the typed call, so its table lacks the
    // line: rank 0 sends the text with its record, and both print it.
    EXPECT_EQ(j0, j1);
    EXPECT_TRUE(contains(j0["report"],
                         "rank 0 block 0 thread 0 waits in "
                         "tle.device_intra_barrier (flagcxIntraBarrierSyncS) "
                         "at " +
                             site + " on slot 2 for epoch 1; missing peers: 1"))
        << j0["report"];
  }
}

TEST(JobReport, ARankHungWithoutATimeoutIsSilent) {
  // Rank 1 blocks forever in a wait of its own (timeout 0), so it never
  // joins the exchange: after the bootstrap's deadline (1 s here) rank 0
  // reports it as silent, and as the culprit its wait misses.
  tleUniqueId id;
  ASSERT_EQ(tleGetUniqueId(&id), tleSuccess) << tleGetLastErrorDetail();
  std::string p0 = tempPath("silent0");
  pid_t a = fork();
  if (a == 0)
    childRank(id, 0, Role::Waits, p0, 1000);
  pid_t b = fork();
  if (b == 0)
    childRank(id, 1, Role::Hangs, "", 1000);
  EXPECT_EQ(waitChild(a), tleTimeout);
  kill(b, SIGKILL);
  EXPECT_EQ(waitChild(b), 200 + SIGKILL); // it was still blocked
  json j = readJson(p0);
  EXPECT_EQ(j["culprit"], 1);
  EXPECT_EQ(j["ranks"][1]["fate"], "silent");
  EXPECT_TRUE(contains(j["why"], "rank 1 never arrived at slot 2 epoch 1 "
                                 "(rank 0 waits for it): it does not answer"))
      << j["why"];
  EXPECT_TRUE(contains(j["report"], "rank 1 did not answer: blocked in a "
                                    "kernel without a TLE timeout (timeout "
                                    "0)"))
      << j["report"];
}

/// Rank 0 waits in the way `waiter` says while rank 1's process dies;
/// returns rank 0's job report and sets `status` to its exit status.
json reportOfAKilledPeer(Role waiter, const char *name, int &status) {
  tleUniqueId id;
  EXPECT_EQ(tleGetUniqueId(&id), tleSuccess) << tleGetLastErrorDetail();
  std::string p0 = tempPath(name);
  pid_t a = fork();
  if (a == 0)
    childRank(id, 0, waiter, p0);
  pid_t b = fork();
  if (b == 0)
    childRank(id, 1, Role::Dies, "");
  status = waitChild(a);
  EXPECT_EQ(waitChild(b), 0);
  return readJson(p0);
}

TEST(JobReport, AWaitThatGaveUpOnADeadPeerNamesItsSite) {
  // Rank 0 waits through a twin with a site. The watchdog's record says
  // who died; the wait that gave up adds where.
  int status = 0;
  json j = reportOfAKilledPeer(Role::WaitsAt, "deadsite0", status);
  EXPECT_EQ(status, tlePeerFailure);
  EXPECT_EQ(j["culprit"], 1);
  EXPECT_EQ(j["ranks"][0]["wait"], "peer_lost");
  EXPECT_EQ(j["ranks"][0]["site"], kSite);
  EXPECT_TRUE(contains(j["report"], std::string("rank 0 gave up its waits "
                                                "(the first at ") +
                                        kSite + ")"))
      << j["report"];
}

TEST(JobReport, KilledRankIsDeadInTheReport) {
  int status = 0;
  json j = reportOfAKilledPeer(Role::Waits, "dead0", status);
  EXPECT_TRUE(status == tleTimeout || status == tlePeerFailure) << status;
  EXPECT_EQ(j["culprit"], 1);
  EXPECT_EQ(j["ranks"][1]["fate"], "dead");
  EXPECT_TRUE(contains(j["why"], "rank 1 died")) << j["why"];
  // A wait that passed no call site leaves the watchdog's line as it was.
  EXPECT_TRUE(j["ranks"][0]["site"].is_null()) << j["ranks"][0]["site"];
}

} // namespace
