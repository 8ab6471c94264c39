//===- nccl_device.h - A fake of NCCL's device API for CPU tests ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of NCCL 2.28's GPU-initiated networking that tle/impl/NetNccl.h
// calls (ncclDevComm, ncclTeamWorld, windows, ncclGin's signal, put,
// putValue, flush, readSignal, resetSignal, readCounter and resetCounter),
// written from that API's declarations for NetTest.cpp, so that the
// library's network path runs on the CPU: every call is handed to
// fake_nccl::onCall (the test defines it) with the world rank and the
// signal, counter or window it names, and a signal add lands in the fake's
// own words of that rank, so a test sees which word of which peer a net
// add reaches.
//
// A put is an engine's: the call only queues it; the fake's engine
// delivers queued puts in order (fake_nccl::deliver: read the source,
// write the peer's copy, then the signal add, then the local counter), at
// a flush and before a read of a signal or a counter (so that a wait
// sees progress), never inside the put. A test then sees what TLE relies
// on: the source read after the call returned, the signal after the data.
// Not NCCL: one process, no memory model; the orders and scopes the
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

#include <cstring>
#include <vector>

typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

/// A world of nRanks ranks, each with nSignals GIN signal words and
/// nCounters GIN counters; this is world rank `rank`'s view (NCCL's is
/// opaque; the fake's is plain).
struct ncclDevComm {
  int rank, nRanks;
  uint32_t nSignals;
  uint64_t **signals; ///< [nRanks]: rank r's signal words
  uint32_t nCounters = 0;
  uint64_t **counters = nullptr; ///< [nRanks]: rank r's counters
};

/// A registered window: every world rank's copy of one buffer, `bytes`
/// each (NCCL's is a device handle; the fake's is plain).
struct ncclWindow_vidmem {
  char **base; ///< [nRanks]
  size_t bytes;
};
typedef ncclWindow_vidmem *ncclWindow_t;

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
struct ncclGin_CounterInc {
  ncclGinCounter_t counter;
};

namespace fake_nccl {
/// One call of the fake: what, on which world rank's word, and with what.
struct Call {
  enum Kind {
    SignalAdd,
    ReadSignal,
    ResetSignal,
    Put,      ///< queued: worldRank is the peer; signal/counter if `has...`
    PutValue, ///< queued: `value` is the value carried
    Flush,
    ReadCounter,
    ResetCounter,
    Deliver, ///< the engine delivered a queued put (the data, then actions)
  } kind;
  int worldRank;
  ncclGinSignal_t signal;
  uint64_t value; ///< the add's value, or the value read
  cuda::thread_scope requiredRelease = cuda::thread_scope_thread;
  cuda::thread_scope givenRelease = cuda::thread_scope_thread;
  cuda::memory_order order = cuda::memory_order_relaxed;
  // A put's: the windows, offsets and size, and its actions.
  ncclWindow_t dstWin = nullptr, srcWin = nullptr;
  size_t dstOffset = 0, srcOffset = 0, bytes = 0;
  bool hasSignal = false, hasCounter = false;
  ncclGinCounter_t counter = 0;
};
/// Defined by the test.
void onCall(const Call &call);

/// A put the engine has not delivered yet.
struct Pending {
  int from, peer;
  ncclWindow_t dstWin, srcWin; ///< srcWin null: a put-value
  size_t dstOffset, srcOffset, bytes;
  uint64_t value; ///< a put-value's
  bool hasSignal;
  ncclGinSignal_t signal;
  uint64_t signalValue;
  bool hasCounter;
  ncclGinCounter_t counter;
};
inline std::vector<Pending> &queue() {
  static std::vector<Pending> q;
  return q;
}
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

  template <typename RemoteAction = ncclGin_None,
            typename LocalAction = ncclGin_None, typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None>
  void put(ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
           ncclWindow_t srcWin, size_t srcOffset, size_t bytes,
           RemoteAction remote = ncclGin_None{},
           LocalAction local = ncclGin_None{}, Coop = ncclCoopThread{},
           DescriptorSmem = ncclGin_None{},
           cuda::thread_scope requiredRelease = cuda::thread_scope_thread,
           cuda::thread_scope givenRelease = cuda::thread_scope_device) const {
    if (peer < 0 || peer >= team.nRanks)
      throw std::out_of_range("fake ncclGin::put: peer outside the team");
    if (!dstWin || !srcWin)
      throw std::invalid_argument("fake ncclGin::put: no window");
    if (dstOffset + bytes > dstWin->bytes || srcOffset + bytes > srcWin->bytes)
      throw std::out_of_range("fake ncclGin::put: past the window");
    int world = peer * team.stride;
    fake_nccl::Pending p{comm.rank, world, dstWin, srcWin, dstOffset,
                         srcOffset, bytes, 0,      false,  0,
                         0,         false, 0};
    actions(p, remote, local);
    fake_nccl::Call c{fake_nccl::Call::Put, world, p.signal, p.signalValue};
    c.requiredRelease = requiredRelease;
    c.givenRelease = givenRelease;
    c.dstWin = dstWin;
    c.srcWin = srcWin;
    c.dstOffset = dstOffset;
    c.srcOffset = srcOffset;
    c.bytes = bytes;
    c.hasSignal = p.hasSignal;
    c.hasCounter = p.hasCounter;
    c.counter = p.counter;
    fake_nccl::onCall(c);
    fake_nccl::queue().push_back(p);
  }

