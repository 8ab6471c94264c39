//===- Bootstrap.h - Out-of-band exchange between the ranks -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Before ranks can share memory they must exchange the handles that map it.
// A Bootstrap is that channel for one rank: an all-gather of byte blobs (and
// a barrier, an all-gather of nothing), which between processes can also
// carry file descriptors (the CPU backend's memory files). Two
// implementations: threads of one process meeting at a shared rendezvous,
// and processes connected through a Unix socket to rank 0 (a star). Every
// step has a deadline; a peer that dies or never arrives makes the step
// fail, never hang. After a failure the channel is unusable and every later
// step fails at once with the reason.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_BOOTSTRAP_H
#define TLE_HOST_BOOTSTRAP_H

#include "bootstrap/UniqueFd.h"
#include "tle/tle.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tle {

/// One rank's end of the exchange channel.
class Bootstrap {
public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Collective: every rank contributes `mine`; out[r] is rank r's blob.
  virtual tleResult_t allGather(const std::string &mine,
                                std::vector<std::string> &out) = 0;
  /// Collective like allGather, and the descriptors `myFds` (at most
  /// wire::kMaxFdsPerRank) travel along: outFds[r] owns this process's
  /// copies of rank r's descriptors (none for this rank). Only the socket
  /// bootstrap carries descriptors; the in-process one refuses any with
  /// tleInternalError (ranks of one process share pointers instead).
  virtual tleResult_t
  allGatherFds(const std::string &mine, const std::vector<int> &myFds,
               std::vector<std::string> &out,
               std::vector<std::vector<UniqueFd>> &outFds) = 0;
  /// Contributes `mine` to the next step and, where the channel allows,
  /// returns without waiting for the others (a rank that failed before a
  /// collective: the peers read its failure as they arrive, and it fails
  /// at once). The in-process rendezvous does; the others wait for the step
  /// as allGather does. The rank's next step follows this one.
  virtual tleResult_t post(const std::string &mine) {
    std::vector<std::string> ignored;
    return allGather(mine, ignored);
  }
  /// Collective: returns once every rank has called it.
  tleResult_t barrier() {
    std::vector<std::string> ignored;
    return allGather(std::string(), ignored);
  }

  /// Called on the watchdog's thread when rank `rank`'s process died.
  using PeerLost = std::function<void(int rank)>;
  /// Starts watching the peers' processes (the socket bootstrap: a
  /// connection that closes without a goodbye is a death; rank 0 relays it
  /// to the others). The others watch nothing.
  virtual tleResult_t watch(PeerLost onLost) {
    (void)onLost;
    return tleSuccess;
  }
  /// Whether a step can complete while this rank's GPU runs a hung kernel:
  /// the socket and in-process exchanges can; NCCL's, whose all-gathers
  /// are kernels queued behind it, cannot.
  virtual bool outOfBand() const { return true; }
  /// The ranks whose process the watchdog saw die, in the order it saw
  /// them (none for a bootstrap that watches nothing).
  virtual std::vector<int> lostPeers() const { return {}; }
  /// Stops the watchdog, if any; `onLost` is not called after it returns.
  /// The destructor does it too, and says goodbye to the peers.
  virtual void stopWatching() {}
};

/// The rendezvous shared by the ranks of a tleCommInitAll set.
struct InProcGroup;

/// A rendezvous for `nRanks` threads; a step waits at most `timeoutMs`
/// (0: forever) for the others.
std::shared_ptr<InProcGroup> createInProcGroup(int nRanks, int64_t timeoutMs);
/// Rank `rank`'s end of `group`. Destroying it marks the group broken, so
/// that peers waiting in a step fail instead of waiting for the deadline.
std::unique_ptr<Bootstrap>
createInProcBootstrap(std::shared_ptr<InProcGroup> group, int rank);

/// Fills `out` with a fresh rendezvous address and random secret.
tleResult_t makeUniqueId(tleUniqueId &out);
/// Joins the star of `id`: rank 0 listens and admits the nRanks-1 others;
/// the rest connect to rank 0. Both ends prove that they hold the id's
/// secret without sending it, and by default both must run as the same
/// user (docs/runtime.md, "Security"). Waits at most `timeoutMs` (0:
/// forever) for the whole group.
tleResult_t connectSocketBootstrap(const tleUniqueId &id, int nRanks, int rank,
                                   int64_t timeoutMs,
                                   std::unique_ptr<Bootstrap> &out);

/// Fills `bytes` bytes of `out` from the kernel's random source.
tleResult_t randomBytes(void *out, size_t bytes);

} // namespace tle

#endif // TLE_HOST_BOOTSTRAP_H
