//===- abi.h - The device ABI's enums and tables, from abi.def --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Expands tle/abi.def into what C++ code needs: the enumerations of the ABI
// (tle::CoopKind, MemoryOrder, TeamKind, MemoryScope, BarrierKind,
// TracePhase, TraceKind, AccessKind, SignalEvent, the device error codes and
// bad-argument ids) and, for host code only, descriptions of every entry
// point and emulator hook (name, result and parameter types) that compilers
// use to declare and call them. Free of LLVM and of CUDA, so that the
// device library, the host runtime, the MLIR lowering and the tools all
// include the same definitions. Compiled as C (a C kernel for the emulator,
// tle/emu.h), it gives the encodings as plain constants instead: tleCoopBlock,
// tleOrderAcqRel, tleTeamIntra, tleScopeSystem, tleBarrierSync, ...
//
//===----------------------------------------------------------------------===//

#ifndef TLE_ABI_H
#define TLE_ABI_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

/// TLE_ABI_MAP(F, (T, n), (T, n), ...) applies F to each parenthesized pair
/// (`F (T, n)`), comma-separated; up to 16 pairs (FlagCX's widest entry
/// point, flagcxDevPut_RSigAdd_LCtrInc, has 15).
#define TLE_ABI_CAT_(a, b) a##b
#define TLE_ABI_CAT(a, b) TLE_ABI_CAT_(a, b)
#define TLE_ABI_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, \
                       _14, _15, _16, N, ...)                                  \
  N
#define TLE_ABI_NARGS(...)                                                     \
  TLE_ABI_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, \
                 2, 1, 0)
#define TLE_ABI_MAP_1(F, a) F a
#define TLE_ABI_MAP_2(F, a, ...) F a, TLE_ABI_MAP_1(F, __VA_ARGS__)
#define TLE_ABI_MAP_3(F, a, ...) F a, TLE_ABI_MAP_2(F, __VA_ARGS__)
#define TLE_ABI_MAP_4(F, a, ...) F a, TLE_ABI_MAP_3(F, __VA_ARGS__)
#define TLE_ABI_MAP_5(F, a, ...) F a, TLE_ABI_MAP_4(F, __VA_ARGS__)
#define TLE_ABI_MAP_6(F, a, ...) F a, TLE_ABI_MAP_5(F, __VA_ARGS__)
#define TLE_ABI_MAP_7(F, a, ...) F a, TLE_ABI_MAP_6(F, __VA_ARGS__)
#define TLE_ABI_MAP_8(F, a, ...) F a, TLE_ABI_MAP_7(F, __VA_ARGS__)
#define TLE_ABI_MAP_9(F, a, ...) F a, TLE_ABI_MAP_8(F, __VA_ARGS__)
#define TLE_ABI_MAP_10(F, a, ...) F a, TLE_ABI_MAP_9(F, __VA_ARGS__)
#define TLE_ABI_MAP_11(F, a, ...) F a, TLE_ABI_MAP_10(F, __VA_ARGS__)
#define TLE_ABI_MAP_12(F, a, ...) F a, TLE_ABI_MAP_11(F, __VA_ARGS__)
#define TLE_ABI_MAP_13(F, a, ...) F a, TLE_ABI_MAP_12(F, __VA_ARGS__)
#define TLE_ABI_MAP_14(F, a, ...) F a, TLE_ABI_MAP_13(F, __VA_ARGS__)
#define TLE_ABI_MAP_15(F, a, ...) F a, TLE_ABI_MAP_14(F, __VA_ARGS__)
#define TLE_ABI_MAP_16(F, a, ...) F a, TLE_ABI_MAP_15(F, __VA_ARGS__)
#define TLE_ABI_MAP(F, ...)                                                    \
  TLE_ABI_CAT(TLE_ABI_MAP_, TLE_ABI_NARGS(__VA_ARGS__))(F, __VA_ARGS__)

