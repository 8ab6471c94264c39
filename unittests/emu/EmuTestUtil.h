//===- EmuTestUtil.h - Communicators and buffers for emulator tests -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// RAII owners for a tleCommInitAll set of emulated ranks and a symmetric
// buffer over it, with direct access to each rank's DevComm (plain host
// memory on the emulator, so tests can inspect epochs and inboxes and plant
// faults), shared by the barrier, stress and fault tests.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_UNITTESTS_EMU_EMUTESTUTIL_H
#define TLE_UNITTESTS_EMU_EMUTESTUTIL_H

#include "tle/detail/DevComm.h"
#include "tle/device.h"
#include "tle/emu.h"
#include "tle/tle.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tle::emutest {

/// All ranks of one node in this process.
class Ranks {
public:
  explicit Ranks(int n, uint32_t nBarriers = 64, int64_t timeoutMs = -1,
                 uint32_t nSignals = 64) {
    tleConfig_t config = TLE_CONFIG_INITIALIZER;
    config.nBarriers = nBarriers;
    config.timeoutMs = timeoutMs;
    config.nSignals = nSignals;
    comms.resize(n);
    status = tleCommInitAll(comms.data(), n, nullptr, &config);
    if (status != tleSuccess) {
      comms.clear();
      return;
    }
    for (tleComm_t c : comms) {
      void *dc = nullptr;
      tleCommGetDevComm(c, &dc);
      devComms.push_back(static_cast<DevComm *>(dc));
    }
  }
  ~Ranks() {
    for (tleComm_t c : comms)
      tleCommDestroy(c);
  }
  Ranks(const Ranks &) = delete;
  Ranks &operator=(const Ranks &) = delete;

  int size() const { return static_cast<int>(comms.size()); }
  DevComm *dev(int rank) const { return devComms[rank]; }

  tleResult_t status;
  std::vector<tleComm_t> comms;
  std::vector<DevComm *> devComms;
};

/// A symmetric buffer on every rank of a Ranks set.
class SymBuffer {
public:
  SymBuffer(const Ranks &ranks, size_t bytes) {
    mems.resize(ranks.size());
    status =
        tleMemAllocAll(ranks.comms.data(), ranks.size(), bytes, mems.data());
    if (status != tleSuccess) {
      mems.clear();
      return;
    }
    for (tleMem_t m : mems) {
      void *h = nullptr;
      tleMemGetHandle(m, &h);
      handles.push_back(h);
    }
  }
  ~SymBuffer() {
    for (tleMem_t m : mems)
      tleMemFree(m);
  }
  SymBuffer(const SymBuffer &) = delete;
  SymBuffer &operator=(const SymBuffer &) = delete;

  /// The kernel's `mem` argument for `rank`.
  const void *handle(int rank) const { return handles[rank]; }

  tleResult_t status;
  std::vector<tleMem_t> mems;
  std::vector<void *> handles;
};

/// Launch options with the given shape; the seed stays the default
/// (TLE_EMU_SEED or the clock) unless given. The race checker is on, so
/// that every barrier test also shows that the checker's edges and the
/// slot checks find nothing wrong in a correct kernel.
inline emu::LaunchOptions shape(emu::Dim3 grid, emu::Dim3 block) {
  emu::LaunchOptions o;
  o.grid = grid;
  o.block = block;
  o.raceCheck = true;
  return o;
}

/// Whether a report `s` says `part`.
inline bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// A forked rank's verdict (tle::test::spawn): `code` with what went wrong.
inline tleResult_t failed(std::string &detail, const std::string &what,
                          tleResult_t code = tleInternalError) {
  detail = what;
  return code;
}

/// The configuration of a forked rank's communicator: 8 slots, a device
/// deadline of `timeoutMs`, 10 s to bootstrap, `onError`.
inline tleConfig_t forkedConfig(int64_t timeoutMs, tleOnError_t onError) {
  tleConfig_t c = TLE_CONFIG_INITIALIZER;
  c.nBarriers = 8;
  c.timeoutMs = timeoutMs;
  c.bootstrapTimeoutMs = 10000;
  c.onError = onError;
  return c;
}

} // namespace tle::emutest

#endif // TLE_UNITTESTS_EMU_EMUTESTUTIL_H
