//===- Abort.h - Aborting a communicator from anywhere ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommAbort must work from a signal handler and while another thread
// destroys communicators, so it may take no lock and allocate nothing: the
// handle registry (Handles.h) is a locked map, so aborts go through a
// fixed table of their own that maps a live handle to the fault words
// (ErrorRecord::abort) of its ranks in this process. Everything here is
// lock-free atomics; a destroy waits (briefly, spinning) for aborts in
// flight before the memory of a fault word may go.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_ABORT_H
#define TLE_HOST_ABORT_H

#include <atomic>
#include <cstdint>
#include <memory>

namespace tle {

/// The fault words of the ranks of one communicator that live in this
/// process (every rank of a tleCommInitAll set, else the one rank), shared
/// by their CommStates. words[r] is null once rank r is destroyed.
struct FaultGroup {
  explicit FaultGroup(int ranks)
      : words(std::make_unique<std::atomic<uint32_t *>[]>(ranks)), size(ranks) {
  }
  std::unique_ptr<std::atomic<uint32_t *>[]> words;
  int size;
  std::atomic<uint32_t> users{0}; ///< aborts storing through `words`
};

/// Stores `code` (a DevErrorCode) into every fault word of `group` that is
/// still 0. Async-signal-safe.
void setFault(FaultGroup &group, uint32_t code);

/// Makes the communicator `handle` (rank `rank` of `group`, its fault word
/// `word`) abortable by abortHandle; returns its slot, or -1 when the table
/// is full (tleCommAbort then takes the handle registry's lock).
int armAbort(uint64_t handle, FaultGroup &group, int rank, uint32_t *word);
/// Undoes armAbort (slot may be -1) and removes the rank's word from its
/// group; returns once no abort can store to that word any more.
void disarmAbort(int slot, FaultGroup &group, int rank);

/// Aborts the communicator `handle` if the table knows it (false if not).
/// Async-signal-safe.
bool abortHandle(uint64_t handle);

} // namespace tle

#endif // TLE_HOST_ABORT_H
