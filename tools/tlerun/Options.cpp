//===- Options.cpp - Parsing tlerun's command line ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A small hand-written parser (`--name value` or `--name=value`) so that the
// runtime half of tlerun needs nothing beyond the C++ standard library and
// TLE's own headers. Every malformed value is an error that names the
// option; an option that takes one value may be given once.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "tle/emu.h"
#include "tle/support/Log.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <string_view>

using namespace tle::run;

size_t tle::run::elemSize(ElemType type) {
  return type == ElemType::I32 || type == ElemType::F32 ? 4 : 8;
}

const char *tle::run::elemName(ElemType type) {
  switch (type) {
  case ElemType::I32:
    return "i32";
  case ElemType::I64:
    return "i64";
  case ElemType::F32:
    return "f32";
  case ElemType::F64:
    return "f64";
  }
  return "?";
}

const char *tle::run::usageText() {
  return R"(USAGE: tlerun KERNEL.mlir|BUNDLE --kernel NAME --ranks N [options]

Runs one kernel on N ranks of one node: on the CPU emulator (--target host,
the default) or on the node's GPUs (--target cuda); on the emulator, also on
M simulated nodes of N ranks each (--nodes M). KERNEL is an MLIR file
(compiled in-process; needs a tlerun built with the compiler) or a bundle
written by tlec.

Kernel parameters: (%comm: !llvm.ptr, %mem0: !llvm.ptr, ...) - the device
communicator, then one symmetric-buffer handle per --buffer, in order. Use
tle.local_pointer / tle.intra_pointer on the handles inside the kernel.
Scalar parameters (i1, i8, i16, i32, i64, f16, f32, f64, index) may stand
anywhere after %comm: the pointer parameters take the --buffer handles in
order, the scalars the --arg values in order.

OPTIONS:
  --kernel NAME            kernel to launch (required)
  --ranks N                number of ranks, 1-128 (required); with --nodes,
                           ranks per node
  --nodes M                simulated nodes of N ranks each (emulator; the
                           world is M x N ranks, at most 128; default 1):
                           teams inter and world cross nodes over the
                           emulator's network, intra stays in the node
  --net-latency-steps L    the simulated network's latency in scheduler
                           steps (emulator time; default 64): a net add
                           lands L steps after it is sent
  --grid G                 blocks per rank: X, XxY or XxYxZ (default 1)
  --block B                threads per block: X, XxY or XxYxZ (default 1,
                           at most 1024 threads)
  --target host|cuda       emulator (default) or GPUs
  --buffer NAME:TYPE:COUNT[:INIT]
                           a symmetric buffer of COUNT elements per rank;
                           TYPE i32|i64|f32|f64; INIT zero (default), iota
                           (element i = i), rank (= the rank) or random
                           (seeded by --seed; ints in [0,1000), floats [0,1))
  --repeat K               K launches; prints a summary (per-launch time
                           min/median/max, barrier rounds) on stderr
  --dump NAME              after the run, print one JSON line per rank on
                           stdout: {"rank": R, "buffer": "NAME", "values": [...]}
  --timeout-ms T           barrier wait deadline, and on the emulator how
                           long a launch may go without progress (0 =
                           forever; default: the environment's
                           TLE_BARRIER_TIMEOUT_MS or 10000)
  --seed S                 emulator schedule and random-init seed (default:
                           TLE_EMU_SEED, else a fresh one per launch)
  --trace FILE.json        write a Chrome/Perfetto trace of the barrier
                           events of every launch: on the emulator with the
                           ops' source lines (ts: scheduler steps), on GPUs
                           from a device ring (ts: %globaltimer)
  --no-race-check          do not check symmetric-buffer accesses for data
                           races (emulator; the check is on by default and
                           a race fails the launch with its report)
  --barriers N             barrier slots, 1 to 1048576 (default: what the
                           kernel's constant indices need, else
                           max(grid size, 64) up to 65536)
  --signals N              signal words per rank, 1 to 1048576 (default:
                           what the kernel's constant signal indices need,
                           at least 1; 64 if an index is a runtime value)
  --stack-bytes N          emulator fiber stack per thread: a multiple of the
                           page size from 16K to 64M (suffix K or M; default
                           64K)
  --device-lib FILE.bc     device library for compiling .mlir for cuda
  --arg VALUE              the next scalar kernel parameter, in declaration
                           order: i1 0|1|true|false; i8..i64 and index a
                           decimal or 0x-hex integer (negative or up to
                           2^N-1); f16, f32, f64 a decimal number, inf or
                           nan (f16 rounded from the nearest f32)
  --json                   print one JSON object on stdout instead: the
                           run (kernel, ranks, shape, seed), the dumps, the
                           summary, and on failure the error with the
                           device error record; exit status unchanged
  --help, --version

Options that take one value may be given once (--buffer, --dump and --arg
repeat). TLE_DEBUG=WARN|INFO|TRACE logs what the runtime does (stderr, or
TLE_DEBUG_FILE).

Exit status: 0 on success; 1 when a launch fails (data race, deadlock,
barrier slot misuse, timeout, slot out of range, stack overflow, a launch or
buffers too big for the machine,
...: the report is on stderr) or the kernel file cannot be used; 2 on a
usage error (options, TLE_EMU_SEED, TLE_BARRIER_TIMEOUT_MS, TLE_DEBUG) or
when the kernel's parameters do not match the buffers and --arg values.
)";
}

