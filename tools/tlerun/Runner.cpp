//===- Runner.cpp - Communicators, buffers, launches, reports -------------===//
//
// The part of tlerun every build has. Output contract (other tools and tests
// parse it): stdout carries only the --dump JSON lines; the summary,
// progress and every diagnostic go to stderr, so `tlerun ... | jq` works.
//
//===----------------------------------------------------------------------===//

#include "Runner.h"

#include "Device.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <vector>

using namespace tle::run;

namespace {
/// The communicators and buffers of a run, released in the right order.
struct Resources {
  std::vector<tleComm_t> comms;
  /// mems[b][r]: buffer b of rank r.
  std::vector<std::vector<tleMem_t>> mems;
  ~Resources() {
    for (auto &perRank : mems)
      for (tleMem_t mem : perRank)
        if (mem)
          tleMemFree(mem);
    for (tleComm_t comm : comms)
      if (comm)
        tleCommDestroy(comm);
  }
};
} // namespace

static void reportError(const char *what, tleResult_t result) {
  const char *detail = tleGetLastErrorDetail();
  std::fprintf(stderr, "tlerun: %s failed: %s%s%s\n", what,
               tleGetErrorString(result), detail && *detail ? ": " : "",
               detail ? detail : "");
}

/// SplitMix64: a tiny, well-mixed generator for --buffer ...:random.
static uint64_t splitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The initial contents of `spec` on `rank`.
static std::vector<unsigned char> initialContents(const BufferSpec &spec,
                                                  int rank, uint64_t seed) {
  std::vector<unsigned char> bytes(spec.count * elemSize(spec.type));
  for (uint64_t i = 0; i < spec.count; ++i) {
    double value = 0;
    bool isFloat = spec.type == ElemType::F32 || spec.type == ElemType::F64;
    uint64_t r = splitMix(seed ^ splitMix(uint64_t(rank) << 40 ^ i));
    switch (spec.init) {
    case InitKind::Zero:
      value = 0;
      break;
    case InitKind::Iota:
      value = static_cast<double>(i);
      break;
    case InitKind::Rank:
      value = rank;
      break;
    case InitKind::Random:
      value = isFloat ? static_cast<double>(r >> 11) * 0x1.0p-53
                      : static_cast<double>(r % 1000);
      break;
    }
    unsigned char *dst = bytes.data() + i * elemSize(spec.type);
    switch (spec.type) {
    case ElemType::I32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(dst, &v, 4);
      break;
    }
    case ElemType::I64: {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(dst, &v, 8);
      break;
    }
    case ElemType::F32: {
      float v = static_cast<float>(value);
      std::memcpy(dst, &v, 4);
      break;
    }
    case ElemType::F64:
      std::memcpy(dst, &value, 8);
      break;
    }
  }
  return bytes;
}

/// Appends the JSON spelling of element `i` of `bytes`.
static void appendValue(std::string &out, ElemType type,
                        const unsigned char *bytes, uint64_t i) {
  char buf[64];
  const unsigned char *src = bytes + i * elemSize(type);
  std::to_chars_result res{};
  auto appendFloat = [&](double v, auto narrow) {
    if (!std::isfinite(v)) {
      // JSON has no NaN or Inf.
      out += std::isnan(v) ? "\"nan\"" : (v > 0 ? "\"inf\"" : "\"-inf\"");
      return;
    }
    res = std::to_chars(buf, buf + sizeof(buf), narrow);
    out.append(buf, res.ptr);
  };
  switch (type) {
  case ElemType::I32: {
    int32_t v;
    std::memcpy(&v, src, 4);
    res = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, res.ptr);
    break;
  }
  case ElemType::I64: {
    int64_t v;
    std::memcpy(&v, src, 8);
    res = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, res.ptr);
    break;
  }
  case ElemType::F32: {
    float v;
    std::memcpy(&v, src, 4);
    appendFloat(v, v);
    break;
  }
  case ElemType::F64: {
    double v;
    std::memcpy(&v, src, 8);
    appendFloat(v, v);
    break;
  }
  }
}

/// Checks that the kernel's parameters are what tlerun passes.
/// Sum of the barrier epochs of `comm`'s `slots` slots: the barrier rounds
/// completed on this rank since the communicator was created.
static std::optional<uint64_t> epochSum(tleComm_t comm, uint32_t slots) {
  std::vector<uint32_t> epochs(slots);
  if (tleCommGetBarrierEpochs(comm, 0, slots, epochs.data()) != tleSuccess)
    return std::nullopt;
  uint64_t sum = 0;
  for (uint32_t e : epochs)
    sum += e;
  return sum;
}

