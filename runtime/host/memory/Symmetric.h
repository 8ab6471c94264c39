//===- Symmetric.h - Memory every rank allocates together -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A symmetric view (one rank's block and its mappings of every peer's),
// the collective allocation that fills one through a Bootstrap
// (Symmetric.cpp), and the device-side handle made from one.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_MEMORY_SYMMETRIC_H
#define TLE_HOST_MEMORY_SYMMETRIC_H

#include "backends/Backend.h"
#include "bootstrap/Bootstrap.h"
#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tle {

/// One rank's share of memory that all ranks allocate together: its own
/// block and its mapping of every peer's block (own block at ptr(rank)).
/// Within one process a view keeps the peers' blocks alive, so a rank that
/// frees first never pulls memory from under a peer.
class SymmetricView {
public:
  SymmetricView(std::shared_ptr<Backend> backend, int rank, int size,
                bool sameProcess);
  ~SymmetricView();
  SymmetricView(const SymmetricView &) = delete;
  SymmetricView &operator=(const SymmetricView &) = delete;

  /// Allocates this rank's zero-filled block.
  tleResult_t allocate(size_t bytes);
  /// Makes `bytes` of the user's memory at `ptr` this rank's block instead
  /// (tleMemRegister): exported by Backend::exportRegion, mapped by peers
  /// with importRegion, and never freed by the view.
  tleResult_t adopt(void *ptr, size_t bytes);
  /// What a peer passes to importFrom: the backend's export blob, or within
  /// one process this view's address.
  std::string exportBlob() const;
  /// The descriptor that travels with exportBlob() (-1: none), owned by
  /// the backend.
  int exportFd() const;
  /// Maps `peer`'s block given its exportBlob() and this process's copy of
  /// its exportFd() (-1: none; the caller keeps ownership).
  tleResult_t importFrom(int peer, const std::string &blob, int fd);
  /// Maps `peer`'s block given its view (same process only).
  tleResult_t importFrom(int peer, SymmetricView &view);
  /// Every peer mapped our block: drop its name (see Backend).
  tleResult_t releaseExport();

  void *ptr(int p) const { return ptrs[p]; }
  size_t bytes() const;

private:
  struct Block;
  std::shared_ptr<Backend> backend;
  int rank;
  bool sameProcess;
  bool registered = false; ///< the blocks are user memory (adopt)
  std::shared_ptr<Block> own;
  std::vector<void *> ptrs;
  std::vector<std::shared_ptr<Block>> peerBlocks;
};

/// Packing of one rank's contribution to an exchange, in native byte order:
/// all ranks run on one node. getU64 reads at `at` and advances it; false
/// when `s` is too short.
void putU64(std::string &s, uint64_t v);
bool getU64(const std::string &s, size_t &at, uint64_t &v);

/// All-gathers (this rank's status `local`, `payload`) and the descriptors
/// `myFds`, the step every collective of the host runtime is made of. If
/// this rank failed, returns its own failure (in a tleCommInitAll set at
/// once: it posts its status, Bootstrap::post); if a peer did,
/// tlePeerFailure with the peer's reason; else payloads[r] is rank r's
/// payload.
tleResult_t gatherStatus(Bootstrap &bs, tleResult_t local,
                         const std::string &payload,
                         const std::vector<int> &myFds,
                         std::vector<std::string> &payloads,
                         std::vector<std::vector<UniqueFd>> &peerFds);

/// The collective allocation of `view` (`bytes` on every rank) through `bs`.
/// `prior` is this rank's status so far: a failure is shared with every rank
/// instead of leaving them waiting. `check` must be equal on all ranks
/// (`what` names the allocation in messages). Ends with every peer mapped
/// and the export released.
tleResult_t allocSymmetric(Bootstrap &bs, SymmetricView &view, size_t bytes,
                           tleResult_t prior, uint64_t check, const char *what);

/// The part of allocSymmetric after the allocation, for a view whose own
/// block is ready (allocated or adopted) or failed with `local`: the
/// exchange, the mappings and the release of the export.
tleResult_t shareSymmetric(Bootstrap &bs, SymmetricView &view, size_t bytes,
                           tleResult_t local, uint64_t check, const char *what);

/// The same for all ranks of one process at once, from one thread.
tleResult_t allocSymmetricAll(const std::vector<SymmetricView *> &views,
                              size_t bytes);

/// The device-side handle of a symmetric buffer; `error` is the
/// communicator's record, where the pointer functions report misuse.
SymMem makeSymMem(const SymmetricView &view, int rank, int size, size_t bytes,
                  ErrorRecord *error);
/// The same from the addresses of every rank's copy as this rank sees them.
SymMem makeSymMem(const std::vector<void *> &ptrs, int rank, size_t bytes,
                  ErrorRecord *error);

} // namespace tle

#endif // TLE_HOST_MEMORY_SYMMETRIC_H
