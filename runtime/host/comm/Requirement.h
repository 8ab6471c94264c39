//===- Requirement.h - What a communicator feature asks for -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A communicator is assembled from its features, as NCCL's device
// communicator is from ncclDevCommRequirements (ncclDevCommCreate): each
// stateful feature of the device library (the barrier, the error record,
// the signal words, the counters, the net words) states the memory it needs
// (local, host-visible, or symmetric over the node or the world), how much,
// and which DevComm fields it fills from it. One assembly sequence
// (Assembly.cpp) allocates, exchanges, maps and publishes for every feature
// alike; the ways of creating a communicator (tleCommInitRank,
// tleCommInitAll, tleCommInitFromNccl) only choose the topology, the
// backend and how the ranks exchange.
//
// Adding a stateful feature: a file in comm/features/ defining its
// CommFeature, one line in Features.def, its DevComm section and its device
// code (docs/runtime.md, "Communicator assembly").
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_COMM_REQUIREMENT_H
#define TLE_HOST_COMM_REQUIREMENT_H

#include "tle/detail/DevComm.h"

#include <cstddef>
#include <vector>

namespace tle {

struct CommState;

/// Where a requirement's memory lives.
enum class MemoryKind {
  Local,       ///< this rank's device memory (Backend::allocLocal)
  HostVisible, ///< device memory the host reads (Backend::allocHostVisible)
  Symmetric,   ///< every rank of a span allocates it and maps every copy
};

/// The ranks a symmetric requirement spans.
enum class Span {
  Node,  ///< the ranks of this rank's node (DevComm::size)
  World, ///< every rank of the world, node-major
};

/// One piece of memory a feature asks for, zero-filled at creation.
struct Requirement {
  /// Names the memory in messages ("barrier inboxes"); also the block a
  /// symmetric requirement lies in: consecutive symmetric requirements of
  /// one name are one allocation, back to back in order (a layout the
  /// device library may rely on, as counterPeer does on the signal words).
  const char *name;
  MemoryKind kind;
  size_t bytes; ///< per rank
  Span span = Span::Node;
};

/// The memory placed for one requirement, as the feature's publish sees it.
struct Placed {
  /// Local: the memory. HostVisible: its device address. Symmetric: this
  /// rank's copy as mapped here.
  void *mem = nullptr;
  void *host = nullptr; ///< HostVisible: its host address
  /// Symmetric: every rank of the span's copy as mapped here (peers[i] is
  /// span rank i: node rank, or world rank node * size + rank).
  std::vector<void *> peers;
};

/// A stateful feature of the communicator.
struct CommFeature {
  const char *name;
  /// Appends what the feature needs on communicator `c` (rank, size, nodes
  /// and config set) to `out`.
  void (*require)(const CommState &c, std::vector<Requirement> &out);
  /// Fills the feature's fields of `d` from `mem`, the memory of its
  /// requirements in the order `require` gave them, and keeps in `c` what
  /// host code reads later.
  void (*publish)(CommState &c, const std::vector<Placed> &mem, DevComm &d);
};

/// The features in assembly order (Features.def); every rank assembles
/// them in this order, so that their exchanges pair up.
const std::vector<const CommFeature *> &commFeatures();

} // namespace tle

#endif // TLE_HOST_COMM_REQUIREMENT_H