static bool parseU64(std::string_view text, uint64_t &out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

static bool parseExtent(std::string_view text, Extent &out) {
  uint32_t dims[3] = {1, 1, 1};
  int n = 0;
  size_t pos = 0;
  while (true) {
    if (n == 3)
      return false;
    size_t end = text.find_first_of("x,", pos);
    std::string_view part =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos
                                                       : end - pos);
    uint64_t value = 0;
    if (!parseU64(part, value) || value == 0 || value > UINT32_MAX)
      return false;
    dims[n++] = static_cast<uint32_t>(value);
    if (end == std::string_view::npos)
      break;
    pos = end + 1;
  }
  out = {dims[0], dims[1], dims[2]};
  return true;
}

static bool parseBuffer(std::string_view text, BufferSpec &out,
                        std::string &error) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    size_t end = text.find(':', pos);
    parts.push_back(text.substr(pos, end == std::string_view::npos
                                         ? std::string_view::npos
                                         : end - pos));
    if (end == std::string_view::npos)
      break;
    pos = end + 1;
  }
  if (parts.size() < 3 || parts.size() > 4 || parts[0].empty()) {
    error = "expected NAME:TYPE:COUNT[:INIT]";
    return false;
  }
  out.name = parts[0];
  if (parts[1] == "i32")
    out.type = ElemType::I32;
  else if (parts[1] == "i64")
    out.type = ElemType::I64;
  else if (parts[1] == "f32")
    out.type = ElemType::F32;
  else if (parts[1] == "f64")
    out.type = ElemType::F64;
  else {
    error = "unknown type '" + std::string(parts[1]) +
            "' (expected i32, i64, f32 or f64)";
    return false;
  }
  if (!parseU64(parts[2], out.count) || out.count == 0) {
    error = "COUNT must be a positive integer";
    return false;
  }
  if (__builtin_mul_overflow(out.count, uint64_t(elemSize(out.type)),
                             &out.bytes)) {
    error = "COUNT " + std::to_string(out.count) + " of " + elemName(out.type) +
            " is more than 2^64 bytes";
    return false;
  }
  std::string_view init = parts.size() == 4 ? parts[3] : "zero";
  if (init == "zero")
    out.init = InitKind::Zero;
  else if (init == "iota")
    out.init = InitKind::Iota;
  else if (init == "rank")
    out.init = InitKind::Rank;
  else if (init == "random")
    out.init = InitKind::Random;
  else {
    error = "unknown INIT '" + std::string(init) +
            "' (expected zero, iota, rank or random)";
    return false;
  }
  return true;
}

