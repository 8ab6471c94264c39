//===- Bundle.h - The kernel bundle format of tlec and tlerun ---*- C++ -*-===//
//
// A bundle is what tlec produces and tlerun runs: compiled code plus the
// launch metadata PTX does not carry. The format is a few lines of text
// followed by the code, so that tlerun reads it on machines without LLVM
// (docs/tools.md specifies it). This header and its implementation use only
// the C++ standard library for that reason.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TOOLS_TLERUN_BUNDLE_H
#define TLE_TOOLS_TLERUN_BUNDLE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tle::run {

/// The first word of every bundle.
inline constexpr std::string_view kBundleMagic = "tle-bundle";
/// The format version this build writes and reads.
inline constexpr int kBundleVersion = 1;

/// Launch metadata of one kernel.
struct BundleKernel {
  std::string name;
  /// ptr, i1, i8, i16, i32, i64, f16, f32, f64 or index, in order.
  std::vector<std::string> params;
  /// Needs a co-resident launch (a `group grid` barrier).
  bool cooperative = false;
  /// Barrier slots the kernel needs; unset: decided at run time.
  std::optional<uint32_t> barrierSlots;
  /// Barrier ops in the kernel's code (static count).
  uint32_t barrierOps = 0;
};

/// A parsed bundle.
struct Bundle {
  /// "cuda" or "host".
  std::string target;
  /// GPU architecture ("sm_90") or the host triple.
  std::string arch;
  /// "ptx" (cuda) or "llvm" (host: LLVM IR text).
  std::string format;
  /// The file the code was compiled from (informational).
  std::string source;
  std::vector<BundleKernel> kernels;
  std::string code;

  /// The kernel called `name`, or null.
  const BundleKernel *findKernel(std::string_view name) const;
};

/// True when `text` starts like a bundle.
bool looksLikeBundle(std::string_view text);
/// Serializes `bundle`.
std::string writeBundle(const Bundle &bundle);
/// Parses `text`; on failure returns false with a message in `error`.
bool parseBundle(std::string_view text, Bundle &out, std::string &error);

} // namespace tle::run

#endif // TLE_TOOLS_TLERUN_BUNDLE_H
