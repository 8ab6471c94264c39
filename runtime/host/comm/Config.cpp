//===- Config.cpp - Checking tleConfig_t and choosing a backend -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Resolves a caller's tleConfig_t into the values the communicator uses.
// The device-wait timeout has three sources, in order: the config, the
// environment variable TLE_BARRIER_TIMEOUT_MS (when the config says -1), and
// TLE_DEFAULT_TIMEOUT_MS. The host reads the environment once here and
// stores the result in DevComm::timeoutNs, so every device build and the
// emulator honour the same value. The variable is parsed strictly: a typo
// must not silently become "wait forever". The CUDA allocation type follows
// the same pattern: the config, TLE_CUDA_ALLOC, TLE_DEFAULT_ALLOC_NAME.
//
//===----------------------------------------------------------------------===//

#include "comm/Config.h"
#include "diag/Error.h"

#include "tle/support/Log.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace tle {
namespace {

/// Parses a non-negative decimal number of milliseconds, digits only.
bool parseMs(const char *text, int64_t &out) {
  if (*text == '\0')
    return false;
  int64_t value = 0;
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9')
      return false;
    if (value > (kMaxTimeoutMs - (*p - '0')) / 10)
      return false;
    value = value * 10 + (*p - '0');
  }
  out = value;
  return true;
}

/// The $TLE_CUDA_ALLOC spellings of tleAllocType_t.
struct AllocName {
  const char *name;
  tleAllocType_t type;
};
constexpr AllocName kAllocNames[] = {{"cudamalloc", tleAllocCudaMalloc},
                                     {"cumem", tleAllocCuMem},
                                     {"auto", tleAllocAuto}};

bool parseAlloc(const char *text, tleAllocType_t &out) {
  for (const AllocName &a : kAllocNames)
    if (strcmp(text, a.name) == 0) {
      out = a.type;
      return true;
    }
  return false;
}

/// Resolves tleAllocDefault through the environment and the built-in
/// default; checks any other value.
tleResult_t resolveAlloc(int requested, tleAllocType_t &out) {
  if (requested == tleAllocCudaMalloc || requested == tleAllocCuMem ||
      requested == tleAllocAuto) {
    out = static_cast<tleAllocType_t>(requested);
    return tleSuccess;
  }
  if (requested != tleAllocDefault)
    return fail(tleInvalidArgument,
                "config.allocType %d is not a tleAllocType_t", requested);
  const char *env = getenv("TLE_CUDA_ALLOC");
  if (env && *env) {
    if (!parseAlloc(env, out))
      return fail(tleInvalidArgument,
                  "TLE_CUDA_ALLOC='%.64s' is not one of cudamalloc, cumem, "
                  "auto",
                  env);
    return tleSuccess;
  }
  if (!parseAlloc(TLE_DEFAULT_ALLOC_NAME, out))
    return fail(tleInternalError, "TLE_DEFAULT_ALLOC_NAME is not a type");
  return tleSuccess;
}

/// Resolves TLE_ON_ERROR_DEFAULT through $TLE_ON_ERROR (trap or return;
/// unset or empty: trap, the safe default: a barrier that failed leaves the
/// kernel's data wrong, and ending the launch makes that impossible to miss).
tleResult_t resolveOnError(int requested, bool &returns) {
  if (requested == TLE_ON_ERROR_TRAP || requested == TLE_ON_ERROR_RETURN) {
    returns = requested == TLE_ON_ERROR_RETURN;
    return tleSuccess;
  }
  if (requested != TLE_ON_ERROR_DEFAULT)
    return fail(tleInvalidArgument, "config.onError %d is not a tleOnError_t",
                requested);
  const char *env = getenv("TLE_ON_ERROR");
  returns = false;
  if (!env || !*env || strcmp(env, "trap") == 0)
    return tleSuccess;
  if (strcmp(env, "return") == 0) {
    returns = true;
    return tleSuccess;
  }
  return fail(tleInvalidArgument,
              "TLE_ON_ERROR='%.64s' is not one of trap, return", env);
}

} // namespace