/// Parses a byte count with an optional K or M suffix (binary units).
static bool parseBytes(std::string_view text, uint64_t &out) {
  uint64_t scale = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'k'))
    scale = uint64_t(1) << 10;
  else if (!text.empty() && (text.back() == 'M' || text.back() == 'm'))
    scale = uint64_t(1) << 20;
  if (scale != 1)
    text.remove_suffix(1);
  uint64_t value = 0;
  return parseU64(text, value) && !__builtin_mul_overflow(value, scale, &out);
}

/// The environment variables tlerun depends on, checked as strictly as the
/// runtime checks them, so that a typo is a usage error here rather than a
/// failed launch later.
static bool checkEnvironment(Options &out, std::string &error) {
  if (!out.timeoutMs) {
    // The rule of tleConfig_t::timeoutMs = -1 (runtime/host/comm/Config.cpp):
    // digits only, nanoseconds within 63 bits; empty counts as unset.
    if (const char *env = std::getenv("TLE_BARRIER_TIMEOUT_MS"); env && *env) {
      uint64_t ms = 0;
      bool digits = std::all_of(env, env + std::strlen(env),
                                [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || !parseU64(env, ms) || ms > uint64_t(kMaxTimeoutMs)) {
        error = "TLE_BARRIER_TIMEOUT_MS='" + std::string(env).substr(0, 64) +
                "' is not a whole number of milliseconds in 0.." +
                std::to_string(kMaxTimeoutMs) + " (0 waits forever)";
        return false;
      }
      out.timeoutMs = static_cast<int64_t>(ms);
    }
  }
  if (out.target == "host" && !out.seed) {
    std::optional<uint64_t> seed;
    if (tle::emu::environmentSeed(seed, error) != tleSuccess)
      return false;
  }
  if (const char *env = std::getenv("TLE_DEBUG")) {
    tle::log::Level level;
    if (!tle::log::parseLevel(env, level)) {
      error = "TLE_DEBUG='" + std::string(env).substr(0, 32) +
              "' is not WARN, INFO or TRACE";
      return false;
    }
  }
  return true;
}

bool tle::run::wantsJson(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--json")
      return true;
  return false;
}

/// IEEE binary16 bits of `value`, rounded to nearest even.
static uint16_t toHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) // inf or nan (a quiet nan keeps a payload bit)
    return sign | 0x7C00 | (mantissa ? 0x200 : 0);
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31)
    return sign | 0x7C00;
  // Normal halves keep 10 of the 23 mantissa bits; subnormal ones fewer.
  uint32_t full = mantissa | (exponent ? 0x800000 : 0);
  int shift = e > 0 ? 13 : 14 - e;
  if (shift > 24)
    return sign;
  uint32_t kept = full >> shift, rest = full & ((1u << shift) - 1),
           half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept; // may carry into the exponent, which is still right
  if (e > 0)
    return sign | static_cast<uint16_t>((uint32_t(e) << 10) + kept - 0x400);
  return sign | static_cast<uint16_t>(kept);
}

bool tle::run::parseScalar(const std::string &type, const std::string &text,
                           uint64_t &out, std::string &error) {
  out = 0;
  int bits = type == "i1"                       ? 1
             : type == "i8"                     ? 8
             : type == "i16"                    ? 16
             : type == "i32"                    ? 32
             : type == "i64" || type == "index" ? 64
                                                : 0;
  if (bits == 1) {
    if (text == "0" || text == "false")
      return true;
    if (text == "1" || text == "true")
      return out = 1, true;
    error = "expected 0, 1, true or false for an i1";
    return false;
  }
  if (bits) {
    std::string_view digits = text;
    bool negative = !digits.empty() && digits.front() == '-';
    if (negative)
      digits.remove_prefix(1);
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' &&
        (digits[1] == 'x' || digits[1] == 'X')) {
      digits.remove_prefix(2);
      base = 16;
    }
    uint64_t magnitude = 0;
    auto [ptr, ec] = std::from_chars(
        digits.data(), digits.data() + digits.size(), magnitude, base);
    uint64_t maxUnsigned = bits == 64 ? UINT64_MAX : (uint64_t(1) << bits) - 1;
    uint64_t maxNegative = uint64_t(1) << (bits - 1);
    if (digits.empty() || ec != std::errc() ||
        ptr != digits.data() + digits.size() ||
        magnitude > (negative ? maxNegative : maxUnsigned)) {
      error = "expected an integer from -" + std::to_string(maxNegative) +
              " to " + std::to_string(maxUnsigned) + " for an " + type;
      return false;
    }
    out = (negative ? 0 - magnitude : magnitude) & maxUnsigned;
    return true;
  }
  if (type == "f16" || type == "f32" || type == "f64") {
    char *end = nullptr;
    errno = 0;
    double value =
        text.empty() || std::isspace(static_cast<unsigned char>(text.front()))
            ? 0
            : std::strtod(text.c_str(), &end);
    if (!end || *end || end == text.c_str()) {
      error = "expected a number for an " + type;
      return false;
    }
    if (type == "f64") {
      std::memcpy(&out, &value, 8);
    } else if (type == "f32") {
      float f = static_cast<float>(value);
      std::memcpy(&out, &f, 4);
    } else {
      out = toHalf(static_cast<float>(value));
    }
    return true;
  }
  error = "parameter type '" + type + "' takes no --arg";
  return false;
}

