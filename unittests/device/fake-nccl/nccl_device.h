//===- nccl_device.h - A fake of NCCL's device API for CPU tests ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of NCCL 2.28's GPU-initiated networking that tle/impl/NetNccl.h
// calls (ncclDevComm, ncclTeamWorld, ncclGin's signal, readSignal and
// resetSignal), written from that API's declarations for NetTest.cpp, so
// that the library's network path runs on the CPU: every call is handed
// to fake_nccl::onCall (the test defines it) with the world rank and the
// signal id it names, and a signal add lands in the fake's own words of
// that rank, so a test sees which word of which peer a net add reaches.
// Not NCCL: one process, no engine, no memory model; the orders the
// library asks for are recorded, not enforced.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_UNITTESTS_FAKE_NCCL_DEVICE_H
#define TLE_UNITTESTS_FAKE_NCCL_DEVICE_H

#include <cstdint>
#include <stdexcept>

namespace cuda {
enum thread_scope {
  thread_scope_system,
  thread_scope_device,
  thread_scope_block,
  thread_scope_thread
};
enum memory_order {
  memory_order_relaxed,
  memory_order_consume,
  memory_order_acquire,
  memory_order_release,
  memory_order_acq_rel,
  memory_order_seq_cst
};
} // namespace cuda

typedef uint32_t ncclGinSignal_t;

/// A world of nRanks ranks, each with nSignals GIN signal words; this is
/// world rank `rank`'s view (NCCL's is opaque; the fake's is plain).
struct ncclDevComm {
  int rank, nRanks;
  uint32_t nSignals;
  uint64_t **signals; ///< [nRanks]: rank r's signal words
};

struct ncclTeam {
  int nRanks, rank, stride;
};

inline ncclTeam ncclTeamWorld(const ncclDevComm &comm) {
  return {comm.nRanks, comm.rank, 1};
}

struct ncclCoopThread {};
struct ncclGin_None {};
struct ncclGin_SignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};

namespace fake_nccl {
/// One call of the fake: what, on which world rank's word, and with what.
struct Call {
  enum Kind { SignalAdd, ReadSignal, ResetSignal } kind;
  int worldRank;
  ncclGinSignal_t signal;
  uint64_t value; ///< the add's value, or the value read
  cuda::thread_scope requiredRelease = cuda::thread_scope_thread;
  cuda::thread_scope givenRelease = cuda::thread_scope_thread;
  cuda::memory_order order = cuda::memory_order_relaxed;
};
/// Defined by the test.
void onCall(const Call &call);
} // namespace fake_nccl

/// ncclGin on context `context` of `comm`.
class ncclGin {
public:
  ncclGin(const ncclDevComm &comm, int context) : comm(comm) {
    if (context != 0)
      throw std::logic_error("fake ncclGin: only context 0 exists");
  }

  template <typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None>
  void
  signal(ncclTeam team, int peer, ncclGin_SignalAdd add,
         Coop = ncclCoopThread(), DescriptorSmem = ncclGin_None{},
         cuda::thread_scope requiredRelease = cuda::thread_scope_thread,
         cuda::thread_scope givenRelease = cuda::thread_scope_device) const {
    if (peer < 0 || peer >= team.nRanks)
      throw std::out_of_range("fake ncclGin::signal: peer outside the team");
    int world = peer * team.stride; // a world team: the rank itself
    uint64_t *word = at(world, add.signal);
    fake_nccl::Call c{fake_nccl::Call::SignalAdd, world, add.signal, add.value};
    c.requiredRelease = requiredRelease;
    c.givenRelease = givenRelease;
    fake_nccl::onCall(c);
    *word += add.value;
  }

  uint64_t
  readSignal(ncclGinSignal_t signal, int bits = 64,
             cuda::memory_order order = cuda::memory_order_acquire) const {
    if (bits != 64)
      throw std::logic_error("fake ncclGin::readSignal: 64-bit reads only");
    uint64_t v = *at(comm.rank, signal);
    fake_nccl::Call c{fake_nccl::Call::ReadSignal, comm.rank, signal, v};
    c.order = order;
    fake_nccl::onCall(c);
    return v;
  }

  void resetSignal(ncclGinSignal_t signal) const {
    uint64_t *word = at(comm.rank, signal);
    fake_nccl::onCall({fake_nccl::Call::ResetSignal, comm.rank, signal, 0});
    *word = 0;
  }

private:
  uint64_t *at(int world, ncclGinSignal_t signal) const {
    if (world < 0 || world >= comm.nRanks || signal >= comm.nSignals)
      throw std::out_of_range("fake ncclGin: no such rank or signal");
    return comm.signals[world] + signal;
  }
  const ncclDevComm &comm;
};

#endif // TLE_UNITTESTS_FAKE_NCCL_DEVICE_H
