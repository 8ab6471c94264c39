//===- Runner.cpp - Communicators, buffers, launches, reports -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The part of tlerun every build has. Output contract (other tools and tests
// parse it): stdout carries only the --dump JSON lines, or with --json one
// JSON object (Report.h); the summary, progress and every diagnostic go to
// stderr, so `tlerun ... | jq` works.
// Buffers are filled and dumped in chunks, so a large buffer costs its own
// memory only; before anything is allocated, the run's memory (buffers on
// every rank, the emulator's threads) is checked against the machine's.
//
//===----------------------------------------------------------------------===//

#include "Runner.h"

#include "Device.h"
#include "Report.h"

#include "tle/emu.h"
#include "tle/support/Json.h"
#include "tle/support/Log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
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

static void reportError(Report &report, const std::string &what,
                        tleResult_t result) {
  const char *detail = tleGetLastErrorDetail();
  report.error("setup", what + " failed: " + tleGetErrorString(result) +
                            (detail && *detail ? ": " : "") +
                            (detail ? detail : ""));
}

/// SplitMix64: a tiny, well-mixed generator for --buffer ...:random.
static uint64_t splitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Bytes handled at once when filling or dumping a buffer.
constexpr uint64_t kChunkBytes = uint64_t(1) << 20;

/// Elements [first, first + n) of `spec`'s initial contents on `rank`.
static void initialContents(const BufferSpec &spec, int rank, uint64_t seed,
                            uint64_t first, uint64_t n, unsigned char *out) {
  size_t size = elemSize(spec.type);
  bool isFloat = spec.type == ElemType::F32 || spec.type == ElemType::F64;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t i = first + k;
    uint64_t r = splitMix(seed ^ splitMix(uint64_t(rank) << 40 ^ i));
    // Integers are computed as integers: an iota past 2^31 wraps in an i32
    // instead of converting an out-of-range double.
    int64_t integer = 0;
    double real = 0;
    switch (spec.init) {
    case InitKind::Zero:
      break;
    case InitKind::Iota:
      integer = static_cast<int64_t>(i);
      real = static_cast<double>(i);
      break;
    case InitKind::Rank:
      integer = rank;
      real = rank;
      break;
    case InitKind::Random:
      integer = static_cast<int64_t>(r % 1000);
      real = isFloat ? static_cast<double>(r >> 11) * 0x1.0p-53
                     : static_cast<double>(integer);
      break;
    }
    unsigned char *dst = out + k * size;
    switch (spec.type) {
    case ElemType::I32: {
      int32_t v = static_cast<int32_t>(static_cast<uint32_t>(integer));
      std::memcpy(dst, &v, 4);
      break;
    }
    case ElemType::I64:
      std::memcpy(dst, &integer, 8);
      break;
    case ElemType::F32: {
      float v = static_cast<float>(real);
      std::memcpy(dst, &v, 4);
      break;
    }
    case ElemType::F64:
      std::memcpy(dst, &real, 8);
      break;
    }
  }
}

/// Appends element `i` of `bytes` to the JSON being written.
static void appendValue(tle::json::Writer &w, ElemType type,
                        const unsigned char *bytes, uint64_t i) {
  const unsigned char *src = bytes + i * elemSize(type);
  auto load = [&](auto value) {
    std::memcpy(&value, src, sizeof(value));
    w.value(value);
  };
  switch (type) {
  case ElemType::I32:
    return load(int32_t());
  case ElemType::I64:
    return load(int64_t());
  case ElemType::F32:
    return load(float());
  case ElemType::F64:
    return load(double());
  }
}

/// Sum of the barrier epochs of `comm`'s `slots` slots of every team
/// (intra, world, inter): the barrier rounds completed on this rank since
/// the communicator was created.
static std::optional<uint64_t> epochSum(tleComm_t comm, uint32_t slots) {
  std::vector<uint32_t> epochs(size_t(slots) * 3);
  if (tleCommGetBarrierEpochs(comm, 0, slots * 3, epochs.data()) != tleSuccess)
    return std::nullopt;
  uint64_t sum = 0;
  for (uint32_t e : epochs)
    sum += e;
  return sum;
}

