//===- OneSidedTest.cpp - FlagCX's put, get, counters and shadows ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs FlagCX's one-sided entry points of libtle's host build on emulated
// ranks: every unified put variant, put-value and get in a ring over INTRA
// for every group, where the receiver reads only after the signal (a
// dropped signal deadlocks, a signal before the data is a wrong value or a
// race the checker reports), the local counter gating the reuse of the
// source, get with flush, signal shadows, the net-handle forms (C and S)
// with FlagCX's CoopAny and Team structs, the WORLD and INTER teams of a
// 2x4 world reaching peers of this node, the team and coop helpers, and
// every bad argument as a located report with nothing copied.
//
//===----------------------------------------------------------------------===//

#include "EmuTestUtil.h"

#include "tle/device.h"

#include <cstring>
#include <functional>
#include <string>

using namespace tle;
using namespace tle::emu;
using namespace tle::emutest;

namespace {

constexpr uint32_t kThreads = 64;
constexpr uint32_t kRounds = 4;
/// Bytes each rank puts per round: not a multiple of 16, so the copy's
/// head and tail paths run too.
constexpr uint64_t kBytes = 1000;

std::string groupName(int g) {
  return g == kCoopThread ? "thread" : g == kCoopWarp ? "warp" : "block";
}

/// The calling thread's group: its index (which slice of the buffers it
/// moves) and whether it is the group's rank 0.
uint32_t groupIndex(int group) {
  uint32_t t = linearThreadId();
  return group == kCoopThread ? t : group == kCoopWarp ? t / 32 : 0;
}
uint32_t groups(int group) {
  return group == kCoopThread ? kThreads
         : group == kCoopWarp ? kThreads / 32
                              : 1;
}

/// A byte that names rank, round, group and position.
uint8_t pattern(int rank, uint32_t k, uint32_t g, uint64_t i) {
  return static_cast<uint8_t>(rank * 37 + k * 11 + g * 5 + i);
}

/// A read the race checker sees (kernels compiled by tlec report theirs;
/// a C++ test body reports its own).
uint8_t checkedRead(const uint8_t *p) {
  tleEmuAccess(p, 1, kAccessLoad, kOrderRelaxed, "the read");
  return *p;
}

enum class Variant {
  Put,
  RSigInc,
  RSigAdd,
  LCtrInc,
  RSigIncLCtrInc,
  RSigAddLCtrInc,
  NetS,
  NetC
};

struct RingCase {
  int ranks;
  int group;
  Variant variant;
};

std::string ringName(const testing::TestParamInfo<RingCase> &info) {
  static const char *v[] = {
      "put_wait",        "rsiginc",         "rsigadd", "lctrinc",
      "rsiginc_lctrinc", "rsigadd_lctrinc", "net_s",   "net_c"};
  return "n" + std::to_string(info.param.ranks) + "_" +
         groupName(info.param.group) + "_" +
         v[static_cast<int>(info.param.variant)];
}

class PutRing : public testing::TestWithParam<RingCase> {};

// Every rank puts kBytes per group per round into the next rank's buffer;
// the next rank waits for the signal (or, for the variants without one,
// for the put's own follow-up signal) and checks every byte. The source is
// rewritten each round only after the local counter (where the variant has
// one) says the previous put no longer needs it.
TEST_P(PutRing, DataArrivesBeforeTheSignal) {
  const RingCase c = GetParam();
  Ranks ranks(c.ranks, 64, -1, kThreads);
  ASSERT_EQ(ranks.status, tleSuccess) << tleGetLastErrorDetail();
  uint64_t slice = kBytes * groups(c.group);
  SymBuffer src(ranks, slice), dst(ranks, kRounds * slice);
  ASSERT_EQ(src.status, tleSuccess);
  ASSERT_EQ(dst.status, tleSuccess);
  std::vector<uint32_t> bad(c.ranks, 0);
  LaunchResult r = launch(
      ranks.comms.data(), c.ranks, shape({1, 1, 1}, {kThreads, 1, 1}),
      [&](int rank, void *dc) {
        int g = c.group;
        uint32_t gi = groupIndex(g);
        bool lead = g == kCoopThread ||
                    linearThreadId() % (g == kCoopWarp ? 32 : kThreads) == 0;
        int next = (rank + 1) % c.ranks;
        const void *s = src.handle(rank), *d = dst.handle(rank);
        auto *mine = static_cast<uint8_t *>(flagcxGetLocalPointerS(s, 0));
        auto *got = static_cast<const uint8_t *>(flagcxGetLocalPointerS(d, 0));
        const void *net = flagcxDevNetGetFromCommS(dc, 0);
        CoopAny coop;
        if (g == kCoopThread)
          flagcxCoopAnyInitThread(&coop);
        else if (g == kCoopWarp)
          flagcxCoopAnyInitWarp(&coop);
        else
          flagcxCoopAnyInitBlock(&coop);
        Team team;
        flagcxGetTeamIntra(dc, &team);
        uint32_t sig = gi, ctr = gi;
        for (uint32_t k = 0; k < kRounds; ++k) {
          if (lead)
            for (uint64_t i = 0; i < kBytes; ++i)
              mine[gi * kBytes + i] = pattern(rank, k, gi, i);
          flagcxCoopSyncS(g);
          uint64_t so = gi * kBytes, doff = k * slice + gi * kBytes;
          uint64_t v = k + 2;
          switch (c.variant) {
          case Variant::Put:
            flagcxDevPut(dc, d, doff, s, so, kBytes, kTeamIntra, next, 0, g,
                         kScopeSystem, kOrderRelease);
            flagcxDevSignalInc(dc, kTeamIntra, next, sig, 0, g, kScopeSystem);
            break;
          case Variant::RSigInc:
            flagcxDevPut_RSigInc(dc, d, doff, s, so, kBytes, kTeamIntra, next,
                                 0, g, kScopeSystem, kOrderRelaxed, sig);
            break;
          case Variant::RSigAdd:
            flagcxDevPut_RSigAdd(dc, d, doff, s, so, kBytes, kTeamIntra, next,
                                 0, g, kScopeSystem, kOrderAcqRel, sig, v);
            break;
          case Variant::LCtrInc:
            flagcxDevPut_LCtrInc(dc, d, doff, s, so, kBytes, kTeamIntra, next,
                                 0, g, kScopeSystem, kOrderRelease, ctr);
            flagcxDevSignalInc(dc, kTeamIntra, next, sig, 0, g, kScopeSystem);
            break;
          case Variant::RSigIncLCtrInc:
            flagcxDevPut_RSigInc_LCtrInc(dc, d, doff, s, so, kBytes, kTeamIntra,
                                         next, 0, g, kScopeSystem,
                                         kOrderRelease, sig, ctr);
            break;
          case Variant::RSigAddLCtrInc:
            flagcxDevPut_RSigAdd_LCtrInc(dc, d, doff, s, so, kBytes, kTeamIntra,
                                         next, 0, g, kScopeSystem,
                                         kOrderRelease, sig, v, ctr);
            break;
          case Variant::NetS:
            flagcxDevNetPutS_RSigInc_LCtrInc(net, dc, kTeamIntra, next, d, doff,
                                             s, so, kBytes, g, sig, ctr);
            break;
          case Variant::NetC:
            flagcxDevNetPut_RSigAdd_LCtrInc(net, &team, next, d, doff, s, so,
                                            kBytes, &coop, sig, v, ctr);
            break;
          }
          bool add = c.variant == Variant::RSigAdd ||
                     c.variant == Variant::RSigAddLCtrInc ||
                     c.variant == Variant::NetC;
          bool counts = c.variant != Variant::Put &&
                        c.variant != Variant::RSigInc &&
                        c.variant != Variant::RSigAdd;
          // What the signal reached after round k: 1 or v per round.
          uint64_t least = 0;
          for (uint32_t j = 0; j <= k; ++j)
            least += add ? j + 2 : 1;
          flagcxDevWaitSignal(dc, sig, least, 64, 0, g, kOrderAcquire);
          if (lead) {
            int prev = (rank + c.ranks - 1) % c.ranks;
            for (uint64_t i = 0; i < kBytes; ++i)
              if (checkedRead(got + doff + i) != pattern(prev, k, gi, i))
                ++bad[rank];
          }
          if (counts) {
            flagcxDevWaitCounter(dc, ctr, k + 1, 64, 0, g, kOrderAcquire);
            if (flagcxDevReadCounter(dc, ctr, 64, 0, kOrderRelaxed) != k + 1)
              ++bad[rank];
          }
          // The next round's source bytes are written only after every
          // member's share of this round's copy is done.
          flagcxCoopSyncS(g);
        }
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < c.ranks; ++q)
    EXPECT_EQ(bad[q], 0u) << "rank " << q;
}

std::vector<RingCase> ringCases() {
  std::vector<RingCase> out;
  for (int n : {2, 4})
    for (int g : {kCoopThread, kCoopWarp, kCoopBlock})
      for (int v = 0; v <= static_cast<int>(Variant::NetC); ++v)
        if (n == 2 || v % 3 == 0)
          out.push_back({n, g, static_cast<Variant>(v)});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Emu, PutRing, testing::ValuesIn(ringCases()),
                         ringName);

// A get reads the previous rank's buffer into this rank's; a barrier says
// the source was written, and each group's leader checks the whole share
// its members copied as soon as the call returns.
TEST(OneSided, GetMirrorsPut) {
  for (int g : {kCoopThread, kCoopWarp, kCoopBlock}) {
    Ranks ranks(3, 64, -1, kThreads);
    ASSERT_EQ(ranks.status, tleSuccess);
    SymBuffer src(ranks, kBytes * kThreads), dst(ranks, kBytes * kThreads);
    std::vector<uint32_t> bad(3, 0);
    LaunchResult r = launch(
        ranks.comms.data(), 3, shape({1, 1, 1}, {kThreads, 1, 1}),
        [&](int rank, void *dc) {
          uint32_t gi = groupIndex(g);
          auto *mine = static_cast<uint8_t *>(
              flagcxGetLocalPointerS(src.handle(rank), 0));
          for (uint64_t i = linearThreadId(); i < kBytes * kThreads;
               i += kThreads)
            mine[i] = pattern(rank, 0, 0, i);
          flagcxDevBarrierSync(dc, kTeamIntra, 0, 0, kCoopBlock, kOrderAcqRel,
                               kScopeSystem);
          int prev = (rank + 2) % 3;
          uint64_t off = gi * kBytes;
          flagcxDevGet(dc, src.handle(rank), off, dst.handle(rank), off, kBytes,
                       kTeamIntra, prev, 0, g, kScopeSystem, kOrderAcquire);
          // On this node the data has landed when the call returns, for
          // every member of the group (no flush needed).
          auto *got = static_cast<const uint8_t *>(
              flagcxGetLocalPointerS(dst.handle(rank), 0));
          for (uint64_t i = off; i < off + kBytes; ++i)
            if (linearThreadId() % (kThreads / groups(g)) == 0 &&
                checkedRead(got + i) != pattern(prev, 0, 0, i))
              ++bad[rank];
        });
    ASSERT_EQ(r.result, tleSuccess) << groupName(g) << ": " << r.message;
    for (int q = 0; q < 3; ++q)
      EXPECT_EQ(bad[q], 0u) << groupName(g) << " rank " << q;
  }
}

// Put-value: one word to the next rank and a signal; its shadow counts
// what this rank expects, and WaitSignalMeetShadow waits for it.
TEST(OneSided, PutValueAndShadows) {
  Ranks ranks(4, 64, -1, kThreads);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer buf(ranks, 8 * kRounds);
  std::vector<uint32_t> bad(4, 0);
  LaunchResult r = launch(
      ranks.comms.data(), 4, shape({1, 1, 1}, {32, 1, 1}),
      [&](int rank, void *dc) {
        int next = (rank + 1) % 4, prev = (rank + 3) % 4;
        const void *net = flagcxDevNetGetFromCommS(dc, 0);
        const auto *words = static_cast<const uint64_t *>(
            flagcxGetLocalPointerS(buf.handle(rank), 0));
        for (uint32_t k = 0; k < kRounds; ++k) {
          uint64_t value = 1000 * rank + k;
          // This rank expects one more signal; it tells the previous rank
          // it may put, and puts only when the next one said so: the value
          // cannot be there before the wait unless the wait waited.
          if (linearThreadId() == 0)
            flagcxDevIncreaseSignalShadow(dc, 0, 3, 1);
          flagcxDevSignalInc(dc, kTeamIntra, prev, 4, 0, kCoopWarp,
                             kScopeSystem);
          flagcxDevWaitSignal(dc, 4, k + 1, 64, 0, kCoopWarp, kOrderAcquire);
          if (k % 3 == 0)
            flagcxDevPutValue_RSigInc(dc, buf.handle(rank), 8 * k, value,
                                      kTeamIntra, next, 0, kCoopWarp,
                                      kScopeSystem, kOrderRelease, 3);
          else if (k % 3 == 1)
            flagcxDevPutValue_RSigAdd(dc, buf.handle(rank), 8 * k, value,
                                      kTeamIntra, next, 0, kCoopWarp,
                                      kScopeSystem, kOrderRelease, 3, 1);
          else
            flagcxDevNetPutValueS_RSigInc(net, dc, kTeamIntra, next,
                                          buf.handle(rank), 8 * k, value,
                                          kCoopWarp, 3);
          if (k % 2)
            flagcxDevWaitSignalMeetShadow(dc, 0, 3, 64, kCoopWarp,
                                          kOrderAcquire);
          else
            flagcxDevNetWaitSignalMeetShadowS(net, kCoopWarp, 3, 64,
                                              kOrderAcquire);
          tleEmuAccess(&words[k], 8, kAccessLoad, kOrderRelaxed, "the read");
          if (words[k] != 1000u * prev + k)
            ++bad[rank];
        }
        flagcxCoopSyncS(kCoopWarp);
        // A reset zeroes the signal and its shadow: a wait meets it at 0.
        if (linearThreadId() == 0)
          flagcxDevResetSignal(dc, 0, 3);
        flagcxDevWaitSignalMeetShadow(dc, 0, 3, 64, kCoopWarp, kOrderAcquire);
        if (flagcxDevReadSignal(dc, 3, 64, 0, kOrderRelaxed) != 0)
          ++bad[rank];
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 4; ++q)
    EXPECT_EQ(bad[q], 0u) << "rank " << q;
}

// Without the wait for the put's signal the read races with the put's
// stores, and the checker says so, naming the receiving buffer.
TEST(OneSided, ReadBeforeTheSignalIsARace) {
  Ranks ranks(2, 64, -1, 32);
  ASSERT_EQ(ranks.status, tleSuccess);
  SymBuffer src(ranks, 64), dst(ranks, 64);
  LaunchResult r =
      launch(ranks.comms.data(), 2, shape({1, 1, 1}, {32, 1, 1}),
             [&](int rank, void *dc) {
               if (rank == 0)
                 flagcxDevPut_RSigInc(dc, dst.handle(0), 0, src.handle(0), 0,
                                      64, kTeamIntra, 1, 0, kCoopWarp,
                                      kScopeSystem, kOrderRelease, 0);
               else
                 checkedRead(static_cast<const uint8_t *>(
                                 flagcxGetLocalPointerS(dst.handle(1), 0)) +
                             linearThreadId());
             });
  EXPECT_NE(r.result, tleSuccess);
  EXPECT_TRUE(contains(r.message, "data race")) << r.message;
}

// Every bad argument of a put is a located report (function, value,
// bound), and nothing reaches the peer.
TEST(OneSided, BadArgumentsAreReportedBeforeAnyByteMoves) {
  struct Case {
    const char *what;
    std::function<void(void *, const void *, const void *)> call;
    const char *expect;
  };
  std::vector<Case> cases = {
      {"past the end",
       [](void *dc, const void *d, const void *s) {
         flagcxDevPut(dc, d, 40, s, 0, 32, kTeamIntra, 1, 0, kCoopThread,
                      kScopeSystem, kOrderRelaxed);
       },
       "offset 72 is past the end of a 64-byte buffer"},
      {"source past the end",
       [](void *dc, const void *d, const void *s) {
         flagcxDevGet(dc, s, 60, d, 0, 8, kTeamIntra, 1, 0, kCoopThread,
                      kScopeSystem, kOrderRelaxed);
       },
       "offset 68 is past the end of a 64-byte buffer"},
      {"peer",
       [](void *dc, const void *d, const void *s) {
         flagcxDevPut(dc, d, 0, s, 0, 8, kTeamIntra, 2, 0, kCoopThread,
                      kScopeSystem, kOrderRelaxed);
       },
       "peer 2 is out of range"},
      {"signal",
       [](void *dc, const void *d, const void *s) {
         flagcxDevPut_RSigInc(dc, d, 0, s, 0, 8, kTeamIntra, 1, 0, kCoopThread,
                              kScopeSystem, kOrderRelaxed, 99);
       },
       "signal 99 out of range"},
      {"counter",
       [](void *dc, const void *d, const void *s) {
         flagcxDevPut_LCtrInc(dc, d, 0, s, 0, 8, kTeamIntra, 1, 0, kCoopThread,
                              kScopeSystem, kOrderRelaxed, 64);
       },
       "counter 64 is out of range"},
      {"context",
       [](void *dc, const void *d, const void *s) {
         flagcxDevPut(dc, d, 0, s, 0, 8, kTeamIntra, 1, 4, kCoopThread,
                      kScopeSystem, kOrderRelaxed);
       },
       "context id 4 is out of range (the communicator has 4 network "
       "contexts"},
      {"misaligned value",
       [](void *dc, const void *d, const void *) {
         flagcxDevPutValue(dc, d, 4, 1, kTeamIntra, 1, 0, kCoopThread,
                           kScopeSystem, kOrderRelaxed);
       },
       "offset 4"},
  };
  for (const Case &c : cases) {
    Ranks ranks(2, 64, -1, 1);
    ASSERT_EQ(ranks.status, tleSuccess);
    SymBuffer src(ranks, 64), dst(ranks, 64);
    std::memset(static_cast<char *>(flagcxGetLocalPointerS(src.handle(0), 0)),
                0x5a, 64);
    LaunchResult r = launch(ranks.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}),
                            [&](int rank, void *dc) {
                              if (rank == 0)
                                c.call(dc, dst.handle(0), src.handle(0));
                            });
    EXPECT_NE(r.result, tleSuccess) << c.what;
    EXPECT_TRUE(contains(r.message, c.expect)) << c.what << ": " << r.message;
    EXPECT_TRUE(contains(r.message, "rank 0")) << c.what << ": " << r.message;
    const auto *peer =
        static_cast<const uint8_t *>(flagcxGetLocalPointerS(dst.handle(1), 0));
    for (int i = 0; i < 64; ++i)
      ASSERT_EQ(peer[i], 0) << c.what << ": byte " << i << " was written";
  }
}

// The team, coop and pointer helpers on a 2x4 world: FlagCX's Team
// layout, rank conversions, peer pointers null past this node, the
// multicast pointer null, data type sizes.
TEST(OneSided, TeamsCoopsAndPointers) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.ranksPerNode = 4;
  std::vector<tleComm_t> comms(8);
  ASSERT_EQ(tleCommInitAll(comms.data(), 8, nullptr, &config), tleSuccess)
      << tleGetLastErrorDetail();
  std::vector<tleMem_t> mems(8);
  std::vector<void *> handles(8);
  for (int n = 0; n < 2; ++n)
    ASSERT_EQ(tleMemAllocAll(&comms[4 * n], 4, 64, &mems[4 * n]), tleSuccess);
  for (int q = 0; q < 8; ++q)
    tleMemGetHandle(mems[q], &handles[q]);
  std::vector<uint32_t> bad(8, 0);
  LaunchResult r = launch(
      comms.data(), 8, shape({1, 1, 1}, {64, 1, 1}), [&](int rank, void *dc) {
        auto check = [&](bool ok) { bad[rank] += !ok; };
        int node = rank / 4, local = rank % 4;
        Team t;
        flagcxGetTeamIntra(dc, &t);
        check(t.nRanks == 4 && t.rank == local && t.stride == 1);
        flagcxGetTeamInter(dc, &t);
        check(t.nRanks == 2 && t.rank == node && t.stride == 4);
        check(flagcxTeamRankToWorldC(dc, &t, 1 - node) ==
              (1 - node) * 4 + local);
        check(flagcxTeamRankToIntraC(dc, &t, node) == local);
        flagcxGetTeamWorld(dc, &t);
        check(t.nRanks == 8 && t.rank == rank && t.stride == 1);
        check(flagcxTeamRankToIntraS(dc, kTeamWorld, 5) == 5 - node * 4);
        check(flagcxTeamRankToWorldS(dc, kTeamIntra, 2) == node * 4 + 2);
        const void *m = handles[rank];
        check(flagcxGetPeerPointerS(m, 8, dc, kTeamWorld, node * 4 + 3, 1) ==
              flagcxGetIntraPointerS(m, 8, 3));
        check(flagcxGetPeerPointerS(m, 8, dc, kTeamInter, 1 - node, 0) ==
              nullptr);
        flagcxGetTeamIntra(dc, &t);
        check(flagcxGetPeerPointerC(m, 0, &t, 2, 2) ==
              flagcxGetIntraPointerC(m, 0, 2));
        check(flagcxGetLocalPointerC(m, 4) == flagcxGetLocalPointerS(m, 4));
        check(flagcxGetMulticastPointerS(m, 0, dc) == nullptr);
        check(flagcxGetMulticastPointerC(m, 0, dc) == nullptr);
        check(flagcxDataTypeSizeDevice(9) == 2 &&
              flagcxDataTypeSizeDevice(8) == 8 &&
              flagcxDataTypeSizeDevice(10) == 0);
        uint32_t tid = linearThreadId();
        check(flagcxCoopThreadRankS(kCoopWarp) == static_cast<int>(tid % 32));
        check(flagcxCoopSizeS(kCoopBlock) == 64);
        check(flagcxCoopThreadRankExS(kCoopLanes, 0xf0f0f0f0u, 0, 0) ==
              __builtin_popcount(0xf0f0f0f0u & ((1u << (tid % 32)) - 1)));
        check(flagcxCoopSizeExS(kCoopTileSpan, 1, 1, 0) == 32);
        CoopAny c;
        flagcxCoopAnyInitTileSpan(&c, 0, 2, 0);
        check(flagcxCoopSizeC(&c) == 64 &&
              flagcxCoopThreadRankC(&c) == static_cast<int>(tid));
        flagcxCoopSyncC(&c);
        flagcxCoopSyncExS(kCoopLanes, ~0u, 0, 0);
        // A barrier session per team, through the net handle.
        DevNet net;
        flagcxDevNetInitC(&net, dc, 0);
        FlagcxSession s;
        flagcxCoopAnyInitBlock(&c);
        flagcxIntraBarrierSessionInit(&s, &c, dc, nullptr, 1, false);
        flagcxIntraBarrierSessionSync(&s, kOrderAcqRel);
        flagcxInterBarrierSessionInit(&s, &c, &net, nullptr, 1);
        flagcxInterBarrierSessionSync(&s, kOrderAcqRel, 0);
        flagcxWorldBarrierSessionInit(&s, &c, TeamTagWorld{}, &net, 1, false);
        flagcxWorldBarrierSessionSync(&s, kOrderAcqRel, 0);
        flagcxWorldBarrierSyncS(&net, kCoopBlock, 2, false, kOrderAcqRel, 0);
        flagcxInterBarrierSyncS(&net, kCoopBlock, 2, kOrderAcqRel, 0);
        // INTER and WORLD signals through the net (the emulator's network).
        flagcxDevNetSignalSigIncS(&net, dc, kTeamInter, 1 - node, kCoopBlock,
                                  5);
        flagcxDevNetWaitSignalS(&net, kCoopBlock, 5, 1, 64, kOrderAcquire);
        // A WORLD put to a peer of this node takes the peer pointer.
        int peer = node * 4 + (local + 1) % 4;
        flagcxDevPut_RSigInc(dc, m, 32, m, 0, 8, kTeamWorld, peer, 0,
                             kCoopBlock, kScopeSystem, kOrderRelease, 6);
        flagcxDevWaitSignal(dc, 6, 1, 64, 0, kCoopBlock, kOrderAcquire);
        check(flagcxDevNetSend(&net, &c, m, 0, 1, 0, 0) != 0);
      });
  EXPECT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 8; ++q)
    EXPECT_EQ(bad[q], 0u) << "rank " << q;
  for (tleMem_t m : mems)
    tleMemFree(m);
  for (tleComm_t c : comms)
    tleCommDestroy(c);
}