tleResult_t resolveConfig(const tleConfig_t *config, ResolvedConfig &out) {
  tleConfig_t c = TLE_CONFIG_INITIALIZER;
  // The fields every tle.h has had; later ones are read only when the
  // caller's struct has them (config->size), else keep their defaults.
  constexpr size_t kFirstSize = offsetof(tleConfig_t, allocType);
  if (config) {
    if (config->size < kFirstSize)
      return fail(tleInvalidArgument,
                  "config.size is %zu, expected at least %zu: initialise the "
                  "config with TLE_CONFIG_INITIALIZER",
                  config->size, kFirstSize);
    if (config->version / 100 != TLE_VERSION_MAJOR)
      return fail(tleInvalidArgument,
                  "config.version %u is not of this library's major version "
                  "%d",
                  config->version, TLE_VERSION_MAJOR);
    memcpy(&c, config, std::min(config->size, sizeof(tleConfig_t)));
  }
  // Read as an int: from C, any int may arrive in the enum's place.
  int backend;
  memcpy(&backend, &c.backend, sizeof(backend));
  if (backend != tleBackendEmulator && backend != tleBackendCuda)
    return fail(tleInvalidArgument, "config.backend %d is not a tleBackend_t",
                backend);
  if (c.nBarriers < 1 || c.nBarriers > kMaxBarriers)
    return fail(tleInvalidArgument, "config.nBarriers %u is not in 1..%u",
                c.nBarriers, kMaxBarriers);
  if (c.nSignals < 1 || c.nSignals > kMaxSignals)
    return fail(tleInvalidArgument, "config.nSignals %u is not in 1..%u",
                c.nSignals, kMaxSignals);
  if (c.nContexts < 1 || c.nContexts > TLE_MAX_CONTEXTS)
    return fail(tleInvalidArgument,
                "config.nContexts %u is not in 1..%u (FlagCX's network "
                "contexts, each with its own signal words)",
                c.nContexts, TLE_MAX_CONTEXTS);

  int64_t timeoutMs = c.timeoutMs;
  const char *timeoutFrom = "config.timeoutMs";
  if (timeoutMs == -1) {
    timeoutMs = TLE_DEFAULT_TIMEOUT_MS;
    timeoutFrom = "the default";
    const char *env = getenv("TLE_BARRIER_TIMEOUT_MS");
    if (env && *env)
      timeoutFrom = "TLE_BARRIER_TIMEOUT_MS";
    // An empty value counts as unset, the way shells unset for one command.
    if (env && *env && !parseMs(env, timeoutMs))
      return fail(tleInvalidArgument,
                  "TLE_BARRIER_TIMEOUT_MS='%.64s' is not a whole number of "
                  "milliseconds in 0..%lld (0 waits forever)",
                  env, static_cast<long long>(kMaxTimeoutMs));
  } else if (timeoutMs < -1 || timeoutMs > kMaxTimeoutMs) {
    return fail(tleInvalidArgument,
                "config.timeoutMs %lld is not -1 (environment) or in 0..%lld",
                static_cast<long long>(timeoutMs),
                static_cast<long long>(kMaxTimeoutMs));
  }

  int64_t bootstrapMs = c.bootstrapTimeoutMs;
  if (bootstrapMs == -1)
    bootstrapMs = kDefaultBootstrapTimeoutMs;
  else if (bootstrapMs < -1 || bootstrapMs > kMaxTimeoutMs)
    return fail(tleInvalidArgument,
                "config.bootstrapTimeoutMs %lld is not -1 (default) or in "
                "0..%lld",
                static_cast<long long>(bootstrapMs),
                static_cast<long long>(kMaxTimeoutMs));

  int alloc;
  memcpy(&alloc, &c.allocType, sizeof(alloc));
  if (tleResult_t r = resolveAlloc(alloc, out.allocType))
    return r;
  int onError;
  memcpy(&onError, &c.onError, sizeof(onError));
  if (tleResult_t r = resolveOnError(onError, out.onErrorReturn))
    return r;

  TLE_LOG(Info, -1,
          "timeouts: device wait %lld ms (%s; 0 waits forever), bootstrap "
          "%lld ms",
          static_cast<long long>(timeoutMs), timeoutFrom,
          static_cast<long long>(bootstrapMs));
  out.backend = c.backend;
  out.nBarriers = c.nBarriers;
  out.nSignals = c.nSignals;
  out.nContexts = c.nContexts;
  out.ranksPerNode = c.ranksPerNode;
  out.timeoutNs = static_cast<uint64_t>(timeoutMs) * 1000000u;
  out.bootstrapTimeoutMs = bootstrapMs;
  return tleSuccess;
}

tleResult_t createBackend(const ResolvedConfig &config, int device,
                          bool multiProcess, bool fdsTravel,
                          std::shared_ptr<Backend> &out) {
  if (config.backend == tleBackendEmulator) {
    // Memory files need the descriptors to travel; there is no fallback.
    if (multiProcess && !fdsTravel)
      return fail(tleNotSupported,
                  "the emulator backend shares memory between processes as "
                  "memory files, whose descriptors this bootstrap cannot "
                  "carry");
    out = createCpuBackend(multiProcess);
    return tleSuccess;
  }
  if (device < 0)
    return fail(tleInvalidArgument, "device %d is not a CUDA device ordinal",
                device);
  std::unique_ptr<Backend> backend;
  CudaBackendOptions options;
  options.allocType = config.allocType;
  options.fdsTravel = fdsTravel;
  if (tleResult_t r = createCudaBackend(device, multiProcess, options, backend))
    return r;
  if (!backend)
    return fail(tleInternalError, "the CUDA backend returned no backend");
  out = std::move(backend);
  return tleSuccess;
}

} // namespace tle