static bool checkParams(const Options &options, const BundleKernel &meta) {
  size_t passed = 1 + options.buffers.size();
  bool allPtr = std::all_of(meta.params.begin(), meta.params.end(),
                            [](const std::string &p) { return p == "ptr"; });
  if (meta.params.size() == passed && allPtr)
    return true;
  std::string params;
  for (size_t i = 0; i < meta.params.size(); ++i)
    params += (i ? ", " : "") + meta.params[i];
  std::fprintf(stderr,
               "tlerun: kernel '%s' takes (%s) but tlerun passes %zu pointers: "
               "the communicator, then one handle per --buffer (%zu given)\n",
               meta.name.c_str(), params.c_str(), passed,
               options.buffers.size());
  return false;
}

static void printSummary(const Options &options, const LoadedKernel &kernel,
                         const Device &device, std::vector<double> times,
                         std::optional<uint64_t> rounds,
                         std::optional<uint64_t> seed) {
  std::sort(times.begin(), times.end());
  double median =
      times.size() % 2
          ? times[times.size() / 2]
          : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  std::fprintf(stderr,
               "tlerun: kernel %s, %d ranks (%s), grid %ux%ux%u, block "
               "%ux%ux%u, %zu launches",
               kernel.meta.name.c_str(), options.ranks,
               device.backend() == tleBackendCuda ? "cuda" : "emulator",
               options.grid.x, options.grid.y, options.grid.z, options.block.x,
               options.block.y, options.block.z, times.size());
  if (seed)
    std::fprintf(stderr, ", seed %" PRIu64, *seed);
  std::fprintf(stderr, "\n");
  std::fprintf(stderr,
               "tlerun: per-launch time: min %.3f ms, median %.3f ms, max "
               "%.3f ms\n",
               times.front() * 1e3, median * 1e3, times.back() * 1e3);
  if (rounds)
    std::fprintf(stderr,
                 "tlerun: barrier rounds: %" PRIu64 " (%.1f per launch; slot "
                 "epochs of rank 0), %u barrier ops in the kernel\n",
                 *rounds, double(*rounds) / times.size(),
                 kernel.meta.barrierOps);
  else
    std::fprintf(stderr,
                 "tlerun: barrier rounds: unknown, %u barrier ops in "
                 "the kernel\n",
                 kernel.meta.barrierOps);
}

