//===- Bundle.h - The kernel bundle format of tlec and tlerun ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A bundle is what tlec produces and tlerun runs: compiled code plus the
// launch metadata PTX does not carry. The format is a few lines of text
// followed by the code, so that tlerun reads it on machines without LLVM
// (docs/tools.md specifies it). This library uses only the C++ standard
// library for that reason; tlec (through lib/Compiler) writes bundles with
// it and tlerun reads them. The reader trusts nothing: every line, name,
// type and count is validated, and a bundle that is not exactly what the
// writer produces is refused with the line that is wrong. Also the bounded
// reader of the tools' input files.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_BUNDLE_BUNDLE_H
#define TLE_BUNDLE_BUNDLE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tle::run {

/// The first word of every bundle.
inline constexpr std::string_view kBundleMagic = "tle-bundle";
/// The format version this build writes. 2: host code names its packed
/// entries `__tle_entry.NAME` (tle/abi.h). 3: kernel lines carry
/// `signal-words`. 4: and `counter-words`. 5: `site ID TEXT` lines, the
/// table of call-site ids (docs/design.md, "Call sites"). A reader also reads
/// kOldestBundleVersion and up: a version 2 bundle predates signals, so its
/// kernels need no signal word, and a version 2 or 3 bundle predates
/// counters.
inline constexpr int kBundleVersion = 5;
inline constexpr int kOldestBundleVersion = 2;
/// Upper bounds a reader enforces, so that a hostile bundle cannot make it
/// allocate without limit before the code is even looked at.
inline constexpr size_t kMaxBundleKernels = 1024;
inline constexpr size_t kMaxKernelParams = 256;
inline constexpr size_t kMaxBundleSites = 65536;

/// Launch metadata of one kernel.
struct BundleKernel {
  /// A C identifier (isValidKernelName).
  std::string name;
  /// ptr, i1, i8, i16, i32, i64, f16, f32, f64 or index, in order.
  std::vector<std::string> params;
  /// Needs a co-resident launch (a `group grid` barrier, in the kernel or
  /// in a function it calls).
  bool cooperative = false;
  /// Barrier slots the kernel needs; unset: decided at run time.
  std::optional<uint32_t> barrierSlots;
  /// Barrier ops the kernel reaches (static count over its call graph).
  uint32_t barrierOps = 0;
  /// Signal words the kernel's constant indices need (0: it uses none);
  /// unset: a runtime index, decided at run time.
  std::optional<uint32_t> signalWords = 0;
  /// Counter words the kernel's constant indices need (its puts' counters
  /// and its counter ops; 0: none); unset: a runtime index.
  std::optional<uint32_t> counterWords = 0;
};

/// One entry of a bundle's table of call sites: the id a barrier or
/// signal call passes (ErrorRecord::site) and its "file:line:col".
struct BundleSite {
  uint32_t id = 0;
  std::string text;
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
  /// The call sites of the code's barriers and signals, for tleSiteRegister.
  std::vector<BundleSite> sites;
  std::string code;

  /// The kernel called `name`, or null.
  const BundleKernel *findKernel(std::string_view name) const;
};

/// True when `name` is a C identifier.
bool isValidKernelName(std::string_view name);
/// True when `type` is a parameter type bundles can carry.
bool isValidParamType(std::string_view type);
/// "ptr,i32" for {"ptr", "i32"}.
std::string joinParams(const std::vector<std::string> &params);

/// True when `text` starts like a bundle.
bool looksLikeBundle(std::string_view text);
/// Serializes `bundle`; returns false with `error` set if a field cannot be
/// written faithfully (an invalid name or type, a newline in a value).
bool writeBundle(const Bundle &bundle, std::string &out, std::string &error);
/// Parses `text`; on failure returns false with a message in `error`.
bool parseBundle(std::string_view text, Bundle &out, std::string &error);

/// Largest input tlec and tlerun read (a kernel module or a bundle).
inline constexpr uint64_t kMaxInputBytes = uint64_t(64) << 20;
/// How long a FIFO may stay without a writer before it is refused.
inline constexpr int kFifoWriterWaitMs = 3000;
/// Reads the input file `path` ("-": stdin) into `out`, bounded: past
/// kMaxInputBytes (an endless stream such as /dev/zero) it stops with an
/// error instead of exhausting memory, and a FIFO that no process opens
/// for writing within kFifoWriterWaitMs is refused instead of blocking
/// forever. False with `error` set on failure.
bool readInputFile(const std::string &path, std::string &out,
                   std::string &error);

} // namespace tle::run

#endif // TLE_BUNDLE_BUNDLE_H