/// A write the race checker sees.
void checkedWrite(uint8_t *p, uint8_t v) {
  tleEmuAccess(p, 1, kAccessStore, kOrderRelaxed, "the write");
  *p = v;
}

/// A world of `nodes` simulated nodes of `perNode` ranks with one buffer
/// pair per node (tleMemAllocAll per node, in the same order on every
/// node: the k-th buffers of the nodes are one world buffer to the
/// network).
struct World {
  World(int nodes, int perNode, size_t bytes) : nodes(nodes), perNode(perNode) {
    tleConfig_t config = TLE_CONFIG_INITIALIZER;
    config.ranksPerNode = static_cast<uint32_t>(perNode);
    config.nSignals = 8;
    int n = nodes * perNode;
    comms.resize(n);
    src.resize(n);
    dst.resize(n);
    status = tleCommInitAll(comms.data(), n, nullptr, &config);
    for (int k = 0; k < nodes && status == tleSuccess; ++k) {
      status = tleMemAllocAll(&comms[k * perNode], perNode, bytes,
                              &src[k * perNode]);
      if (status == tleSuccess)
        status = tleMemAllocAll(&comms[k * perNode], perNode, bytes,
                                &dst[k * perNode]);
    }
    for (int q = 0; q < n && status == tleSuccess; ++q) {
      void *h;
      tleMemGetHandle(src[q], &h);
      srcH.push_back(h);
      tleMemGetHandle(dst[q], &h);
      dstH.push_back(h);
    }
  }
  ~World() {
    for (auto *v : {&src, &dst})
      for (tleMem_t m : *v)
        if (m)
          tleMemFree(m);
    for (tleComm_t c : comms)
      if (c)
        tleCommDestroy(c);
  }
  int nodes, perNode;
  tleResult_t status;
  std::vector<tleComm_t> comms;
  std::vector<tleMem_t> src, dst;
  std::vector<void *> srcH, dstH;
};

