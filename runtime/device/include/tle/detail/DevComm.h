//===- DevComm.h - Layout of the device communicator ------------*- C++ -*-===//
//
// The device communicator and the symmetric-buffer handle as the device
// library reads them. The host runtime builds these structs in device memory
// (GPU) or in plain memory (CPU emulator); kernels receive a pointer to them.
// This header is shared by the host runtime and all three builds of the
// device library, so it holds only plain data: no constructors, no virtuals,
// fixed-width fields, the same layout for nvcc, clang and the host compiler.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DETAIL_DEVCOMM_H
#define TLE_DETAIL_DEVCOMM_H

#include "tle/abi.h"

#include <stdint.h>

namespace tle {

/// "TLEC": the first word of every device communicator.
constexpr uint32_t kDevCommMagic = 0x544c4543u;
/// "TLEM": the first word of every symmetric-buffer handle.
constexpr uint32_t kSymMemMagic = 0x544c454du;
/// Bumped whenever the layout below changes.
constexpr uint32_t kDevCommVersion = 3;
/// Largest node the layout serves (NVLink domains of one node have <= 8).
constexpr int kMaxRanks = 8;

/// Where the first failure of a launch is recorded. It lives in memory the
/// host can read after a failed launch (host-mapped pinned memory on GPUs),
/// and the first writer claims it by a compare-and-swap on `state`.
struct ErrorRecord {
  uint32_t state;       ///< 0 free, 1 being written, 2 complete
  uint32_t code;        ///< a DevErrorCode
  int32_t rank;         ///< rank that detected the failure
  uint32_t slot;        ///< barrier slot (index as given by the caller)
  uint32_t epoch;       ///< epoch the wait was waiting for
  uint32_t missingMask; ///< bit p: peer p had not arrived
  int32_t block;        ///< linear block id of the reporting thread
  int32_t thread;       ///< linear thread id in its block
  uint32_t nBarriers;   ///< slots in the communicator (for range errors)
  uint32_t aux;         ///< kDevErrBadComm: the communicator's size field
  uint64_t elapsedNs;   ///< time spent waiting before the timeout fired
  uint32_t function;    ///< the entry point that failed (an abi::Fn)
  uint32_t argument;    ///< kDevErrBadArgument: which one (a BadArgument)
  uint64_t value;       ///< kDevErrBadArgument: the value passed
  uint64_t limit;       ///< kDevErrBadArgument: the bound it broke (ranks,
                        ///< buffer bytes), 0 if none
};

/// The device communicator of one rank.
///
/// Barrier state. For slot s, rank r's inbox holds one 32-bit flag per peer
/// at inbox[r][s * inboxStride + q], written only by rank q: q adds 1 per
/// arrive (a release reduction; the grid barrier's last CTA stores), so the
/// word is the epoch q reached. epochs[s] is the epoch this rank completed on
/// slot s; it lives in this rank's device memory, so barriers carry across
/// launches and graph replays with no host involvement. Epoch comparisons
/// are wrap-safe: (int32_t)(a - b) >= 0.
///
/// Grid barrier state (group `grid`): gridCount[s] counts the CTAs of this
/// rank that arrived in the current round of slot s.
struct DevComm {
  uint32_t magic;             ///< kDevCommMagic
  uint32_t version;           ///< kDevCommVersion
  int32_t rank;               ///< intra-node rank, 0..size-1
  int32_t size;               ///< ranks in the node
  uint32_t nBarriers;         ///< number of barrier slots
  uint32_t inboxStride;       ///< uint32 words between consecutive slots
  uint64_t timeoutNs;         ///< wait deadline; 0 waits forever
  uint32_t *epochs;           ///< [nBarriers], this rank's memory
  uint32_t *gridCount;        ///< [nBarriers], this rank's memory
  uint32_t *inbox[kMaxRanks]; ///< inbox[p]: rank p's inbox, mapped here
  ErrorRecord *error;         ///< host-readable
  /// The same flags, pre-rotated (fillRoutes): entry j is peer
  /// (rank + 1 + j) % size, entry size-1 is this rank. outFlags[j] is our
  /// word for slot 0 in that rank's inbox, inFlags[j] that rank's word for
  /// slot 0 in ours; slot s is `+ s * inboxStride`. The barrier's address
  /// then depends only on loads it can issue at once, not on a load of
  /// `rank` followed by a load of inbox[peer].
  uint32_t *outFlags[kMaxRanks];
  const uint32_t *inFlags[kMaxRanks];
};

/// Fills DevComm::outFlags and inFlags from rank, size and inbox[].
inline void fillRoutes(DevComm &d) {
  for (int j = 0; j < d.size; ++j) {
    int q = (d.rank + 1 + j) % d.size;
    d.outFlags[j] = d.inbox[q] + d.rank;
    d.inFlags[j] = d.inbox[d.rank] + q;
  }
}

/// A symmetric buffer: `bytes` on every rank, each rank's copy mapped here.
struct SymMem {
  uint32_t magic; ///< kSymMemMagic
  int32_t rank;
  int32_t size;
  uint32_t pad;
  uint64_t bytes;
  void *ptrs[kMaxRanks]; ///< ptrs[p]: rank p's copy, as seen by this rank
  ErrorRecord *error;    ///< the communicator's record (may be null): where
                         ///< the pointer functions report a bad peer/offset
};

} // namespace tle

#endif // TLE_DETAIL_DEVCOMM_H