/// The C type of each ABI type token, and `T name` for a parameter.
#define TLE_ABI_CTYPE_Void void
#ifdef __cplusplus
#define TLE_ABI_CTYPE_NoReturn [[noreturn]] void
#else
#define TLE_ABI_CTYPE_NoReturn _Noreturn void
#endif
#define TLE_ABI_CTYPE_Bool bool
#define TLE_ABI_CTYPE_I32 int32_t
#define TLE_ABI_CTYPE_U32 uint32_t
#define TLE_ABI_CTYPE_I64 int64_t
#define TLE_ABI_CTYPE_U64 uint64_t
#define TLE_ABI_CTYPE_Ptr const void *
#define TLE_ABI_CTYPE_MutPtr void *
#ifdef __cplusplus
#define TLE_ABI_CTYPE_Tag ::tle::TeamTagWorld
#else
/* FlagCX's empty tag has no C spelling: C sees the declaration with an
   incomplete type (allowed in a prototype), so C cannot call it. */
struct tleTeamTagWorld;
#define TLE_ABI_CTYPE_Tag struct tleTeamTagWorld
#endif
#define TLE_ABI_CTYPE_CStr const char *
#define TLE_ABI_CTYPE_WordPtr uint32_t *
#ifdef __cplusplus
#define TLE_ABI_CTYPE_WaitInfoPtr const ::tle::WaitInfo *
#else
#define TLE_ABI_CTYPE_WaitInfoPtr const struct tleWaitInfo *
#endif
#define TLE_ABI_CPARAM(T, name) TLE_ABI_CTYPE_##T name

#ifndef __cplusplus
/* C: the encodings as constants, named as the C API names things. */
enum {
#define TLE_COOP(Name, Value, Spelling) tleCoop##Name = Value,
#include "tle/abi.def"
#define TLE_ORDER(Name, Value, Spelling) tleOrder##Name = Value,
#include "tle/abi.def"
#define TLE_TEAM(Name, Value, Spelling) tleTeam##Name = Value,
#include "tle/abi.def"
#define TLE_SCOPE(Name, Value, Spelling) tleScope##Name = Value,
#include "tle/abi.def"
#define TLE_BARRIER_KIND(Name, Value, Spelling) tleBarrier##Name = Value,
#include "tle/abi.def"
};
#else

