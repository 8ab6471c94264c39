//===- OrderKernels.cu - One kernel per barrier half, group and order -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The input of the PTX order check (ptx-kernels.check, CheckPtxKernels.py):
// one kernel for every (half, group, order) of the stateless barrier, the
// grid barrier and tle::BarrierSession, each with its group and order as
// constants, so that the compiler keeps only the code that order runs. The
// check then asserts, kernel by kernel, which ordered instructions and
// fences are present and which are absent. Compiled by clang in CUDA
// device-only mode with the library inline (tle/device.h), as a CUDA C++
// user gets it.
//
//===----------------------------------------------------------------------===//

#include "tle/device.h"
#include "tle/session.h"

#define TLE_ORDERS(X, Half, Group, ...)                                        \
  X(Half, Group, relaxed, kOrderRelaxed, __VA_ARGS__)                          \
  X(Half, Group, acquire, kOrderAcquire, __VA_ARGS__)                          \
  X(Half, Group, release, kOrderRelease, __VA_ARGS__)                          \
  X(Half, Group, acq_rel, kOrderAcqRel, __VA_ARGS__)                           \
  X(Half, Group, seq_cst, kOrderSeqCst, __VA_ARGS__)

#define TLE_STATELESS(Half, Group, OrderName, Order, Fn, Coop)                 \
  extern "C" __global__ void Half##_##Group##_##OrderName(const void *comm,    \
                                                          uint32_t slot) {     \
    Fn(comm, tle::Coop, slot, false, tle::Order);                              \
  }
#define TLE_GRID(Half, Group, OrderName, Order, Fn)                            \
  extern "C" __global__ void Half##_##Group##_##OrderName(const void *comm,    \
                                                          uint32_t slot) {     \
    Fn(comm, slot, false, tle::Order);                                         \
  }
#define TLE_SESSION(Half, Group, OrderName, Order, Coop)                       \
  extern "C" __global__ void session_##Half##_##Group##_##OrderName(           \
      const void *comm, uint32_t slot) {                                       \
    tle::BarrierSession s(comm, tle::Coop, slot);                              \
    s.Half(tle::Order);                                                        \
  }

#define TLE_GROUPS(Half, Fn)                                                   \
  TLE_ORDERS(TLE_STATELESS, Half, thread, Fn, kCoopThread)                     \
  TLE_ORDERS(TLE_STATELESS, Half, warp, Fn, kCoopWarp)                         \
  TLE_ORDERS(TLE_STATELESS, Half, block, Fn, kCoopBlock)

TLE_GROUPS(arrive, flagcxIntraBarrierArriveS)
TLE_GROUPS(wait, flagcxIntraBarrierWaitS)
TLE_GROUPS(sync, flagcxIntraBarrierSyncS)
TLE_ORDERS(TLE_GRID, arrive, grid, tleIntraGridBarrierArriveS)
TLE_ORDERS(TLE_GRID, wait, grid, tleIntraGridBarrierWaitS)
TLE_ORDERS(TLE_GRID, sync, grid, tleIntraGridBarrierSyncS)

#define TLE_SESSIONS(Half)                                                     \
  TLE_ORDERS(TLE_SESSION, Half, thread, kCoopThread)                           \
  TLE_ORDERS(TLE_SESSION, Half, warp, kCoopWarp)                               \
  TLE_ORDERS(TLE_SESSION, Half, block, kCoopBlock)

TLE_SESSIONS(arrive)
TLE_SESSIONS(wait)
TLE_SESSIONS(sync)