namespace {
/// An option that takes a value: its name, whether it may be given more
/// than once, and how the value is stored. `set` returns false with `why`
/// set when the value is bad; the caller names the option.
struct ValueOption {
  std::string_view name;
  bool repeats;
  bool (*set)(std::string_view value, Options &out, std::string &why);
};
} // namespace

static bool setRanks(std::string_view value, Options &out, std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number < 1 || number > TLE_MAX_RANKS) {
    why = "expected 1 to " + std::to_string(TLE_MAX_RANKS) + " ranks";
    return false;
  }
  out.ranks = static_cast<int>(number);
  return true;
}

static bool setExtent(std::string_view value, Extent &extent,
                      std::string &why) {
  if (parseExtent(value, extent))
    return true;
  why = "expected X, XxY or XxYxZ of positive integers";
  return false;
}

static bool setGrid(std::string_view value, Options &out, std::string &why) {
  if (!setExtent(value, out.grid, why))
    return false;
  if (out.grid.total() > UINT32_MAX) {
    why = "more than 2^32-1 blocks";
    return false;
  }
  return true;
}

static bool setBlock(std::string_view value, Options &out, std::string &why) {
  if (!setExtent(value, out.block, why))
    return false;
  if (out.block.total() > kMaxBlockThreads) {
    why =
        "a block has at most " + std::to_string(kMaxBlockThreads) + " threads";
    return false;
  }
  return true;
}

static bool setTarget(std::string_view value, Options &out, std::string &why) {
  if (value != "host" && value != "cuda") {
    why = "expected host or cuda";
    return false;
  }
  out.target = value;
  return true;
}

static bool addBuffer(std::string_view value, Options &out, std::string &why) {
  BufferSpec spec;
  if (!parseBuffer(value, spec, why))
    return false;
  for (const BufferSpec &other : out.buffers)
    if (other.name == spec.name) {
      why = "buffer '" + spec.name + "' is declared twice";
      return false;
    }
  out.buffers.push_back(spec);
  return true;
}

static bool setRepeat(std::string_view value, Options &out, std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number < 1 || number > 100000000) {
    why = "expected a positive count";
    return false;
  }
  out.repeat = static_cast<unsigned>(number);
  out.repeatGiven = true;
  return true;
}

static bool setTimeout(std::string_view value, Options &out, std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number > uint64_t(kMaxTimeoutMs)) {
    why = "expected milliseconds, 0 to " + std::to_string(kMaxTimeoutMs);
    return false;
  }
  out.timeoutMs = static_cast<int64_t>(number);
  return true;
}

static bool setNodes(std::string_view value, Options &out, std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number < 1 || number > TLE_MAX_RANKS) {
    why = "expected 1 to " + std::to_string(TLE_MAX_RANKS) + " nodes";
    return false;
  }
  out.nodes = static_cast<int>(number);
  return true;
}

static bool setNetLatency(std::string_view value, Options &out,
                          std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number > (uint64_t(1) << 40)) {
    why = "expected 0 to 2^40 scheduler steps";
    return false;
  }
  out.netLatencySteps = number;
  return true;
}