struct NetCase {
  int nodes, perNode;
  int team; ///< kTeamInter or kTeamWorld
};

class NetRing : public testing::TestWithParam<NetCase> {};

// Over the simulated network: each rank puts to the same local rank of the
// next node (INTER: peer = next node; WORLD: its world rank) with a remote
// signal and a local counter, the receiver reads after the signal, the
// sender rewrites its source only after the counter; then every rank gets
// the previous node's copy back and reads it after a flush. Every access is
// race-checked: a signal, counter or flush that does not order what it must
// is a race (or a wrong byte), not a lucky pass.
TEST_P(NetRing, PutSignalCounterGetFlush) {
  const NetCase c = GetParam();
  constexpr uint64_t kN = 96;
  World w(c.nodes, c.perNode, 2 * kN * kRounds);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  int n = c.nodes * c.perNode;
  std::vector<uint32_t> bad(n, 0);
  LaunchResult r = launch(
      w.comms.data(), n, shape({1, 1, 1}, {32, 1, 1}), [&](int rank, void *dc) {
        int node = rank / c.perNode, local = rank % c.perNode;
        int nextNode = (node + 1) % c.nodes,
            prevNode = (node + c.nodes - 1) % c.nodes;
        int peer =
            c.team == kTeamInter ? nextNode : nextNode * c.perNode + local;
        int from = prevNode * c.perNode + local;
        auto *src =
            static_cast<uint8_t *>(flagcxGetLocalPointerS(w.srcH[rank], 0));
        auto *dst =
            static_cast<uint8_t *>(flagcxGetLocalPointerS(w.dstH[rank], 0));
        bool lead = linearThreadId() == 0;
        for (uint32_t k = 0; k < kRounds; ++k) {
          if (lead)
            for (uint64_t i = 0; i < kN; ++i)
              checkedWrite(src + i, pattern(rank, k, 0, i));
          flagcxCoopSyncS(kCoopWarp);
          flagcxDevPut_RSigInc_LCtrInc(dc, w.dstH[rank], k * kN, w.srcH[rank],
                                       0, kN, c.team, peer, 0, kCoopWarp,
                                       kScopeSystem, kOrderRelease, 1, 2);
          flagcxDevWaitSignal(dc, 1, k + 1, 64, 0, kCoopWarp, kOrderAcquire);
          if (lead)
            for (uint64_t i = 0; i < kN; ++i)
              if (checkedRead(dst + k * kN + i) != pattern(from, k, 0, i))
                ++bad[rank];
          // The source may be rewritten once the counter says so.
          flagcxDevWaitCounter(dc, 2, k + 1, 64, 0, kCoopWarp, kOrderAcquire);
        }
        // Get the previous node's last source back, into the second half.
        int getPeer = c.team == kTeamInter ? prevNode : from;
        flagcxDevGet(dc, w.srcH[rank], 0, w.dstH[rank], kRounds * kN, kN,
                     c.team, getPeer, 0, kCoopWarp, kScopeSystem,
                     kOrderAcquire);
        flagcxDevFlush(dc, 0, kCoopWarp, kOrderAcqRel);
        if (lead)
          for (uint64_t i = 0; i < kN; ++i)
            if (checkedRead(dst + kRounds * kN + i) !=
                pattern(from, kRounds - 1, 0, i))
              ++bad[rank];
        // The net forms: a put-value and a counter-only signal.
        const void *net = flagcxDevNetGetFromCommS(dc, 0);
        flagcxDevNetPutValueS_RSigInc(net, dc, c.team, peer, w.dstH[rank],
                                      2 * kN * kRounds - 8, 7000 + rank,
                                      kCoopWarp, 3);
        flagcxDevNetWaitSignalS(net, kCoopWarp, 3, 1, 64, kOrderAcquire);
        const uint8_t *last = dst + 2 * kN * kRounds - 8;
        tleEmuAccess(last, 8, kAccessLoad, kOrderRelaxed, "the read");
        uint64_t v;
        std::memcpy(&v, last, 8);
        if (v != 7000u + from)
          ++bad[rank];
        flagcxDevNetSignalCtrIncS(net, dc, c.team, peer, kCoopWarp, 4);
        flagcxDevNetWaitCounterS(net, kCoopWarp, 4, 1, 64, kOrderAcquire);
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < n; ++q)
    EXPECT_EQ(bad[q], 0u) << "rank " << q;
}

INSTANTIATE_TEST_SUITE_P(
    Emu, NetRing,
    testing::Values(NetCase{2, 4, kTeamInter}, NetCase{2, 4, kTeamWorld},
                    NetCase{4, 8, kTeamInter}, NetCase{4, 8, kTeamWorld}),
    [](const testing::TestParamInfo<NetCase> &i) {
      return std::to_string(i.param.nodes) + "x" +
             std::to_string(i.param.perNode) + "_" +
             (i.param.team == kTeamInter ? "inter" : "world");
    });

// What the network's ordering forbids, each a race the checker reports:
// reading a put's data before its signal, overwriting a put's source
// before its local counter, reading a get's data before the flush.
TEST(OneSided, NetworkMisusesAreRaces) {
  enum Misuse { ReadEarly, ReuseEarly, GetNoFlush };
  for (Misuse m : {ReadEarly, ReuseEarly, GetNoFlush}) {
    World w(2, 1, 64);
    ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
    LaunchResult r = launch(
        w.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}),
        [&](int rank, void *dc) {
          auto *src =
              static_cast<uint8_t *>(flagcxGetLocalPointerS(w.srcH[rank], 0));
          auto *dst =
              static_cast<uint8_t *>(flagcxGetLocalPointerS(w.dstH[rank], 0));
          if (m == GetNoFlush) {
            if (rank == 0) {
              flagcxDevGet(dc, w.srcH[0], 0, w.dstH[0], 0, 8, kTeamInter, 1, 0,
                           kCoopThread, kScopeSystem, kOrderAcquire);
              checkedRead(dst);
              flagcxDevFlush(dc, 0, kCoopThread, kOrderAcqRel);
            }
            return;
          }
          if (rank == 0) {
            flagcxDevPut_RSigInc_LCtrInc(dc, w.dstH[0], 0, w.srcH[0], 0, 8,
                                         kTeamInter, 1, 0, kCoopThread,
                                         kScopeSystem, kOrderRelease, 0, 0);
            if (m == ReuseEarly)
              checkedWrite(src, 1);
            flagcxDevWaitCounter(dc, 0, 1, 64, 0, kCoopThread, kOrderAcquire);
          } else {
            if (m == ReadEarly)
              checkedRead(dst);
            flagcxDevWaitSignal(dc, 0, 1, 64, 0, kCoopThread, kOrderAcquire);
          }
        });
    EXPECT_NE(r.result, tleSuccess) << m;
    EXPECT_TRUE(contains(r.message, "data race")) << m << ": " << r.message;
  }
}