namespace {
/// What tlerun passes for each kernel parameter after the communicator: the
/// handle of --buffer `index`, or the value of --arg `index`.
struct ParamBinding {
  bool buffer = true;
  size_t index = 0;
};
} // namespace

/// Binds the kernel's parameters to what the command line gives: %comm
/// first, then pointers to the --buffer handles and scalars to the --arg
/// values, each in order. False, after the report, when they do not match.
static bool bindParams(const Options &options, const BundleKernel &meta,
                       std::vector<ParamBinding> &bindings,
                       std::vector<uint64_t> &scalars, Report &report) {
  size_t pointers = 0, values = 0;
  bool commFirst = !meta.params.empty() && meta.params[0] == "ptr";
  for (size_t i = 1; i < meta.params.size(); ++i)
    ++(meta.params[i] == "ptr" ? pointers : values);
  if (!commFirst || pointers != options.buffers.size() ||
      values != options.args.size()) {
    std::string params;
    for (size_t i = 0; i < meta.params.size(); ++i)
      params += (i ? ", " : "") + meta.params[i];
    report.error("params", "kernel '" + meta.name + "' takes (" + params +
                               ") but tlerun passes the communicator, then " +
                               std::to_string(options.buffers.size()) +
                               " buffer handles (one per --buffer) and " +
                               std::to_string(options.args.size()) +
                               " scalars (one per --arg), in parameter order");
    return false;
  }
  size_t buffer = 0;
  for (size_t i = 1; i < meta.params.size(); ++i) {
    if (meta.params[i] == "ptr") {
      bindings.push_back({true, buffer++});
      continue;
    }
    uint64_t value = 0;
    std::string why;
    const std::string &text = options.args[scalars.size()];
    if (!parseScalar(meta.params[i], text, value, why)) {
      report.error("params", "--arg " + text + " (parameter " +
                                 std::to_string(i) + " of kernel '" +
                                 meta.name + "'): " + why);
      return false;
    }
    bindings.push_back({false, scalars.size()});
    scalars.push_back(value);
  }
  return true;
}

namespace {
/// The --trace file: one Chrome/Perfetto document that grows by one launch
/// at a time and is complete JSON after each (on a seekable file), so that
/// a failing launch, or a process the emulator ends, leaves the launches
/// before it. Each launch starts with a global instant event "launch K" and
/// its events carry "launch": K; ts is the emulator's scheduler step,
/// counted across launches, or the GPUs' %globaltimer from the first event
/// (the document's otherData.clock says which).
class TraceFile {
public:
  /// A trace stops growing past this size (a long --repeat would fill the
  /// disk); the note says after which launch.
  static constexpr uint64_t kMaxBytes = uint64_t(1) << 30;

  ~TraceFile() { close(); }

  bool open(const std::string &path, tle::TraceClock clock,
            std::string &error) {
    this->path = path;
    file = std::fopen(path.c_str(), "wb");
    if (!file) {
      error = "cannot write " + path + ": " + std::strerror(errno);
      return false;
    }
    seekable = std::fseek(file, 0, SEEK_CUR) == 0;
    return write(tle::traceDocumentHead(clock)) && closeDocument(error);
  }

  /// Adds launch `launch` (1-based): its `marker` and its `events`.
  bool append(uint64_t launch, const std::string &marker,
              const std::string &events, std::string &error) {
    if (!file || stopped)
      return true;
    if (bytes + events.size() > kMaxBytes) {
      stopped = true;
      std::fprintf(stderr,
                   "tlerun: %s stops before launch %" PRIu64
                   " (1 GiB of trace)\n",
                   path.c_str(), launch);
      return true;
    }
    long tail = static_cast<long>(std::strlen(tle::kTraceDocumentTail));
    if (seekable && std::fseek(file, -tail, SEEK_END) != 0)
      return fail(error);
    bool first = !any;
    any = true;
    if (!write((first ? "" : ",") + marker) ||
        (!events.empty() && !write("," + events)))
      return fail(error);
    return closeDocument(error);
  }

  /// The descriptor the fatal hook ends the document on: a file that is
  /// not seekable and still open; else -1 (a seekable one is complete).
  int fatalFd() const { return file && !seekable ? fileno(file) : -1; }