static bool setSeed(std::string_view value, Options &out, std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number)) {
    why = "expected an unsigned 64-bit integer";
    return false;
  }
  out.seed = number;
  return true;
}

static bool setBarriers(std::string_view value, Options &out,
                        std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number < 1 || number > kMaxBarriers) {
    why = "expected 1 to " + std::to_string(kMaxBarriers) + " barrier slots";
    return false;
  }
  out.barriers = static_cast<uint32_t>(number);
  return true;
}

static bool setSignals(std::string_view value, Options &out, std::string &why) {
  uint64_t number = 0;
  if (!parseU64(value, number) || number < 1 || number > kMaxSignals) {
    why = "expected 1 to " + std::to_string(kMaxSignals) + " signal words";
    return false;
  }
  out.signals = static_cast<uint32_t>(number);
  return true;
}

static bool setStackBytes(std::string_view value, Options &out,
                          std::string &why) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  uint64_t number = 0;
  if (!parseBytes(value, number) || number < tle::emu::kMinStackBytes ||
      number > tle::emu::kMaxStackBytes || number % page) {
    why = "expected a multiple of the page size (" + std::to_string(page) +
          " bytes) from " + std::to_string(tle::emu::kMinStackBytes >> 10) +
          "K to " + std::to_string(tle::emu::kMaxStackBytes >> 20) + "M";
    return false;
  }
  out.stackBytes = static_cast<size_t>(number);
  return true;
}

/// Every option that takes a value (--help lists them: usageText).
static constexpr ValueOption kValueOptions[] = {
    {"kernel", false,
     [](std::string_view value, Options &out, std::string &) {
       out.kernel = value;
       return true;
     }},
    {"ranks", false, setRanks},
    {"grid", false, setGrid},
    {"block", false, setBlock},
    {"target", false, setTarget},
    {"buffer", true, addBuffer},
    {"repeat", false, setRepeat},
    {"dump", true,
     [](std::string_view value, Options &out, std::string &) {
       out.dumps.emplace_back(value);
       return true;
     }},
    {"seed", false, setSeed},
    {"trace", false,
     [](std::string_view value, Options &out, std::string &) {
       out.traceFile = value;
       return true;
     }},
    {"barriers", false, setBarriers},
    {"device-lib", false,
     [](std::string_view value, Options &out, std::string &) {
       out.deviceLib = value;
       return true;
     }},
    {"timeout-ms", false, setTimeout},
    {"stack-bytes", false, setStackBytes},
    {"arg", true,
     [](std::string_view value, Options &out, std::string &) {
       out.args.emplace_back(value);
       return true;
     }},
    {"signals", false, setSignals},
    {"nodes", false, setNodes},
    {"net-latency-steps", false, setNetLatency},
};

/// Reads `argv[i]` (and its value, which may be the next argument: `i`
/// then moves past it) into `out`. `given` holds the options seen so far
/// that may be given once.
static ParseResult readArgument(int argc, char **argv, int &i, Options &out,
                                std::set<std::string_view> &given,
                                std::string &error) {
  std::string_view arg = argv[i];
  if (arg == "--help" || arg == "-h" || arg == "-help")
    return ParseResult::Help;
  if (arg == "--version")
    return ParseResult::Version;
  if (arg.substr(0, 2) != "--" || arg == "--") {
    if (!out.input.empty()) {
      error = "more than one input file ('" + out.input + "', '" +
              std::string(arg) + "')";
      return ParseResult::Error;
    }
    out.input = arg;
    return ParseResult::Run;
  }
  std::string_view name = arg.substr(2), value;
  size_t eq = name.find('=');
  if (eq != std::string_view::npos) {
    value = name.substr(eq + 1);
    name = name.substr(0, eq);
  }
  if (name == "json") {
    if (eq != std::string_view::npos) {
      error = "--json takes no value";
      return ParseResult::Error;
    }
    out.json = true;
    return ParseResult::Run;
  }
  // Flags take no value.
  if (name == "no-race-check") {
    if (eq != std::string_view::npos) {
      error = "--" + std::string(name) + " takes no value";
      return ParseResult::Error;
    }
    if (!given.insert(name).second) {
      error = "--" + std::string(name) + " is given more than once";
      return ParseResult::Error;
    }
    out.raceCheck = false;
    return ParseResult::Run;
  }
  const ValueOption *option =
      std::find_if(std::begin(kValueOptions), std::end(kValueOptions),
                   [&](const ValueOption &o) { return o.name == name; });
  if (option == std::end(kValueOptions)) {
    error = "unknown option --" + std::string(name) + " (see --help)";
    return ParseResult::Error;
  }
  // Silently taking the last of two values would run something the user
  // did not ask for.
  if (!option->repeats && !given.insert(name).second) {
    error = "--" + std::string(name) + " is given more than once";
    return ParseResult::Error;
  }
  if (eq == std::string_view::npos) {
    if (i + 1 >= argc) {
      error = "--" + std::string(name) + " needs a value";
      return ParseResult::Error;
    }
    value = argv[++i];
  }
  std::string why = "expected a value";
  if (!value.empty() && option->set(value, out, why))
    return ParseResult::Run;
  error = "--" + std::string(name) + "=" + std::string(value) + ": " + why;
  return ParseResult::Error;
}

