//===- Sites.cpp - The process's table of call sites ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Call-site ids back to text (tle.h, tleSiteRegister). A failed wait's
// record holds only the 32-bit id the compiler passed (ErrorRecord::site);
// tlec writes each kernel's table of ids into its metadata, the Python
// front end registers the lines of its calls, and the typed C++ API's host
// build its callers' lines, all into this one table, which the reports
// read. Entries are never removed, so a text handed out stays valid.
//
//===----------------------------------------------------------------------===//

#include "diag/Error.h"

#include "tle/abi.h"
#include "tle/tle.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tle {
namespace {

struct SiteTable {
  std::mutex mutex;
  std::unordered_map<uint32_t, std::string> texts;
};

SiteTable &table() {
  static SiteTable *t = new SiteTable; // outlives every static destructor
  return *t;
}

} // namespace
} // namespace tle

extern "C" {

tleResult_t tleSiteRegister(uint32_t id, const char *text) {
  return tle::guard("tleSiteRegister", [&]() -> tleResult_t {
    if (id == 0 || !text || !*text)
      return tle::fail(tleInvalidArgument, "site id 0 or an empty text (id %u)",
                       id);
    tle::SiteTable &t = tle::table();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto [it, added] = t.texts.emplace(id, text);
    if (!added && it->second != text)
      return tle::fail(tleInvalidArgument,
                       "site id %u holds \"%s\", not \"%s\"", id,
                       it->second.c_str(), text);
    return tleSuccess;
  });
}

uint32_t tleSiteRegisterText(const char *text) {
  if (!text || !*text)
    return 0;
  uint32_t id = tle::abi::siteId(text, std::strlen(text));
  // Two texts with one id keep the first; the id still names a call.
  tle::SiteTable &t = tle::table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.texts.emplace(id, text);
  return id;
}

const char *tleSiteText(uint32_t id) {
  if (id == 0)
    return nullptr;
  tle::SiteTable &t = tle::table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.texts.find(id);
  return it == t.texts.end() ? nullptr : it->second.c_str();
}

} // extern "C"
