//===- Handles.h - The registry behind tleComm_t and tleMem_t ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A C caller can pass any value as a handle: a destroyed one, one of the
// other type, or garbage. So a handle is not the object's address but a
// number that names it in a registry of live objects: a serial that is
// never issued twice (a destroyed handle stays dead even when the heap
// reuses the object's memory for a new one) and a tag for its type. Every
// C API function looks its handles up here, and a handle not found is
// refused with tleInvalidArgument before anything is touched. A lookup
// returns shared ownership, so a thread destroying a handle while another
// uses it only makes the object go when that other call has returned.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_HANDLES_H
#define TLE_HOST_HANDLES_H

#include "tle/tle.h"

#include <functional>
#include <memory>

namespace tle {

struct CommState;
struct MemState;

/// Makes `comm` live and returns its handle.
tleComm_t registerComm(std::shared_ptr<CommState> comm);
/// Makes `mem` live and returns its handle.
tleMem_t registerMem(std::shared_ptr<MemState> mem);

/// The live communicator behind `handle`, or tleInvalidArgument with a
/// detail that names the argument `arg` and says what is wrong with it.
tleResult_t lookupComm(tleComm_t handle, std::shared_ptr<CommState> &out,
                       const char *arg = "comm");
/// The same for symmetric buffers.
tleResult_t lookupMem(tleMem_t handle, std::shared_ptr<MemState> &out,
                      const char *arg = "mem");

/// Calls `fn` on every live symmetric buffer handle, in the order the
/// handles were issued (the emulator's race checker finds the buffers of a
/// launch's communicators this way).
void forEachMem(const std::function<void(tleMem_t, const MemState &)> &fn);
/// The live communicators, in the order they were made.
void forEachComm(const std::function<void(tleComm_t, const CommState &)> &fn);

/// Removes `handle` from the registry and hands its object to `out` (which
/// the caller drops, releasing it unless another call still holds it);
/// tleInvalidArgument as lookupComm when it is not live. Of two threads
/// destroying one handle, exactly one succeeds.
/// Whether `p` is what a kernel receives of a live object: the DevComm of
/// a registered communicator or the device handle (SymMem) of a registered
/// symmetric buffer. The emulator's interpreter entry points refuse any
/// other pointer.
bool isLiveDevicePointer(const void *p);

tleResult_t unregisterComm(tleComm_t handle, std::shared_ptr<CommState> &out);
tleResult_t unregisterMem(tleMem_t handle, std::shared_ptr<MemState> &out);

} // namespace tle

#endif // TLE_HOST_HANDLES_H
