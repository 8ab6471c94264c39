//===- AbiTest.cpp - The compiler agrees with tle/abi.def -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The dialect's enum attributes store the ABI values of tle/abi.def (which
// TableGen cannot include), and the lowering declares callees from abi.h's
// tables. These tests walk both lists in both directions, so a case added,
// removed or renumbered on one side only fails here.
//
//===----------------------------------------------------------------------===//

#include "tle/Conversion/TLEToLLVM/TLEToLLVM.h"
#include "tle/Dialect/TLE/IR/TLEOps.h"

#include "tle/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;

namespace {

/// abi.def cases the dialect deliberately has no spelling for.
const std::set<std::string> kNotInDialect = {"tile_span", "lanes"};

template <typename Enum, typename Symbolize, typename Stringify, size_t N>
void expectSameCases(const ::tle::abi::EnumCase (&abiCases)[N],
                     Symbolize symbolize, Stringify stringify,
                     uint32_t maxValue) {
  for (const ::tle::abi::EnumCase &c : abiCases) {
    std::optional<Enum> e = symbolize(c.spelling);
    if (kNotInDialect.count(c.spelling)) {
      EXPECT_FALSE(e) << c.spelling;
      continue;
    }
    ASSERT_TRUE(e) << "abi.def case '" << c.spelling
                   << "' has no dialect spelling";
    EXPECT_EQ(static_cast<int>(*e), c.value) << c.spelling;
  }
  // Every dialect case is an abi.def case with the same value.
  for (uint32_t v = 0; v <= maxValue; ++v) {
    StringRef name = stringify(static_cast<Enum>(v));
    if (name.empty())
      continue;
    bool found = false;
    for (const ::tle::abi::EnumCase &c : abiCases)
      found |= name == c.spelling && static_cast<int>(v) == c.value;
    EXPECT_TRUE(found) << "dialect case '" << name.str() << "' = " << v
                       << " is not in abi.def";
  }
}

TEST(Abi, DialectGroupsAreAbiCoopKinds) {
  expectSameCases<mlir::tle::BarrierGroup>(
      ::tle::abi::kCoopKinds,
      [](StringRef s) { return mlir::tle::symbolizeBarrierGroup(s); },
      [](mlir::tle::BarrierGroup g) { return mlir::tle::stringifyBarrierGroup(g); },
      mlir::tle::getMaxEnumValForBarrierGroup());
}

TEST(Abi, DialectOrdersAreAbiOrders) {
  expectSameCases<mlir::tle::MemoryOrder>(
      ::tle::abi::kMemoryOrders,
      [](StringRef s) { return mlir::tle::symbolizeMemoryOrder(s); },
      [](mlir::tle::MemoryOrder o) { return mlir::tle::stringifyMemoryOrder(o); },
      mlir::tle::getMaxEnumValForMemoryOrder());
}

TEST(Abi, DialectKindsAreAbiBarrierKinds) {
  expectSameCases<mlir::tle::BarrierKind>(
      ::tle::abi::kBarrierKinds,
      [](StringRef s) { return mlir::tle::symbolizeBarrierKind(s); },
      [](mlir::tle::BarrierKind k) { return mlir::tle::stringifyBarrierKind(k); },
      mlir::tle::getMaxEnumValForBarrierKind());
}

TEST(Abi, DialectTeamsAreAbiTeamKinds) {
  expectSameCases<mlir::tle::Team>(
      ::tle::abi::kTeamKinds,
      [](StringRef s) { return mlir::tle::symbolizeTeam(s); },
      [](mlir::tle::Team t) { return mlir::tle::stringifyTeam(t); },
      mlir::tle::getMaxEnumValForTeam());
}

/// The signal groups are abi.def's thread, warp and block coop kinds, with
/// their values; signals have no grid (nor tile span, lanes).
TEST(Abi, DialectSignalGroupsAreAbiCoopKinds) {
  using mlir::tle::SignalGroup;
  unsigned cases = 0;
  for (uint32_t v = 0; v <= mlir::tle::getMaxEnumValForSignalGroup(); ++v) {
    StringRef name =
        mlir::tle::stringifySignalGroup(static_cast<SignalGroup>(v));
    if (name.empty())
      continue;
    ++cases;
    bool found = false;
    for (const ::tle::abi::EnumCase &c : ::tle::abi::kCoopKinds)
      found |= name == c.spelling && static_cast<int>(v) == c.value;
    EXPECT_TRUE(found) << "signal group '" << name.str() << "' = " << v
                       << " is not abi.def's";
  }
  EXPECT_EQ(cases, 3u);
  for (const char *absent : {"grid", "tile_span", "lanes"})
    EXPECT_FALSE(mlir::tle::symbolizeSignalGroup(absent)) << absent;
}

/// Every entry point is declared with abi.def's signature: pointers generic,
/// 32- and 64-bit integers, bool as i1.
TEST(Abi, DeclarationsFollowTheDefinition) {
  MLIRContext ctx;
  ctx.loadDialect<LLVM::LLVMDialect>();
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToStart(module->getBody());
  for (const ::tle::abi::Function &fn : ::tle::abi::kFunctions) {
    FailureOr<LLVM::LLVMFuncOp> f =
        mlir::tle::lookupOrDeclareAbiFunction(b, *module, fn);
    ASSERT_TRUE(succeeded(f)) << fn.name;
    LLVM::LLVMFunctionType type = f->getFunctionType();
    ASSERT_EQ(type.getNumParams(), fn.numParams) << fn.name;
    std::string sig;
    llvm::raw_string_ostream os(sig);
    os << type;
    // Spot checks written out by hand from docs/abi.md.
    if (StringRef(fn.name) == "flagcxIntraBarrierSyncS")
      EXPECT_EQ(sig, "!llvm.func<void (ptr, i32, i32, i1, i32)>");
    if (StringRef(fn.name) == "flagcxDevBarrierWait")
      EXPECT_EQ(sig, "!llvm.func<void (ptr, i32, i32, i32, i32, i32, i32)>");
    if (StringRef(fn.name) == "flagcxGetIntraPointerS")
      EXPECT_EQ(sig, "!llvm.func<ptr (ptr, i64, i32)>");
    if (StringRef(fn.name) == "tleTritonBarrier")
      EXPECT_EQ(sig, "!llvm.func<i32 (i64, i32, i32, i32, i32)>");
    // FlagCX's unified signal functions (flagos-ai/FlagCX bindings/ir).
    if (StringRef(fn.name) == "flagcxDevSignalInc")
      EXPECT_EQ(sig, "!llvm.func<void (ptr, i32, i32, i32, i32, i32, i32)>");
    if (StringRef(fn.name) == "flagcxDevSignalAdd")
      EXPECT_EQ(sig,
                "!llvm.func<void (ptr, i32, i32, i32, i64, i32, i32, i32)>");
    if (StringRef(fn.name) == "flagcxDevWaitSignal")
      EXPECT_EQ(sig, "!llvm.func<void (ptr, i32, i64, i32, i32, i32, i32)>");
    if (StringRef(fn.name) == "flagcxDevReadSignal")
      EXPECT_EQ(sig, "!llvm.func<i64 (ptr, i32, i32, i32, i32)>");
    if (StringRef(fn.name) == "flagcxDevResetSignal")
      EXPECT_EQ(sig, "!llvm.func<void (ptr, i32, i32)>");
  }
  EXPECT_EQ(std::size(::tle::abi::kFunctions),
            static_cast<size_t>(::tle::abi::Fn::NumFunctions));
}

} // namespace
