//===- Launcher.cpp - A rank of a tle.launch run, for any program ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tleCommInitFromLauncher: what tle.cpu.Communicator.from_launcher does for
// Python, for C and C++ programs that `python -m tle.launch --no-python`
// starts, one process per rank. The launcher's variables (docs/triton.md,
// "tle.launch") name the rank, the size, the bootstrap id in hex and, with
// --nodes, the ranks per simulated node; this reads them and joins the
// communicator with tleCommInitRank.
//
//===----------------------------------------------------------------------===//

#include "diag/Error.h"

#include "tle/tle.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace {

constexpr const char kHowToStart[] =
    "start the program with python -m tle.launch --ranks N --no-python PROGRAM";

/// The decimal value of environment variable `name` in [lo, hi].
tleResult_t readInt(const char *name, long lo, long hi, long &out) {
  const char *text = std::getenv(name);
  if (!text)
    return tle::fail(tleInvalidArgument, "%s is not set: %s", name,
                     kHowToStart);
  char *end = nullptr;
  errno = 0;
  out = std::strtol(text, &end, 10);
  if (errno || end == text || *end || out < lo || out > hi)
    return tle::fail(tleInvalidArgument, "%s='%s' is not a number in %ld..%ld",
                     name, text, lo, hi);
  return tleSuccess;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

tleResult_t initFromLauncher(tleComm_t *outComm, int device,
                             const tleConfig_t *config) {
  if (!outComm)
    return tle::fail(tleInvalidArgument, "outComm is NULL");
  long size = 0, rank = 0, perNode = 0, local = 0;
  if (tleResult_t r = readInt("TLE_LAUNCH_SIZE", 1, TLE_MAX_RANKS, size))
    return r;
  if (tleResult_t r = readInt("TLE_LAUNCH_RANK", 0, size - 1, rank))
    return r;
  if (std::getenv("TLE_LAUNCH_RANKS_PER_NODE"))
    if (tleResult_t r = readInt("TLE_LAUNCH_RANKS_PER_NODE", 1, size, perNode))
      return r;
  const char *hex = std::getenv("TLE_LAUNCH_UNIQUE_ID");
  if (!hex)
    return tle::fail(tleInvalidArgument, "TLE_LAUNCH_UNIQUE_ID is not set: %s",
                     kHowToStart);
  tleUniqueId id;
  if (std::strlen(hex) != 2 * sizeof id.internal)
    return tle::fail(tleInvalidArgument,
                     "TLE_LAUNCH_UNIQUE_ID is not %zu hex digits (a "
                     "tleUniqueId)",
                     2 * sizeof id.internal);
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    int hi = hexDigit(hex[2 * i]), lo = hexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return tle::fail(tleInvalidArgument,
                       "TLE_LAUNCH_UNIQUE_ID has a character that is not a "
                       "hex digit at %zu",
                       2 * i + (hi < 0 ? 0 : 1));
    id.internal[i] = static_cast<char>(hi << 4 | lo);
  }
  // The caller's config, grown to this version's so that ranksPerNode is
  // read whatever tle.h the caller was built with.
  tleConfig_t c = TLE_CONFIG_INITIALIZER;
  if (config) {
    // The smallest tleConfig_t there was (Config.cpp's rule).
    if (config->size < offsetof(tleConfig_t, allocType))
      return tle::fail(tleInvalidArgument,
                       "config.size is %zu: initialise the config with "
                       "TLE_CONFIG_INITIALIZER",
                       config->size);
    std::memcpy(&c, config, std::min(config->size, sizeof c));
    c.size = sizeof c;
  }
  c.ranksPerNode = static_cast<uint32_t>(perNode);
  if (device < 0) {
    // The GPU of the node-local rank, as torchrun's LOCAL_RANK says.
    if (std::getenv("LOCAL_RANK")) {
      if (tleResult_t r = readInt("LOCAL_RANK", 0, INT_MAX, local))
        return r;
    }
    device = static_cast<int>(local);
  }
  return tleCommInitRank(outComm, static_cast<int>(size), &id,
                         static_cast<int>(rank), device, &c);
}

} // namespace

extern "C" tleResult_t tleCommInitFromLauncher(tleComm_t *outComm, int device,
                                               const tleConfig_t *config) {
  return tle::guard("tleCommInitFromLauncher",
                    [&] { return initFromLauncher(outComm, device, config); });
}