// FlagCX's network contexts: each of the communicator's four (the default)
// has its own signal words, counters and shadows. On a 2x4 world every
// rank puts one slice per context to the same local rank of the other node
// (WORLD) and to its intra neighbour (INTRA), each with the remote signal
// 1 and the local counter 2 of that context, and waits on that context's
// signal before it reads the slice: a put whose signal landed in another
// context's word (or context 0's) leaves the wait short (a deadlock) or
// the word at a wrong count. The net handle of a context waits and reads
// that context's words; a shadow increased in one context is not another's.
TEST(OneSided, NetworkContextsHaveTheirOwnWords) {
  constexpr uint64_t kN = 40;
  constexpr uint32_t kContexts = 4;
  World w(2, 4, 2 * kN * kContexts);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  std::vector<uint32_t> bad(8, 0);
  LaunchResult r = launch(
      w.comms.data(), 8, shape({1, 1, 1}, {32, 1, 1}), [&](int rank, void *dc) {
        int node = rank / 4, local = rank % 4;
        int far = (1 - node) * 4 + local; // WORLD peer, other node
        int near = (local + 1) % 4, from = (local + 3) % 4; // INTRA ring
        auto *src =
            static_cast<uint8_t *>(flagcxGetLocalPointerS(w.srcH[rank], 0));
        auto *dst =
            static_cast<uint8_t *>(flagcxGetLocalPointerS(w.dstH[rank], 0));
        bool lead = linearThreadId() == 0;
        if (lead)
          for (uint32_t c = 0; c < kContexts; ++c)
            for (uint64_t i = 0; i < kN; ++i)
              checkedWrite(src + c * kN + i, pattern(rank, c, 0, i));
        flagcxCoopSyncS(kCoopWarp);
        for (uint32_t c = 0; c < kContexts; ++c) {
          flagcxDevPut_RSigInc_LCtrInc(
              dc, w.dstH[rank], c * kN, w.srcH[rank], c * kN, kN, kTeamWorld,
              far, c, kCoopWarp, kScopeSystem, kOrderRelease, 1, 2);
          flagcxDevPut_RSigInc_LCtrInc(dc, w.dstH[rank], (kContexts + c) * kN,
                                       w.srcH[rank], c * kN, kN, kTeamIntra,
                                       near, c, kCoopWarp, kScopeSystem,
                                       kOrderRelease, 1, 2);
        }
        for (uint32_t c = 0; c < kContexts; ++c) {
          // Two adds per context: the far put's and the near one's.
          const void *net = flagcxDevNetGetFromCommS(dc, c);
          flagcxDevNetWaitSignalS(net, kCoopWarp, 1, 2, 64, kOrderAcquire);
          if (lead)
            for (uint64_t i = 0; i < kN; ++i) {
              if (checkedRead(dst + c * kN + i) != pattern(far, c, 0, i))
                ++bad[rank];
              if (checkedRead(dst + (kContexts + c) * kN + i) !=
                  pattern(node * 4 + from, c, 0, i))
                ++bad[rank];
            }
          flagcxDevWaitCounter(dc, 2, 2, 64, c, kCoopWarp, kOrderAcquire);
          if (lead &&
              (flagcxDevReadSignal(dc, 1, 64, c, kOrderRelaxed) != 2 ||
               flagcxDevNetReadCounterS(net, 2, 64, kOrderRelaxed) != 2))
            ++bad[rank];
        }
        // A shadow of context 2 is not context 0's: context 0's wait meets
        // its own (0) at once, context 2's needs the signal's third add.
        if (lead)
          flagcxDevIncreaseSignalShadow(dc, 2, 1, 3);
        flagcxCoopSyncS(kCoopWarp);
        flagcxDevWaitSignalMeetShadow(dc, 0, 1, 64, kCoopWarp, kOrderAcquire);
        flagcxDevSignalInc(dc, kTeamIntra, local, 1, 2, kCoopWarp,
                           kScopeSystem);
        flagcxDevWaitSignalMeetShadow(dc, 2, 1, 64, kCoopWarp, kOrderAcquire);
        if (lead && (flagcxDevReadSignal(dc, 1, 64, 0, kOrderRelaxed) != 2 ||
                     flagcxDevReadSignal(dc, 1, 64, 2, kOrderRelaxed) != 3))
          ++bad[rank];
        // A reset of context 3's word leaves context 1's.
        flagcxCoopSyncS(kCoopWarp);
        if (lead)
          flagcxDevResetSignal(dc, 3, 1);
        flagcxCoopSyncS(kCoopWarp);
        if (lead && (flagcxDevReadSignal(dc, 1, 64, 3, kOrderRelaxed) != 0 ||
                     flagcxDevReadSignal(dc, 1, 64, 1, kOrderRelaxed) != 2))
          ++bad[rank];
      });
  ASSERT_EQ(r.result, tleSuccess) << r.message;
  for (int q = 0; q < 8; ++q)
    EXPECT_EQ(bad[q], 0u) << "rank " << q;
}

// A signal sent on one context does not end a wait on another: the
// emulator's deadlock report names the waited signal and its context.
TEST(OneSided, AWaitOnAnotherContextIsADeadlockNamingIt) {
  World w(2, 1, 64);
  ASSERT_EQ(w.status, tleSuccess) << tleGetLastErrorDetail();
  LaunchResult r = launch(
      w.comms.data(), 2, shape({1, 1, 1}, {1, 1, 1}), [&](int rank, void *dc) {
        if (rank == 0)
          flagcxDevSignalInc(dc, kTeamWorld, 1, 5, 0, kCoopThread,
                             kScopeSystem);
        else
          flagcxDevWaitSignal(dc, 5, 1, 64, 2, kCoopThread, kOrderAcquire);
      });
  EXPECT_NE(r.result, tleSuccess);
  EXPECT_TRUE(contains(r.message, "signal 5 of context 2")) << r.message;
}

} // namespace