  /// Finishes the document; false with `error` on a write error.
  bool close(std::string *error = nullptr) {
    if (!file)
      return true;
    bool ok = seekable || write(tle::kTraceDocumentTail);
    ok = std::fclose(file) == 0 && ok;
    file = nullptr;
    if (!ok && error)
      *error = "cannot write " + path + ": " + std::strerror(errno);
    return ok;
  }

private:
  bool write(const std::string &text) {
    bytes += text.size();
    return std::fwrite(text.data(), 1, text.size(), file) == text.size();
  }
  /// On a seekable file the closing "]}" is always there (and overwritten
  /// by the next append). A pipe gets each launch as it is appended, so
  /// that the fatal hook (Report::armFatal) need only add the "]}".
  bool closeDocument(std::string &error) {
    if (seekable && !write(tle::kTraceDocumentTail))
      return fail(error);
    if (std::fflush(file) != 0)
      return fail(error);
    return true;
  }
  bool fail(std::string &error) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }

  std::string path;
  std::FILE *file = nullptr;
  bool seekable = false, any = false, stopped = false;
  uint64_t bytes = 0;
};

/// "1.5 GiB", "300 MiB": a size for a message.
std::string humanBytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / (1 << 30));
  else
    std::snprintf(buf, sizeof buf, "%" PRIu64 " MiB",
                  (bytes + (1 << 20) - 1) >> 20);
  return buf;
}
} // namespace

/// The shape of every launch of the run, from the command line and the
/// kernel's metadata.
static LaunchShape launchShape(const Options &options,
                               const LoadedKernel &kernel) {
  LaunchShape shape;
  shape.grid = options.grid;
  shape.block = options.block;
  shape.cooperative = kernel.meta.cooperative;
  shape.seed = options.seed;
  shape.stackBytes = options.stackBytes;
  shape.netLatencySteps = options.netLatencySteps;
  shape.trace = !options.traceFile.empty();
  shape.raceCheck = options.raceCheck && options.target == "host";
  int64_t deviceMs = options.timeoutMs.value_or(TLE_DEFAULT_TIMEOUT_MS);
  shape.watchdogMs = deviceMs > 0 ? uint64_t(deviceMs) + 10000 : 0;
  return shape;
}

/// Refuses what cannot fit before allocating any of it. Buffers of the
/// emulator are host memory, one copy per rank (sizes were checked for
/// overflow while parsing). False after the report.
static bool checkMemory(const Options &options, Device &device,
                        const LaunchShape &shape, Report &report) {
  std::string error;
  uint64_t hostBytes = 0;
  if (!device.plan(shape, options.ranks, hostBytes, error)) {
    report.error("setup", error);
    return false;
  }
  if (device.backend() != tleBackendEmulator)
    return true;
  uint64_t bufferBytes = 0, total = 0;
  bool overflow = false;
  for (const BufferSpec &spec : options.buffers)
    overflow |= __builtin_add_overflow(
        bufferBytes, spec.bytes * uint64_t(options.ranks), &bufferBytes);
  overflow |= __builtin_add_overflow(bufferBytes, hostBytes, &total);
  uint64_t memory = tle::emu::physicalMemoryBytes();
  if (overflow || (memory && total > memory)) {
    report.error(
        "setup",
        "the run needs about " +
            (overflow ? std::string("2^64 bytes") : humanBytes(total)) +
            " (buffers " + humanBytes(bufferBytes) + " on " +
            std::to_string(options.ranks) + " ranks, the launch's threads " +
            humanBytes(hostBytes) + "), more than this machine's " +
            humanBytes(memory) +
            ": use smaller --buffer counts, fewer --ranks or a "
            "smaller --grid/--block");
    return false;
  }
  return true;
}