  template <typename T, typename RemoteAction = ncclGin_None,
            typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None>
  void
  putValue(ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
           T value, RemoteAction remote = ncclGin_None{},
           Coop = ncclCoopThread{}, DescriptorSmem = ncclGin_None{},
           cuda::thread_scope requiredRelease = cuda::thread_scope_thread,
           cuda::thread_scope givenRelease = cuda::thread_scope_device) const {
    static_assert(sizeof(T) <= 8, "Required: sizeof(T) <= 8");
    if (peer < 0 || peer >= team.nRanks)
      throw std::out_of_range("fake ncclGin::putValue: peer outside the team");
    if (!dstWin || dstOffset + sizeof(T) > dstWin->bytes)
      throw std::out_of_range("fake ncclGin::putValue: past the window");
    int world = peer * team.stride;
    fake_nccl::Pending p{comm.rank, world,     dstWin, nullptr, dstOffset,
                         0,         sizeof(T), 0,      false,   0,
                         0,         false,     0};
    std::memcpy(&p.value, &value, sizeof(T));
    actions(p, remote, ncclGin_None{});
    fake_nccl::Call c{fake_nccl::Call::PutValue, world, p.signal, p.value};
    c.requiredRelease = requiredRelease;
    c.givenRelease = givenRelease;
    c.dstWin = dstWin;
    c.dstOffset = dstOffset;
    c.bytes = sizeof(T);
    c.hasSignal = p.hasSignal;
    fake_nccl::onCall(c);
    fake_nccl::queue().push_back(p);
  }

  /// Delivers every queued put of this rank (its sources are then read).
  template <typename Coop>
  void flush(Coop,
             cuda::memory_order order = cuda::memory_order_acquire) const {
    deliver();
    fake_nccl::Call c{fake_nccl::Call::Flush, comm.rank, 0, 0};
    c.order = order;
    fake_nccl::onCall(c);
  }

  uint64_t
  readCounter(ncclGinCounter_t counter, int bits = 56,
              cuda::memory_order order = cuda::memory_order_acquire) const {
    deliver();
    uint64_t v = *counterAt(comm.rank, counter) & (uint64_t(-1) >> (64 - bits));
    fake_nccl::Call c{fake_nccl::Call::ReadCounter, comm.rank, counter, v};
    c.order = order;
    c.counter = counter;
    c.value = v;
    c.signal = static_cast<ncclGinSignal_t>(bits);
    fake_nccl::onCall(c);
    return v;
  }

  void resetCounter(ncclGinCounter_t counter) const {
    uint64_t *word = counterAt(comm.rank, counter);
    fake_nccl::Call c{fake_nccl::Call::ResetCounter, comm.rank, 0, 0};
    c.counter = counter;
    fake_nccl::onCall(c);
    *word = 0;
  }

  uint64_t
  readSignal(ncclGinSignal_t signal, int bits = 64,
             cuda::memory_order order = cuda::memory_order_acquire) const {
    if (bits != 64)
      throw std::logic_error("fake ncclGin::readSignal: 64-bit reads only");
    deliver();
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

  /// The engine: delivers every queued put of this rank, in order.
  void deliver() const {
    std::vector<fake_nccl::Pending> &q = fake_nccl::queue();
    std::vector<fake_nccl::Pending> mine, rest;
    for (const fake_nccl::Pending &p : q)
      (p.from == comm.rank ? mine : rest).push_back(p);
    q = rest;
    for (const fake_nccl::Pending &p : mine) {
      char *to = p.dstWin->base[p.peer] + p.dstOffset;
      if (p.srcWin)
        std::memcpy(to, p.srcWin->base[p.from] + p.srcOffset, p.bytes);
      else
        std::memcpy(to, &p.value, p.bytes);
      fake_nccl::Call c{fake_nccl::Call::Deliver, p.peer, p.signal,
                        p.signalValue};
      c.dstWin = p.dstWin;
      c.srcWin = p.srcWin;
      c.bytes = p.bytes;
      c.hasSignal = p.hasSignal;
      c.hasCounter = p.hasCounter;
      c.counter = p.counter;
      fake_nccl::onCall(c);
      if (p.hasSignal)
        *at(p.peer, p.signal) += p.signalValue;
      if (p.hasCounter)
        *counterAt(p.from, p.counter) += 1;
    }
  }

private:
  static void actions(fake_nccl::Pending &, ncclGin_None, ncclGin_None) {}
  static void actions(fake_nccl::Pending &p, ncclGin_SignalAdd a,
                      ncclGin_None) {
    p.hasSignal = true;
    p.signal = a.signal;
    p.signalValue = a.value;
  }
  static void actions(fake_nccl::Pending &p, ncclGin_None,
                      ncclGin_CounterInc l) {
    p.hasCounter = true;
    p.counter = l.counter;
  }
  static void actions(fake_nccl::Pending &p, ncclGin_SignalAdd a,
                      ncclGin_CounterInc l) {
    actions(p, a, ncclGin_None{});
    actions(p, ncclGin_None{}, l);
  }
  uint64_t *counterAt(int world, ncclGinCounter_t counter) const {
    if (world < 0 || world >= comm.nRanks || counter >= comm.nCounters)
      throw std::out_of_range("fake ncclGin: no such rank or counter");
    return comm.counters[world] + counter;
  }
  uint64_t *at(int world, ncclGinSignal_t signal) const {
    if (world < 0 || world >= comm.nRanks || signal >= comm.nSignals)
      throw std::out_of_range("fake ncclGin: no such rank or signal");
    return comm.signals[world] + signal;
  }
  const ncclDevComm &comm;
};

#endif // TLE_UNITTESTS_FAKE_NCCL_DEVICE_H
