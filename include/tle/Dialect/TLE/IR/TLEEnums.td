//===- TLEEnums.td - Enumerations of the tle dialect -------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The barrier kind, cooperative group and memory order that parameterize
// `tle.device_intra_barrier` and `tle.device_barrier`, the team of
// `tle.device_barrier`, `tle.signal` and the team queries, and the signal
// kind and group of `tle.signal` and `tle.signal_wait`. Each case stores its ABI value from
// runtime/device/include/tle/abi.def (TableGen cannot include that file): the
// lowering passes the stored value, static_asserts in TLEToLLVM.cpp tie every
// case to abi.h at build time, and unittests/compiler checks both lists
// against each other. They are plain I32EnumAttrs rather than dialect
// EnumAttrs because only those print as a bare keyword with single spacing
// in the op syntax (`sync`, `group warp`).
//
//===----------------------------------------------------------------------===//

#ifndef TLE_DIALECT_TLE_IR_TLEENUMS_TD
#define TLE_DIALECT_TLE_IR_TLEENUMS_TD

include "tle/Dialect/TLE/IR/TLEDialect.td"
include "mlir/IR/EnumAttr.td"

def TLE_BarrierKind : I32EnumAttr<"BarrierKind",
    "which half of the barrier a call performs", [
      I32EnumAttrCase<"arrive", 0>,
      I32EnumAttrCase<"wait", 1>,
      I32EnumAttrCase<"sync", 2>
    ]> {
  let cppNamespace = "::mlir::tle";
}

def TLE_BarrierGroup : I32EnumAttr<"BarrierGroup",
    "the cooperative group that executes a barrier call together", [
      I32EnumAttrCase<"thread", 0>,
      I32EnumAttrCase<"warp", 1>,
      I32EnumAttrCase<"block", 2>,
      // TLE's grid coop kind (abi.def). FlagCX reads 3 as TILE_SPAN and has
      // no grid; the lowering calls the tleIntraGridBarrier* entry points.
      I32EnumAttrCase<"grid", 5>
    ]> {
  let cppNamespace = "::mlir::tle";
}

def TLE_MemoryOrder : I32EnumAttr<"MemoryOrder",
    "the memory order a barrier call establishes", [
      I32EnumAttrCase<"relaxed", 0>,
      I32EnumAttrCase<"acquire", 1>,
      I32EnumAttrCase<"release", 2>,
      I32EnumAttrCase<"acq_rel", 3>,
      I32EnumAttrCase<"seq_cst", 4>
    ]> {
  let cppNamespace = "::mlir::tle";
}

def TLE_SignalKind : I32EnumAttr<"SignalKind",
    "what a signal does to the word: add 1, or add a value", [
      I32EnumAttrCase<"inc", 0>,
      I32EnumAttrCase<"add", 1>
    ]> {
  let cppNamespace = "::mlir::tle";
}

// The groups of a signal: FlagCX's coop kinds thread, warp and block (there
// is no grid signal).
def TLE_SignalGroup : I32EnumAttr<"SignalGroup",
    "the cooperative group that signals or waits together", [
      I32EnumAttrCase<"thread", 0>,
      I32EnumAttrCase<"warp", 1>,
      I32EnumAttrCase<"block", 2>
    ]> {
  let cppNamespace = "::mlir::tle";
}

// The ranks a barrier spans, a signal's peer is numbered in, or a query
// counts (abi.def's TLE_TEAM, FlagCX's flagcxDevTeamKind_t).
def TLE_Team : I32EnumAttr<"Team",
    "the team of ranks a barrier, signal or query refers to", [
      I32EnumAttrCase<"intra", 0>,
      I32EnumAttrCase<"inter", 1>,
      I32EnumAttrCase<"world", 2>
    ]> {
  let cppNamespace = "::mlir::tle";
}

#endif // TLE_DIALECT_TLE_IR_TLEENUMS_TD