/// The communicators' configuration: barrier slots and signal words from
/// the command line, else from the kernel's metadata, else the defaults.
static tleConfig_t commConfig(const Options &options, const BundleKernel &meta,
                              tleBackend_t backend) {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  config.backend = backend;
  if (options.barriers)
    config.nBarriers = *options.barriers;
  else if (meta.barrierSlots)
    config.nBarriers = std::max<uint32_t>(*meta.barrierSlots, 1);
  else
    config.nBarriers = static_cast<uint32_t>(
        std::clamp<uint64_t>(options.grid.total(), 64, kMaxDefaultBarriers));
  // The runtime gives every rank as many counter words as signal words
  // (DevComm::nCounters), so the count serves the larger of the two needs.
  if (options.signals)
    config.nSignals = *options.signals;
  else if (meta.signalWords && meta.counterWords)
    config.nSignals =
        std::max<uint32_t>({*meta.signalWords, *meta.counterWords, 1});
  else
    config.nSignals = kDefaultSignals;
  if (options.timeoutMs)
    config.timeoutMs = *options.timeoutMs;
  if (options.nodes > 1)
    config.ranksPerNode = static_cast<uint32_t>(options.ranksPerNode);
  return config;
}

/// Creates every rank's communicator into `res`. False after the report.
static bool createComms(const Options &options, const tleConfig_t &config,
                        Resources &res, Report &report) {
  res.comms.assign(options.ranks, nullptr);
  if (tleResult_t r =
          tleCommInitAll(res.comms.data(), options.ranks, nullptr, &config);
      r != tleSuccess) {
    std::fill(res.comms.begin(), res.comms.end(), nullptr);
    reportError(report, "tleCommInitAll", r);
    return false;
  }
  return true;
}

/// Appends each rank's DevComm pointer to `values`, the first value of
/// every rank. False after the report.
static bool addDevComms(const Resources &res,
                        std::vector<std::vector<void *>> &values,
                        Report &report) {
  for (size_t r = 0; r < res.comms.size(); ++r) {
    void *devComm = nullptr;
    if (tleResult_t e = tleCommGetDevComm(res.comms[r], &devComm);
        e != tleSuccess) {
      reportError(report, "tleCommGetDevComm", e);
      return false;
    }
    values[r].push_back(devComm);
  }
  return true;
}

/// Writes rank `rank`'s initial contents of `spec` into its copy at
/// `local`, a chunk at a time. False after the report.
static bool fillBuffer(const BufferSpec &spec, int rank, uint64_t dataSeed,
                       void *local, Device &device, Report &report) {
  if (spec.init == InitKind::Zero)
    return true;
  size_t size = elemSize(spec.type);
  uint64_t perChunk = kChunkBytes / size;
  std::vector<unsigned char> chunk(std::min(spec.bytes, perChunk * size));
  std::string error;
  for (uint64_t first = 0; first < spec.count; first += perChunk) {
    uint64_t n = std::min(perChunk, spec.count - first);
    initialContents(spec, rank, dataSeed, first, n, chunk.data());
    if (!device.write(rank, static_cast<char *>(local) + first * size,
                      chunk.data(), n * size, error)) {
      report.error("setup", "initializing " + spec.name + ": " + error);
      return false;
    }
  }
  return true;
}

/// Allocates and fills every --buffer on every rank into `res`, appends
/// each rank's handles to `values` in --buffer order, and names the buffers
/// in `shape` for the race checker. False after the report.
static bool createBuffers(const Options &options, Device &device,
                          Resources &res, LaunchShape &shape,
                          std::vector<std::vector<void *>> &values,
                          Report &report) {
  uint64_t dataSeed = options.seed.value_or(0x5eedull);
  for (const BufferSpec &spec : options.buffers) {
    // One buffer of the whole job: tleMemAllocAll takes one node's
    // communicators, and the runtime pairs the nodes' k-th buffers
    // (SymMem::worldPtrs), so INTER and WORLD transfers reach every rank.
    std::vector<tleMem_t> mems(options.ranks, nullptr);
    for (int n = 0; n < options.nodes; ++n) {
      int first = n * options.ranksPerNode;
      if (tleResult_t e =
              tleMemAllocAll(res.comms.data() + first, options.ranksPerNode,
                             spec.bytes, mems.data() + first);
          e != tleSuccess) {
        res.mems.push_back(mems);
        reportError(report, "allocating buffer " + spec.name, e);
        return false;
      }
      shape.bufferNames.push_back({mems[first], spec.name});
    }
    res.mems.push_back(mems);
    for (int r = 0; r < options.ranks; ++r) {
      void *handle = nullptr, *local = nullptr;
      if (tleResult_t e = tleMemGetHandle(mems[r], &handle); e != tleSuccess) {
        reportError(report, "tleMemGetHandle", e);
        return false;
      }
      if (tleResult_t e = tleMemGetLocalPtr(mems[r], &local); e != tleSuccess) {
        reportError(report, "tleMemGetLocalPtr", e);
        return false;
      }
      values[r].push_back(handle);
      if (!fillBuffer(spec, r, dataSeed, local, device, report))
        return false;
    }
  }
  return true;
}

