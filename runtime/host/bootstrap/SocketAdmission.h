//===- SocketAdmission.h - Rank 0 admitting the ranks -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The socket bootstrap's second topic (SocketBootstrap.cpp): rank 0 runs
// every rank's handshake at once (docs/runtime.md, "Security"), each
// connection with its own deadline and a buffer the size of the largest
// message it may send, and refuses what does not authenticate.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_BOOTSTRAP_SOCKETADMISSION_H
#define TLE_HOST_BOOTSTRAP_SOCKETADMISSION_H

#include "bootstrap/SocketIo.h"

#include <list>
#include <string>
#include <utility>
#include <vector>

namespace tle::sock {

/// Rank 0's side of the handshakes. Every connection that has not
/// authenticated yet is a Pending with its own deadline and a buffer the
/// size of the largest message it may send, so no connection holds up
/// another and none makes rank 0 allocate.
class Admission {
public:
  Admission(const wire::IdLayout &id, int nRanks, bool anyUid,
            std::vector<UniqueFd> &admitted)
      : id(id), nRanks(nRanks), anyUid(anyUid), admitted(admitted) {}

  /// Admits ranks at `listenFd` until all have joined or `deadline`
  /// passes. On failure `reason` says why (with the refusals seen).
  tleResult_t run(int listenFd, const Deadline &deadline, std::string &reason);
  /// Refuses every connection still in its handshake with `why`.
  void refuseAll(const std::string &why);

private:
  struct Pending {
    UniqueFd fd;
    Clock::time_point expires;
    wire::Step step = wire::Step::RootAwaitsHello;
    uint8_t buf[128];
    size_t have = 0;
    wire::HelloMessage hello = {};
    wire::Nonce rootNonce = {};
  };
  static_assert(wire::kHeaderBytes + sizeof(wire::HelloMessage) <= 128 &&
                wire::kHeaderBytes + wire::kMacBytes <= 128);

  void acceptAll(int listenFd);
  /// Drops the oldest connection that has not introduced itself (after
  /// reading what it may have sent); false when every one has.
  bool dropOldestSilent(const char *why);
  /// Reads what `p` sent; false once it is done with (admitted or not).
  bool onReadable(Pending &p);
  bool onHello(Pending &p, const uint8_t *payload, size_t bytes);
  bool onProof(Pending &p, const uint8_t *payload);
  /// Tells the connection why (without waiting), records it, closes it.
  void refuse(UniqueFd &fd, const std::string &why);
  void note(const std::string &why);
  std::string refusalText() const;

  const wire::IdLayout &id;
  int nRanks;
  bool anyUid;
  std::vector<UniqueFd> &admitted;
  int joined = 1;
  std::list<Pending> pending; ///< oldest first
  std::vector<std::pair<std::string, int>> refusals;
  size_t otherRefusals = 0;
};

} // namespace tle::sock

#endif // TLE_HOST_BOOTSTRAP_SOCKETADMISSION_H
