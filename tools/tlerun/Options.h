//===- Options.h - tlerun's command line -------------------------*- C++
//-*-===//
//
// The command line of tlerun, parsed by hand: this part of tlerun is built on
// GPU machines that have no LLVM, so llvm::cl is not available to it.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_OPTIONS_H
#define TLE_TOOLS_TLERUN_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tle::run {

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
};

/// A grid or block extent.
struct Extent {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t total() const { return uint64_t(x) * y * z; }
};

/// Everything the command line says.
struct Options {
  std::string input;
  std::string kernel;
  int ranks = 0;
  Extent grid, block;
  /// "host" (the emulator) or "cuda".
  std::string target = "host";
  std::vector<BufferSpec> buffers;
  unsigned repeat = 1;
  bool repeatGiven = false;
  std::vector<std::string> dumps;
  std::optional<int64_t> timeoutMs;
  std::optional<uint64_t> seed;
  std::string traceFile;
  /// Override of the barrier slot count.
  std::optional<uint32_t> barriers;
  /// Device library for compiling .mlir input for cuda in-process.
  std::string deviceLib;
};

/// Bytes of one element of `type`.
size_t elemSize(ElemType type);
/// "i32", "i64", "f32" or "f64".
const char *elemName(ElemType type);

/// What parseOptions decided.
enum class ParseResult { Run, Help, Version, Error };

/// Parses argv; on Error, `error` says why.
ParseResult parseOptions(int argc, char **argv, Options &out,
                         std::string &error);
/// The --help text.
const char *usageText();

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_OPTIONS_H