namespace tle {

/// FlagCX's flagcxTeamTagWorld: an empty tag that flagcxWorldBarrierSessionInit
/// takes by value (abi.def's type Tag).
struct TeamTagWorld {};

/// Who executes a barrier call together (FlagCX's flagcxCoopKind_t; Grid is
/// TLE's). abi.def explains each.
enum CoopKind : int {
#define TLE_COOP(Name, Value, Spelling) kCoop##Name = Value,
#include "tle/abi.def"
};
/// Memory order of a barrier half (FlagCX's flagcxDevMemoryOrder_t).
enum MemoryOrder : int {
#define TLE_ORDER(Name, Value, Spelling) kOrder##Name = Value,
#include "tle/abi.def"
};
/// Team of the unified barrier; TLE serves kTeamIntra only.
enum TeamKind : int {
#define TLE_TEAM(Name, Value, Spelling) kTeam##Name = Value,
#include "tle/abi.def"
};
/// Scope of the unified barrier; accepted, the barrier is system-wide.
enum MemoryScope : int {
#define TLE_SCOPE(Name, Value, Spelling) kScope##Name = Value,
#include "tle/abi.def"
};
/// Which half of the barrier a call performs.
enum BarrierKind : int {
#define TLE_BARRIER_KIND(Name, Value, Spelling) kBarrier##Name = Value,
#include "tle/abi.def"
};
/// What a barrier trace event marks: a wait's or sync's begin or end, or an
/// arrive.
enum TracePhase : int {
#define TLE_TRACE_PHASE(Name, Value, Spelling) kTrace##Name = Value,
#include "tle/abi.def"
};
/// A trace event's kind when it is not a BarrierKind: a signal's events.
enum TraceKind : int {
#define TLE_TRACE_KIND(Name, Value, Spelling) kTrace##Name = Value,
#include "tle/abi.def"
};
/// A memory access reported to the emulator's race checker (tleEmuAccess).
enum AccessKind : int {
#define TLE_ACCESS(Name, Value, Spelling) kAccess##Name = Value,
#include "tle/abi.def"
};
/// What happened to a signal word (tleEmuSignal).
enum SignalEvent : int {
#define TLE_SIGNAL_EVENT(Name, Value, Spelling) kSignal##Name = Value,
#include "tle/abi.def"
};
/// Codes the device library writes into ErrorRecord::code.
enum DevErrorCode : uint32_t {
#define TLE_DEV_ERROR(Name, Value, Result, What) kDevErr##Name = Value,
#include "tle/abi.def"
};
/// The argument a kDevErrBadArgument report is about (ErrorRecord::argument).
enum BadArgument : uint32_t {
#define TLE_BAD_ARGUMENT(Name, Value, What) kArg##Name = Value,
#include "tle/abi.def"
};

/// The largest coopKind FlagCX's entry points accept.
constexpr int kMaxFlagcxCoop = kCoopLanes;

/// A call-site id with bit 31 set names a line of a typed C++ API call on a
/// GPU (bits 0..30), whose file the device cannot register; every other id
/// is abi::siteId of a text (docs/design.md, "Call sites").
constexpr uint32_t kSiteLineOnly = 0x80000000u;

/// The tleResult_t value (tle.h) of a DevErrorCode: abi.def's Result
/// column, what a status-returning wait gives the kernel and what the host
/// reports for a device record. Here, beside the codes, because both the
/// device library and the host runtime need it. Host and device (clang's
/// CUDA mode treats a constexpr function as both; nvcc needs to be told),
/// always inlined on GPUs as the device library's own TLE_DEV_INLINE.
#if defined(__CUDACC__)
#define TLE_ABI_INLINE __host__ __device__ __attribute__((always_inline)) inline
#else
#define TLE_ABI_INLINE inline
#endif
TLE_ABI_INLINE constexpr uint32_t resultOf(uint32_t code) {
  switch (code) {
#define TLE_DEV_ERROR(Name, Value, Result, What)                               \
  case Value:                                                                  \
    return Result;
#include "tle/abi.def"
  }
  return 10; // tleInternalError: no version of TLE writes such a code
}

namespace abi {
/// Every entry point of the device ABI, in abi.def's order.
enum class Fn : unsigned {
#define TLE_ABI_FUNCTION(Name, Result, What, ...) Name,
#include "tle/abi.def"
  NumFunctions
};
} // namespace abi

} // namespace tle