namespace {
/// Every rank's kernel arguments: values[r] is rank r's communicator, then
/// its buffer handles in --buffer order; args[r][p] points at parameter p
/// of rank r (the bindings say which value); perRank[r] is args[r]'s data,
/// what Device::launch takes.
struct LaunchArgs {
  std::vector<std::vector<void *>> values, args;
  std::vector<void **> perRank;

  explicit LaunchArgs(int ranks) : values(ranks), args(ranks), perRank(ranks) {}

  /// Points every rank's arguments at its values and at `scalars` (which
  /// every rank shares), once the values are complete.
  void bind(const std::vector<ParamBinding> &bindings,
            std::vector<uint64_t> &scalars) {
    for (size_t r = 0; r < values.size(); ++r) {
      args[r].push_back(&values[r][0]);
      for (const ParamBinding &b : bindings)
        args[r].push_back(b.buffer
                              ? static_cast<void *>(&values[r][1 + b.index])
                              : static_cast<void *>(&scalars[b.index]));
      perRank[r] = args[r].data();
    }
  }
};

/// What the launches leave for the summary.
struct LaunchRecord {
  std::vector<double> times;
  /// The emulator's schedule seed of the last launch.
  std::optional<uint64_t> seed;
};
} // namespace

/// Launches the kernel --repeat times, each launch's trace appended to
/// --trace's file; stops at the first failing launch. False after the
/// report.
static bool launchAll(const Options &options, Device &device,
                      const LaunchShape &shape, void **const *argsPerRank,
                      LaunchRecord &record, Report &report) {
  std::string error;
  TraceFile trace;
  if (shape.trace &&
      (!trace.open(options.traceFile, device.traceClock(), error) ||
       !device.startTrace(error))) {
    report.error("setup", error);
    return false;
  }
  bool progress = isatty(STDERR_FILENO) && options.repeat > 1;
  auto startAll = std::chrono::steady_clock::now();
  uint64_t traceTs = 0;
  for (unsigned i = 0; i < options.repeat; ++i) {
    report.armFatal(i + 1, shape.seed, trace.fatalFd());
    LaunchOutcome outcome = device.launch(shape, argsPerRank);
    record.seed = outcome.seed;
    if (i == 0 && !outcome.raceCheckSkipped.empty())
      std::fprintf(stderr, "tlerun: no race check: %s\n",
                   outcome.raceCheckSkipped.c_str());
    // Every launch goes into the trace, the failing one too, before its
    // report: what it recorded up to the stop is often the explanation.
    if (shape.trace) {
      std::string marker;
      std::string events = device.traceLaunch(i + 1, traceTs, marker);
      if (!trace.append(i + 1, marker, events, error)) {
        if (progress)
          std::fputs("\n", stderr);
        report.error("launch", error);
        return false;
      }
      traceTs += outcome.steps + 1;
    }
    TLE_LOG(Trace, -1, "tlerun: launch %u of %u: %s, %.3f ms", i + 1,
            options.repeat, tleGetErrorString(outcome.result),
            outcome.seconds * 1e3);
    if (outcome.result != tleSuccess) {
      report.launchFailed(i + 1, options.repeat, outcome, progress);
      if (shape.trace && trace.close(&error))
        std::fprintf(stderr, "tlerun: the trace of launches 1 to %u is in %s\n",
                     i + 1, options.traceFile.c_str());
      return false;
    }
    record.times.push_back(outcome.seconds);
    if (progress &&
        std::chrono::steady_clock::now() - startAll > std::chrono::seconds(1))
      std::fprintf(stderr, "\rtlerun: launch %u/%u", i + 1, options.repeat);
  }
  if (progress &&
      std::chrono::steady_clock::now() - startAll > std::chrono::seconds(1))
    std::fprintf(stderr, "\r\033[K");
  if (!trace.close(&error)) {
    report.error("launch", error);
    return false;
  }
  return true;
}

