//===- Options.h - tlerun's command line ------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The command line of tlerun, parsed by hand: this part of tlerun is built on
// GPU machines that have no LLVM, so llvm::cl is not available to it. Every
// usage error is found here, before anything is allocated or launched, so
// that it exits with status 2: malformed or repeated options, sizes that
// overflow, options the target cannot honour, and the environment variables
// tlerun would otherwise pass on (TLE_EMU_SEED, TLE_BARRIER_TIMEOUT_MS).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_OPTIONS_H
#define TLE_TOOLS_TLERUN_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tle::run {

/// Default barrier slot count when neither --barriers nor the kernel's
/// constant indices say: max(blocks per rank, 64), at most this (2^16
/// slots, 8 MiB of inbox per rank), so that a huge grid does not allocate
/// a huge inbox; a kernel indexing past it fails with a slot out of range.
constexpr uint32_t kMaxDefaultBarriers = 1u << 16;
/// Most barrier slots a communicator can have (tleConfig_t::nBarriers).
constexpr uint32_t kMaxBarriers = 1u << 20;
/// Most signal words a communicator can have (tleConfig_t::nSignals), and
/// the default when a kernel indexes them with runtime values.
constexpr uint32_t kMaxSignals = 1u << 20;
constexpr uint32_t kDefaultSignals = 64;
/// Most threads in a block, on GPUs and on the emulator.
constexpr uint64_t kMaxBlockThreads = 1024;
/// Largest timeout in ms whose nanoseconds fit in 63 bits (the runtime's
/// bound on tleConfig_t::timeoutMs).
constexpr int64_t kMaxTimeoutMs = INT64_MAX / 1000000;

/// Element type of a symmetric buffer.
enum class ElemType { I32, I64, F32, F64 };
/// How a buffer is filled before the first launch.
enum class InitKind { Zero, Iota, Rank, Random };

/// One `--buffer NAME:TYPE:COUNT[:INIT]`.
struct BufferSpec {
  std::string name;
  ElemType type = ElemType::I32;
  uint64_t count = 0;
  InitKind init = InitKind::Zero;
  /// count x the element size (checked not to overflow).
  uint64_t bytes = 0;
};

/// A grid or block extent.
struct Extent {
  uint32_t x = 1, y = 1, z = 1;
  /// x * y * z, or UINT64_MAX when that does not fit in 64 bits.
  uint64_t total() const {
    uint64_t out = 0;
    return __builtin_mul_overflow(uint64_t(x) * y, uint64_t(z), &out)
               ? UINT64_MAX
               : out;
  }
};

/// Everything the command line says.
struct Options {
  std::string input;
  std::string kernel;
  /// Every rank of the world: --ranks, times --nodes when given.
  int ranks = 0;
  /// --nodes M: simulated nodes of ranksPerNode ranks (emulator); 1: one
  /// node, ranksPerNode == ranks.
  int nodes = 1;
  int ranksPerNode = 0;
  /// --net-latency-steps: the simulated network's latency (unset: the
  /// emulator's default).
  std::optional<uint64_t> netLatencySteps;
  Extent grid, block;
  /// "host" (the emulator) or "cuda".
  std::string target = "host";
  std::vector<BufferSpec> buffers;
  unsigned repeat = 1;
  bool repeatGiven = false;
  std::vector<std::string> dumps;
  /// --timeout-ms, else TLE_BARRIER_TIMEOUT_MS (checked here).
  std::optional<int64_t> timeoutMs;
  /// --seed (TLE_EMU_SEED is checked here but left to the emulator).
  std::optional<uint64_t> seed;
  /// The emulator's fiber stack size.
  std::optional<size_t> stackBytes;
  std::string traceFile;
  /// --no-race-check: the emulator's race checker is on unless this is set.
  bool raceCheck = true;
  /// Override of the barrier slot count.
  std::optional<uint32_t> barriers;
  /// Override of the signal word count.
  std::optional<uint32_t> signals;
  /// Device library for compiling .mlir input for cuda in-process.
  std::string deviceLib;
  /// --arg values, for the kernel's scalar parameters in declaration order
  /// (parsed against their types once the kernel is known: parseScalar).
  std::vector<std::string> args;
  /// --json: stdout carries one JSON object (Report.h) instead of lines.
  bool json = false;
};

/// Bytes of one element of `type`.
size_t elemSize(ElemType type);
/// "i32", "i64", "f32" or "f64".
const char *elemName(ElemType type);

/// What parseOptions decided.
enum class ParseResult { Run, Help, Version, Error };

/// Whether argv asks for --json (looked up before parsing, so that a usage
/// error is reported as JSON too).
bool wantsJson(int argc, char **argv);

/// Parses `text` as a value of the bundle parameter type `type` (i1, i8,
/// i16, i32, i64, f16, f32, f64 or index) into the low bytes of `out`
/// (little-endian, the rest zero), the way a launch passes it. False with
/// `error` set when the text is not such a value.
bool parseScalar(const std::string &type, const std::string &text,
                 uint64_t &out, std::string &error);

/// Parses argv and checks the environment variables tlerun reads; on Error,
/// `error` says why.
ParseResult parseOptions(int argc, char **argv, Options &out,
                         std::string &error);
/// The --help text.
const char *usageText();

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_OPTIONS_H