/// What the options must say together, once all are read: an input, a
/// kernel and ranks, a world of at most TLE_MAX_RANKS ranks (from here on
/// `ranks` counts the world's), dumps of declared buffers, buffers whose
/// copies on every rank fit in 64 bits.
static bool checkRun(Options &out, std::string &error) {
  if (out.input.empty()) {
    error = "no kernel file given";
    return false;
  }
  if (out.kernel.empty()) {
    error = "--kernel NAME is required";
    return false;
  }
  if (out.ranks == 0) {
    error = "--ranks N is required";
    return false;
  }
  // --ranks counts one node's ranks; from here on, ranks is the world's.
  if (out.nodes * out.ranks > TLE_MAX_RANKS) {
    error = "--nodes " + std::to_string(out.nodes) + " x --ranks " +
            std::to_string(out.ranks) + " is more than " +
            std::to_string(TLE_MAX_RANKS) + " ranks";
    return false;
  }
  out.ranksPerNode = out.ranks;
  out.ranks *= out.nodes;
  for (const std::string &dump : out.dumps) {
    bool found = false;
    for (const BufferSpec &spec : out.buffers)
      found |= spec.name == dump;
    if (!found) {
      error = "--dump " + dump + ": no --buffer of that name";
      return false;
    }
  }
  for (const BufferSpec &spec : out.buffers) {
    uint64_t all = 0;
    if (__builtin_mul_overflow(spec.bytes, uint64_t(out.ranks), &all)) {
      error = "--buffer " + spec.name + ": " + std::to_string(out.ranks) +
              " ranks x " + std::to_string(spec.bytes) +
              " bytes is more than 2^64 bytes";
      return false;
    }
  }
  return true;
}

/// Emulator features asked of --target cuda: on GPUs they would be
/// silently ignored, so they are usage errors.
static bool checkTarget(const Options &out, std::string &error) {
  if (out.target != "cuda")
    return true;
  if (!out.raceCheck) {
    error = "--no-race-check needs the emulator (--target host): GPUs "
            "have no race checker";
    return false;
  }
  if (out.stackBytes) {
    error = "--stack-bytes needs the emulator (--target host)";
    return false;
  }
  if (out.nodes > 1 || out.netLatencySteps) {
    error = "--nodes and --net-latency-steps need the emulator (--target "
            "host): on GPUs, nodes come from tleCommInitFromNccl's network "
            "backend";
    return false;
  }
  return true;
}

ParseResult tle::run::parseOptions(int argc, char **argv, Options &out,
                                   std::string &error) {
  std::set<std::string_view> given;
  for (int i = 1; i < argc; ++i)
    if (ParseResult r = readArgument(argc, argv, i, out, given, error);
        r != ParseResult::Run)
      return r;
  if (!checkRun(out, error) || !checkTarget(out, error) ||
      !checkEnvironment(out, error))
    return ParseResult::Error;
  return ParseResult::Run;
}
