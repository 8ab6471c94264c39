//===- ErrorTest.cpp - Status strings and the device error record ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every status has a message; the last-error detail is per thread; and
// tleCommGetError turns a record written by the device into the documented
// one-line message, then clears it. The records here are written by hand
// into the host-visible ErrorRecord the DevComm points at (the emulator's
// DevErrorTest drives every code through the device library itself).
//
//===----------------------------------------------------------------------===//

#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

namespace {

TEST(ErrorTest, EveryResultHasItsOwnString) {
  std::set<std::string> seen;
  for (int r = 0; r < tleNumResults; ++r) {
    std::string s = tleGetErrorString(static_cast<tleResult_t>(r));
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.find("unknown"), std::string::npos) << r;
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(tleNumResults));
  EXPECT_STREQ(tleGetErrorString(static_cast<tleResult_t>(99)),
               "unknown tleResult_t");
}

// tleIndexOutOfRange is also the result of a signal index >= nSignals; its
// text used to name barrier slots alone.
TEST(ErrorTest, IndexOutOfRangeNamesSignalsToo) {
  EXPECT_STREQ(tleGetErrorString(tleIndexOutOfRange),
               "barrier slot or signal index out of range");
}

TEST(ErrorTest, DetailIsPerThread) {
  EXPECT_EQ(tleCommInitAll(nullptr, 1, nullptr, nullptr), tleInvalidArgument);
  std::string mine = tleGetLastErrorDetail();
  EXPECT_EQ(mine, "tleCommInitAll: outComms is NULL");
  std::string other = "unset";
  std::thread([&] { other = tleGetLastErrorDetail(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(std::string(tleGetLastErrorDetail()), mine);
}

class ErrorRecordTest : public testing::Test {
protected:
  void SetUp() override {
    tleConfig_t cfg = TLE_CONFIG_INITIALIZER;
    cfg.nBarriers = 8;
    ASSERT_EQ(tleCommInitAll(&comm, 1, nullptr, &cfg), tleSuccess);
    void *p;
    ASSERT_EQ(tleCommGetDevComm(comm, &p), tleSuccess);
    record = static_cast<tle::DevComm *>(p)->error;
  }
  void TearDown() override { EXPECT_EQ(tleCommDestroy(comm), tleSuccess); }

  /// Writes a complete record, as the device library would.
  void write(uint32_t code, uint32_t slot, uint32_t epoch, uint32_t missing,
             uint32_t aux = 0,
             tle::abi::Fn fn = tle::abi::Fn::flagcxIntraBarrierSyncS) {
    record->code = code;
    record->rank = 1;
    record->slot = slot;
    record->epoch = epoch;
    record->missing = {};
    record->missing.words[0] = missing;
    record->block = 0;
    record->thread = 0;
    record->nBarriers = 8;
    record->aux = aux;
    record->elapsedNs = 1000000000ull + 123456;
    record->function = static_cast<uint32_t>(fn);
    __atomic_store_n(&record->state, 2u, __ATOMIC_RELEASE);
  }

  tleComm_t comm = nullptr;
  tle::ErrorRecord *record = nullptr;
};

TEST_F(ErrorRecordTest, NothingRecorded) {
  tleErrorInfo info;
  EXPECT_EQ(tleCommGetError(comm, &info), tleSuccess);
  EXPECT_EQ(info.result, tleSuccess);
  EXPECT_STREQ(info.message, "");
}

TEST_F(ErrorRecordTest, HalfWrittenRecordIsNotReported) {
  record->code = tle::kDevErrTimeout;
  record->state = 1;
  tleErrorInfo info;
  EXPECT_EQ(tleCommGetError(comm, &info), tleSuccess);
  EXPECT_EQ(info.result, tleSuccess);
}

TEST_F(ErrorRecordTest, TimeoutMessageAndClear) {
  write(tle::kDevErrTimeout, 3, 7, 0b101);
  tleErrorInfo info;
  EXPECT_EQ(tleCommGetError(comm, &info), tleTimeout);
  EXPECT_EQ(info.result, tleTimeout);
  EXPECT_STREQ(info.message,
               "rank 1 block 0 thread 0: tle.device_intra_barrier "
               "(flagcxIntraBarrierSyncS): barrier wait timed out after 1000 "
               "ms on slot 3 epoch 7; missing peers: 0,2");
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.slot, 3u);
  EXPECT_EQ(info.epoch, 7u);
  EXPECT_EQ(info.missingMask, 0b101u);
  EXPECT_EQ(info.nBarriers, 8u);
  EXPECT_EQ(info.elapsedNs, 1000123456ull);
  EXPECT_EQ(std::string(tleGetLastErrorDetail()),
            std::string("tleCommGetError: ") + info.message);
  // Read once: the record is cleared for the next launch.
  EXPECT_EQ(record->state, 0u);
  EXPECT_EQ(record->code, 0u);
  EXPECT_EQ(tleCommGetError(comm, &info), tleSuccess);
  EXPECT_EQ(info.result, tleSuccess);
}

TEST_F(ErrorRecordTest, IndexOutOfRange) {
  write(tle::kDevErrIndexOutOfRange, 70, 0, 0);
  tleErrorInfo info;
  EXPECT_EQ(tleCommGetError(comm, &info), tleIndexOutOfRange);
  EXPECT_STREQ(info.message,
               "rank 1 block 0 thread 0: tle.device_intra_barrier "
               "(flagcxIntraBarrierSyncS): barrier slot 70 out of range "
               "(nBarriers 8): create the communicator with nBarriers "
               "(n_barriers) > 70, or pass an index < 8");
  // In a grid of 80 blocks (the record's limit) slot 70 may be the default
  // slot, the program id: the message names the n_barriers to pass.
  record->limit = 80;
  write(tle::kDevErrIndexOutOfRange, 70, 0, 0);
  EXPECT_EQ(tleCommGetError(comm, &info), tleIndexOutOfRange);
  EXPECT_STREQ(info.message,
               "rank 1 block 0 thread 0: tle.device_intra_barrier "
               "(flagcxIntraBarrierSyncS): barrier slot 70 out of range "
               "(nBarriers 8): the default slot is the program id; this grid "
               "has 80 programs: pass n_barriers=80 (or more) to the "
               "communicator, or an index < 8");
}

TEST_F(ErrorRecordTest, BadCommDeadlockUnknown) {
  tleErrorInfo info;
  write(tle::kDevErrBadComm, 0, 0, 0, 9);
  EXPECT_EQ(tleCommGetError(comm, &info), tleInvalidComm);
  EXPECT_STREQ(info.message,
               "rank 1 block 0 thread 0: tle.device_intra_barrier "
               "(flagcxIntraBarrierSyncS): invalid communicator (size field 9; "
               "a freed, overwritten or foreign comm pointer)");
  write(tle::kDevErrDeadlock, 5, 2, 0b10);
  EXPECT_EQ(tleCommGetError(comm, &info), tleDeadlock);
  EXPECT_STREQ(info.message, "rank 1 block 0 thread 0: deadlock in a barrier "
                             "wait on slot 5 epoch 2; missing peers: 1");
  write(77, 0, 0, 0);
  EXPECT_EQ(tleCommGetError(comm, &info), tleInternalError);
  EXPECT_NE(std::string(info.message).find("unknown device error code 77"),
            std::string::npos);
}

/// Every bad-argument id has its sentence (ids and wording written out by
/// hand from docs/abi.md, not taken from the code under test).
TEST_F(ErrorRecordTest, EveryBadArgumentIsWorded) {
  struct Case {
    uint32_t argument;
    int64_t value;
    uint64_t limit;
    tle::abi::Fn fn;
    const char *message;
  } cases[] = {
      {1, 7, 4, tle::abi::Fn::flagcxIntraBarrierArriveS,
       "tle.device_intra_barrier (flagcxIntraBarrierArriveS): unknown "
       "cooperative group kind 7 (valid: 0..4)"},
      {2, -1, 4, tle::abi::Fn::tleIntraGridBarrierWaitS,
       "tle.device_intra_barrier (tleIntraGridBarrierWaitS): unknown memory "
       "order -1 (valid: 0..4)"},
      {3, 3, 2, tle::abi::Fn::flagcxDevBarrierSync,
       "tle.device_intra_barrier (flagcxDevBarrierSync): team kind 3 is not "
       "a team (valid: 0 intra, 1 inter, 2 world)"},
      {4, 9, 3, tle::abi::Fn::flagcxDevBarrierWait,
       "tle.device_intra_barrier (flagcxDevBarrierWait): unknown memory scope "
       "9 (valid: 0..3)"},
      {5, 3, 2, tle::abi::Fn::flagcxGetIntraPointerS,
       "tle.intra_pointer (flagcxGetIntraPointerS): peer 3 is out of range "
       "(the communicator has 2 ranks)"},
      {6, 44, 32, tle::abi::Fn::flagcxGetLocalPointerS,
       "tle.local_pointer (flagcxGetLocalPointerS): offset 44 is past the end "
       "of a 32-byte buffer"},
      {7, 3, 2, tle::abi::Fn::tleTritonBarrier,
       "tle.distributed_barrier (tleTritonBarrier): unknown barrier kind 3 "
       "(valid: 0..2)"},
  };
  for (const Case &c : cases) {
    write(tle::kDevErrBadArgument, 0, 0, 0, 0, c.fn);
    record->argument = c.argument;
    record->value = static_cast<uint64_t>(c.value);
    record->limit = c.limit;
    tleErrorInfo info;
    EXPECT_EQ(tleCommGetError(comm, &info), tleInvalidArgument);
    EXPECT_EQ(std::string(info.message),
              std::string("rank 1 block 0 thread 0: ") + c.message);
  }
}

} // namespace
