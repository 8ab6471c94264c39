//===- Config.h - A communicator config, resolved ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The limits of a communicator and a tleConfig_t checked, with its
// defaults and environment applied (Config.cpp), and the backend it
// chooses.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_COMM_CONFIG_H
#define TLE_HOST_COMM_CONFIG_H

#include "backends/Backend.h"
#include "tle/tle.h"

#include <cstdint>
#include <memory>

namespace tle {

/// uint32 words between consecutive barrier slots of an inbox of `size`
/// ranks: one flag per rank, rounded up to whole 128-byte lines, so ranks
/// spinning on different slots never share a line. The device library reads
/// it from DevComm::inboxStride; this is the one place it is chosen.
constexpr uint32_t inboxStrideWords(int size) {
  return (static_cast<uint32_t>(size) + 31u) / 32u * 32u;
}
/// Upper bound on nBarriers (128 MiB of inbox per rank).
constexpr uint32_t kMaxBarriers = 1u << 20;
/// Upper bound on nSignals (8 MiB of signal words per rank).
constexpr uint32_t kMaxSignals = 1u << 20;
/// Bootstrap step deadline when the config says -1.
constexpr int64_t kDefaultBootstrapTimeoutMs = 30000;
/// Largest timeout in ms whose nanoseconds fit in 63 bits.
constexpr int64_t kMaxTimeoutMs = INT64_MAX / 1000000;

/// A tleConfig_t checked and with its defaults applied.
struct ResolvedConfig {
  tleBackend_t backend = tleBackendEmulator;
  uint32_t nBarriers = 64;
  uint32_t nSignals = 64;         ///< signal words (and counters) per context
  uint32_t nContexts = 4;         ///< network contexts, 1..TLE_MAX_CONTEXTS
  uint64_t timeoutNs = 0;         ///< 0: device waits forever
  int64_t bootstrapTimeoutMs = 0; ///< 0: bootstrap waits forever
  /// Never tleAllocDefault: resolved through TLE_CUDA_ALLOC and
  /// TLE_DEFAULT_ALLOC_NAME.
  tleAllocType_t allocType = tleAllocCudaMalloc;
  /// TLE_ON_ERROR_RETURN (resolved through TLE_ON_ERROR): DevComm::flags
  /// gets kDevCommOnErrorReturn.
  bool onErrorReturn = false;
  /// tleConfig_t::ranksPerNode as given (0: one node); tleCommInitAll
  /// checks it against nRanks.
  uint32_t ranksPerNode = 0;
};

/// Signal words per rank over every context (DevComm::nSignalWords); as
/// many counters and shadows.
inline uint32_t signalWordsPerRank(const ResolvedConfig &config) {
  return config.nContexts * config.nSignals;
}

/// Net words per rank (DevComm::nNetWords): the signal words, then one per
/// slot of the INTER team and of WORLD's inter half. The emulator's network
/// and NCCL's GIN signals (CommFromNccl.cpp) are both sized by it.
inline uint32_t netWordsPerRank(const ResolvedConfig &config) {
  return signalWordsPerRank(config) + 2 * config.nBarriers;
}

/// Counters per rank and network context (DevComm::nCounters): as many as
/// signal words.
inline uint32_t countersPerRank(const ResolvedConfig &config) {
  return config.nSignals;
}

/// Counters per rank over every context. TLE's counter words (Counters.cpp)
/// and NCCL's GIN counters (CommFromNccl.cpp) are both sized by it.
inline uint32_t counterWordsPerRank(const ResolvedConfig &config) {
  return config.nContexts * countersPerRank(config);
}

/// Checks `config` (NULL: defaults) and resolves timeoutMs == -1 through
/// the environment variable TLE_BARRIER_TIMEOUT_MS, allocType ==
/// tleAllocDefault through TLE_CUDA_ALLOC.
tleResult_t resolveConfig(const tleConfig_t *config, ResolvedConfig &out);

/// Creates the backend of one rank. `fdsTravel`: the rank's bootstrap can
/// carry file descriptors (needed by cuMem memory across processes).
tleResult_t createBackend(const ResolvedConfig &config, int device,
                          bool multiProcess, bool fdsTravel,
                          std::shared_ptr<Backend> &out);

} // namespace tle

#endif // TLE_HOST_COMM_CONFIG_H