/// Prints every --dump buffer of every rank, one JSON line (or --json
/// entry) each, read a chunk at a time. False after the report.
static bool dumpBuffers(const Options &options, Device &device,
                        const Resources &res, Report &report) {
  std::string error;
  std::vector<unsigned char> chunk;
  for (const std::string &name : options.dumps) {
    size_t b = 0;
    while (options.buffers[b].name != name)
      ++b;
    const BufferSpec &spec = options.buffers[b];
    size_t size = elemSize(spec.type);
    uint64_t perChunk = kChunkBytes / size;
    chunk.resize(std::min(spec.bytes, perChunk * size));
    for (int r = 0; r < options.ranks; ++r) {
      void *local = nullptr;
      tleMemGetLocalPtr(res.mems[b][r], &local);
      std::string text;
      tle::json::Writer w(text);
      report.dumpBegin();
      w.beginObject().key("rank").value(r).key("buffer").value(name);
      w.key("values").beginArray();
      for (uint64_t first = 0; first < spec.count; first += perChunk) {
        uint64_t n = std::min(perChunk, spec.count - first);
        if (!device.read(r, chunk.data(),
                         static_cast<const char *>(local) + first * size,
                         n * size, error)) {
          if (!report.isJson())
            std::fputs("\n", stdout);
          report.error("dump", "reading " + name + ": " + error);
          return false;
        }
        for (uint64_t k = 0; k < n; ++k)
          appendValue(w, spec.type, chunk.data(), k);
        report.dumpChunk(text);
      }
      w.endArray().endObject();
      report.dumpEnd(text);
    }
  }
  std::fflush(stdout);
  return true;
}

int tle::run::runKernel(const Options &options, const LoadedKernel &kernel,
                        Report &report) {
  report.setRun(options, kernel.meta);
  std::vector<ParamBinding> bindings;
  // Every rank's args point at the same scalar values.
  std::vector<uint64_t> scalars;
  if (!bindParams(options, kernel.meta, bindings, scalars, report))
    return 2;
  std::string error;
  std::unique_ptr<Device> device =
      options.target == "cuda" ? createCudaDevice(error) : createEmuDevice();
  if (!device) {
    report.error("setup", error);
    return 1;
  }
  LaunchShape shape = launchShape(options, kernel);
  if (!checkMemory(options, *device, shape, report))
    return 1;

  tleConfig_t config = commConfig(options, kernel.meta, device->backend());
  Resources res;
  LaunchArgs args(options.ranks);
  if (!createComms(options, config, res, report))
    return 1;
  if (!device->load(kernel, res.comms.data(), options.ranks, error)) {
    report.error("load", error);
    return 1;
  }
  if (!addDevComms(res, args.values, report) ||
      !createBuffers(options, *device, res, shape, args.values, report))
    return 1;
  args.bind(bindings, scalars);
  TLE_LOG(Info, -1,
          "tlerun: kernel %s (%zu parameters) from %s on %d ranks, grid "
          "%ux%ux%u, block %ux%ux%u, %u barrier slots, %u launches",
          kernel.meta.name.c_str(), kernel.meta.params.size(),
          options.input.c_str(), options.ranks, options.grid.x, options.grid.y,
          options.grid.z, options.block.x, options.block.y, options.block.z,
          config.nBarriers, options.repeat);

  std::optional<uint64_t> epochsBefore =
      epochSum(res.comms[0], config.nBarriers);
  LaunchRecord record;
  if (!launchAll(options, *device, shape, args.perRank.data(), record, report))
    return 1;
  if (!dumpBuffers(options, *device, res, report))
    return 1;

  if (options.repeatGiven || report.isJson()) {
    std::optional<uint64_t> rounds;
    if (std::optional<uint64_t> after =
            epochSum(res.comms[0], config.nBarriers);
        after && epochsBefore)
      rounds = *after - *epochsBefore;
    report.summary(options, kernel, device->backend(), record.times, rounds,
                   record.seed, options.repeatGiven);
  }
  return 0;
}