// Descriptions for host code (compilers, tools, the host runtime). Device
// code needs only the enums above.
#ifndef __CUDA_ARCH__
namespace tle::abi {

/// The types that appear in ABI signatures (abi.def's header lists them).
enum class Type : uint8_t {
  Void,
  NoReturn,
  Bool,
  I32,
  U32,
  I64,
  U64,
  Ptr,
  MutPtr,
  Tag,
  CStr,
  WordPtr,
  WaitInfoPtr,
};

constexpr unsigned kMaxParams = 16;

/// One entry point or emulator hook.
struct Function {
  const char *name;
  Type result;
  /// The dialect op or front-end call that a failure report names.
  const char *what;
  unsigned numParams;
  Type params[kMaxParams];
  /// The parameters' names as abi.def spells them ("comm", "index",
  /// "signal"...): what tools that read calls to the ABI key on.
  const char *paramNames[kMaxParams];
};

#define TLE_ABI_TYPE(T, name) Type::T
#define TLE_ABI_NAME(T, name) #name

inline constexpr Function kFunctions[] = {
#define TLE_ABI_FUNCTION(Name, Result, What, ...)                              \
  {#Name,                                                                      \
   Type::Result,                                                               \
   What,                                                                       \
   TLE_ABI_NARGS(__VA_ARGS__),                                                 \
   {TLE_ABI_MAP(TLE_ABI_TYPE, __VA_ARGS__)},                                   \
   {TLE_ABI_MAP(TLE_ABI_NAME, __VA_ARGS__)}},
#include "tle/abi.def"
};
constexpr const Function &function(Fn fn) {
  return kFunctions[static_cast<unsigned>(fn)];
}

/// The id of call site `text` (n bytes, "file:line:col" or "file:line"):
/// FNV-1a of its bytes with bit 31 cleared, and never 0, which means
/// unknown (docs/design.md, "Call sites"). tlec, the Python front end
/// (tle/language.py) and the typed API's host build compute it the same
/// way, so that one text has one id in every table of the process.
constexpr uint32_t siteId(const char *text, unsigned long n) {
  uint32_t h = 2166136261u;
  for (unsigned long i = 0; i < n; ++i)
    h = (h ^ static_cast<uint8_t>(text[i])) * 16777619u;
  h &= 0x7fffffffu;
  return h ? h : 1;
}

/// Every emulator hook, in abi.def's order.
enum class Hook : unsigned {
#define TLE_EMU_HOOK(Name, Result, ...) Name,
#define TLE_EMU_HOOK0(Name, Result) Name,
#include "tle/abi.def"
  NumHooks
};
inline constexpr Function kHooks[] = {
#define TLE_EMU_HOOK(Name, Result, ...)                                        \
  {#Name,                                                                      \
   Type::Result,                                                               \
   "",                                                                         \
   TLE_ABI_NARGS(__VA_ARGS__),                                                 \
   {TLE_ABI_MAP(TLE_ABI_TYPE, __VA_ARGS__)},                                   \
   {TLE_ABI_MAP(TLE_ABI_NAME, __VA_ARGS__)}},
#define TLE_EMU_HOOK0(Name, Result) {#Name, Type::Result, "", 0, {}, {}},
#include "tle/abi.def"
};
constexpr const Function &hook(Hook h) {
  return kHooks[static_cast<unsigned>(h)];
}

#undef TLE_ABI_TYPE
#undef TLE_ABI_NAME

/// Host-compiled kernels (tlec --target=host): every symbol the lowering
/// generates starts with kReservedPrefix; kernel NAME's packed entry,
/// `void (void **args)` with args[i] pointing at the i-th argument, is
/// kEmuEntryPrefix + NAME, and kEmuParamsPrefix + NAME is a C string of its
/// parameter types as bundles spell them ("ptr,i32").
inline constexpr const char kReservedPrefix[] = "__tle_";
inline constexpr const char kEmuEntryPrefix[] = "__tle_entry.";
inline constexpr const char kEmuParamsPrefix[] = "__tle_params.";

/// A case of an enumeration as the dialect and front ends spell it.
struct EnumCase {
  const char *spelling;
  int value;
};
inline constexpr EnumCase kCoopKinds[] = {
#define TLE_COOP(Name, Value, Spelling) {#Spelling, Value},
#include "tle/abi.def"
};
inline constexpr EnumCase kMemoryOrders[] = {
#define TLE_ORDER(Name, Value, Spelling) {#Spelling, Value},
#include "tle/abi.def"
};
inline constexpr EnumCase kTeamKinds[] = {
#define TLE_TEAM(Name, Value, Spelling) {#Spelling, Value},
#include "tle/abi.def"
};
inline constexpr EnumCase kMemoryScopes[] = {
#define TLE_SCOPE(Name, Value, Spelling) {#Spelling, Value},
#include "tle/abi.def"
};
inline constexpr EnumCase kBarrierKinds[] = {
#define TLE_BARRIER_KIND(Name, Value, Spelling) {#Spelling, Value},
#include "tle/abi.def"
};
inline constexpr EnumCase kTraceKinds[] = {
#define TLE_TRACE_KIND(Name, Value, Spelling) {#Spelling, Value},
#include "tle/abi.def"
};

/// What an error code or a bad argument is, in words ("" if unknown).
inline const char *describe(DevErrorCode code) {
  switch (code) {
#define TLE_DEV_ERROR(Name, Value, Result, What)                               \
  case kDevErr##Name:                                                          \
    return What;
#include "tle/abi.def"
  }
  return "";
}
inline const char *describe(BadArgument arg) {
  switch (arg) {
#define TLE_BAD_ARGUMENT(Name, Value, What)                                    \
  case kArg##Name:                                                             \
    return What;
#include "tle/abi.def"
  }
  return "";
}

} // namespace tle::abi
#endif // __CUDA_ARCH__
#endif // __cplusplus

#endif // TLE_ABI_H
