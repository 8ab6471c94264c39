//===- Checks.cpp - The registry of the emulator's checks -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Builds the checks that Checks.def registers, for one launch.
//
//===----------------------------------------------------------------------===//

#include "emu/Check.h"

namespace tle::emu::detail {

#define TLE_EMU_CHECK(factory)                                                 \
  std::shared_ptr<Check> factory(const CheckContext &);
#include "emu/Checks.def"
#undef TLE_EMU_CHECK

std::vector<std::shared_ptr<Check>> makeChecks(const CheckContext &context) {
  static constexpr CheckFactory kFactories[] = {
#define TLE_EMU_CHECK(factory) factory,
#include "emu/Checks.def"
#undef TLE_EMU_CHECK
  };
  std::vector<std::shared_ptr<Check>> out;
  for (CheckFactory make : kFactories)
    if (std::shared_ptr<Check> check = make(context))
      out.push_back(std::move(check));
  return out;
}

} // namespace tle::emu::detail