int tle::run::runKernel(const Options &options, const LoadedKernel &kernel) {
  if (!checkParams(options, kernel.meta))
    return 2;
  std::string error;
  std::unique_ptr<Device> device =
      options.target == "cuda" ? createCudaDevice(error) : createEmuDevice();
  if (!device) {
    std::fprintf(stderr, "tlerun: %s\n", error.c_str());
    return 1;
  }

  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.backend = device->backend();
  if (options.barriers)
    config.nBarriers = *options.barriers;
  else if (kernel.meta.barrierSlots)
    config.nBarriers = std::max<uint32_t>(*kernel.meta.barrierSlots, 1);
  else
    config.nBarriers =
        static_cast<uint32_t>(std::max<uint64_t>(options.grid.total(), 64));
  if (options.timeoutMs)
    config.timeoutMs = *options.timeoutMs;

  Resources res;
  res.comms.assign(options.ranks, nullptr);
  if (tleResult_t r =
          tleCommInitAll(res.comms.data(), options.ranks, nullptr, &config);
      r != tleSuccess) {
    std::fill(res.comms.begin(), res.comms.end(), nullptr);
    reportError("tleCommInitAll", r);
    return 1;
  }
  if (!device->load(kernel, res.comms.data(), options.ranks, error)) {
    std::fprintf(stderr, "tlerun: %s\n", error.c_str());
    return 1;
  }

  uint64_t dataSeed = options.seed.value_or(0x5eedull);
  // values[r][p]: parameter p of rank r; args[r][p] points at it.
  std::vector<std::vector<void *>> values(options.ranks), args(options.ranks);
  std::vector<void **> argsPerRank(options.ranks);
  for (int r = 0; r < options.ranks; ++r) {
    void *devComm = nullptr;
    if (tleResult_t e = tleCommGetDevComm(res.comms[r], &devComm);
        e != tleSuccess) {
      reportError("tleCommGetDevComm", e);
      return 1;
    }
    values[r].push_back(devComm);
  }
  for (const BufferSpec &spec : options.buffers) {
    std::vector<tleMem_t> mems(options.ranks, nullptr);
    size_t bytes = spec.count * elemSize(spec.type);
    if (tleResult_t e =
            tleMemAllocAll(res.comms.data(), options.ranks, bytes, mems.data());
        e != tleSuccess) {
      reportError(("allocating buffer " + spec.name).c_str(), e);
      return 1;
    }
    res.mems.push_back(mems);
    for (int r = 0; r < options.ranks; ++r) {
      void *handle = nullptr, *local = nullptr;
      if (tleResult_t e = tleMemGetHandle(mems[r], &handle); e != tleSuccess) {
        reportError("tleMemGetHandle", e);
        return 1;
      }
      if (tleResult_t e = tleMemGetLocalPtr(mems[r], &local); e != tleSuccess) {
        reportError("tleMemGetLocalPtr", e);
        return 1;
      }
      values[r].push_back(handle);
      if (spec.init != InitKind::Zero) {
        std::vector<unsigned char> init = initialContents(spec, r, dataSeed);
        if (!device->write(r, local, init.data(), init.size(), error)) {
          std::fprintf(stderr, "tlerun: initializing %s: %s\n",
                       spec.name.c_str(), error.c_str());
          return 1;
        }
      }
    }
  }
  for (int r = 0; r < options.ranks; ++r) {
    for (void *&value : values[r])
      args[r].push_back(&value);
    argsPerRank[r] = args[r].data();
  }

  std::optional<uint64_t> epochsBefore =
      epochSum(res.comms[0], config.nBarriers);
  LaunchShape shape;
  shape.grid = options.grid;
  shape.block = options.block;
  shape.cooperative = kernel.meta.cooperative;
  shape.seed = options.seed;
  {
    int64_t deviceMs = TLE_DEFAULT_TIMEOUT_MS;
    if (options.timeoutMs)
      deviceMs = *options.timeoutMs;
    else if (const char *env = std::getenv("TLE_BARRIER_TIMEOUT_MS"))
      deviceMs = std::atoll(env);
    shape.watchdogMs = deviceMs > 0 ? uint64_t(deviceMs) + 10000 : 0;
  }
  std::vector<double> times;
  std::optional<uint64_t> seed;
  bool progress = isatty(STDERR_FILENO) && options.repeat > 1;
  auto startAll = std::chrono::steady_clock::now();
  int status = 0;
  for (unsigned i = 0; i < options.repeat; ++i) {
    // Trace only the last launch: the trace of a long run would be huge.
    shape.trace = !options.traceFile.empty() && i + 1 == options.repeat;
    LaunchOutcome outcome = device->launch(shape, argsPerRank.data());
    seed = outcome.seed;
    if (outcome.result != tleSuccess) {
      std::fprintf(stderr, "%stlerun: launch %u of %u failed: %s\n",
                   progress ? "\n" : "", i + 1, options.repeat,
                   tleGetErrorString(outcome.result));
      if (!outcome.message.empty())
        std::fprintf(stderr, "%s%s", outcome.message.c_str(),
                     outcome.message.back() == '\n' ? "" : "\n");
      if (outcome.seed)
        std::fprintf(stderr, "tlerun: replay with --seed %" PRIu64 "\n",
                     *outcome.seed);
      if (!options.traceFile.empty())
        shape.trace = true;
      status = 1;
      break;
    }
    times.push_back(outcome.seconds);
    if (progress &&
        std::chrono::steady_clock::now() - startAll > std::chrono::seconds(1))
      std::fprintf(stderr, "\rtlerun: launch %u/%u", i + 1, options.repeat);
  }
  if (progress &&
      std::chrono::steady_clock::now() - startAll > std::chrono::seconds(1))
    std::fprintf(stderr, "\r\033[K");

  if (!options.traceFile.empty()) {
    std::string trace = device->traceJson();
    if (trace.empty()) {
      std::fprintf(stderr, "tlerun: no trace recorded (--trace needs the "
                           "emulator)\n");
    } else {
      std::ofstream file(options.traceFile, std::ios::binary);
      file << trace;
      if (!file) {
        std::fprintf(stderr, "tlerun: cannot write %s\n",
                     options.traceFile.c_str());
        status = status ? status : 1;
      }
    }
  }
  if (status)
    return status;

  for (const std::string &name : options.dumps) {
    size_t b = 0;
    while (options.buffers[b].name != name)
      ++b;
    const BufferSpec &spec = options.buffers[b];
    std::vector<unsigned char> bytes(spec.count * elemSize(spec.type));
    for (int r = 0; r < options.ranks; ++r) {
      void *local = nullptr;
      tleMemGetLocalPtr(res.mems[b][r], &local);
      if (!device->read(r, bytes.data(), local, bytes.size(), error)) {
        std::fprintf(stderr, "tlerun: reading %s: %s\n", name.c_str(),
                     error.c_str());
        return 1;
      }
      std::string line = "{\"rank\": " + std::to_string(r) +
                         ", \"buffer\": \"" + name + "\", \"values\": [";
      for (uint64_t i = 0; i < spec.count; ++i) {
        if (i)
          line += ", ";
        appendValue(line, spec.type, bytes.data(), i);
      }
      line += "]}\n";
      std::fputs(line.c_str(), stdout);
    }
  }
  std::fflush(stdout);

  if (options.repeatGiven) {
    std::optional<uint64_t> rounds;
    if (std::optional<uint64_t> after =
            epochSum(res.comms[0], config.nBarriers);
        after && epochsBefore)
      rounds = *after - *epochsBefore;
    printSummary(options, kernel, *device, times, rounds, seed);
  }
  return 0;
}
