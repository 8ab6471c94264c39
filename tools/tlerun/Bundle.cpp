//===- Bundle.cpp - Reading and writing kernel bundles
//----------------------===//
//
// The bundle is line-oriented text up to a `code BYTES` line, then exactly
// BYTES bytes of code. Keys are words, values never contain newlines; a
// reader skips `#` comment lines and rejects unknown keys, so that a newer
// bundle fails loudly rather than running with half its metadata.
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"

#include <charconv>
#include <sstream>

using namespace tle::run;

const BundleKernel *Bundle::findKernel(std::string_view name) const {
  for (const BundleKernel &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

bool tle::run::looksLikeBundle(std::string_view text) {
  return text.substr(0, kBundleMagic.size()) == kBundleMagic;
}

std::string tle::run::writeBundle(const Bundle &bundle) {
  std::ostringstream os;
  os << kBundleMagic << ' ' << kBundleVersion << '\n';
  os << "target " << bundle.target << '\n';
  os << "arch " << bundle.arch << '\n';
  os << "format " << bundle.format << '\n';
  if (!bundle.source.empty())
    os << "source " << bundle.source << '\n';
  for (const BundleKernel &kernel : bundle.kernels) {
    os << "kernel " << kernel.name << " params=";
    for (size_t i = 0; i < kernel.params.size(); ++i)
      os << (i ? "," : "") << kernel.params[i];
    os << " cooperative=" << (kernel.cooperative ? 1 : 0) << " barrier-slots=";
    if (kernel.barrierSlots)
      os << *kernel.barrierSlots;
    else
      os << "runtime";
    os << " barrier-ops=" << kernel.barrierOps << '\n';
  }
  os << "code " << bundle.code.size() << '\n';
  os << bundle.code;
  return os.str();
}

/// Splits `line` at spaces.
static std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string_view::npos)
      end = line.size();
    if (end > pos)
      words.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

static bool parseUnsigned(std::string_view text, uint64_t &out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

/// Parses the attributes of a `kernel` line.
static bool parseKernel(const std::vector<std::string_view> &words,
                        BundleKernel &kernel, std::string &error) {
  if (words.size() < 2) {
    error = "kernel line without a name";
    return false;
  }
  kernel.name = words[1];
  for (size_t i = 2; i < words.size(); ++i) {
    std::string_view word = words[i];
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) {
      error = "malformed kernel attribute '" + std::string(word) + "'";
      return false;
    }
    std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    uint64_t number = 0;
    if (key == "params") {
      size_t pos = 0;
      while (pos < value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string_view::npos)
          comma = value.size();
        kernel.params.emplace_back(value.substr(pos, comma - pos));
        pos = comma + 1;
      }
    } else if (key == "cooperative" && (value == "0" || value == "1")) {
      kernel.cooperative = value == "1";
    } else if (key == "barrier-slots" && value == "runtime") {
      kernel.barrierSlots.reset();
    } else if (key == "barrier-slots" && parseUnsigned(value, number)) {
      kernel.barrierSlots = static_cast<uint32_t>(number);
    } else if (key == "barrier-ops" && parseUnsigned(value, number)) {
      kernel.barrierOps = static_cast<uint32_t>(number);
    } else {
      error =
          "unknown or malformed kernel attribute '" + std::string(word) + "'";
      return false;
    }
  }
  return true;
}

bool tle::run::parseBundle(std::string_view text, Bundle &out,
                           std::string &error) {
  size_t pos = 0;
  int lineNo = 0;
  bool sawHeader = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      error = "bundle ends before its `code` line";
      return false;
    }
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    auto fail = [&](const std::string &why) {
      error = "bundle line " + std::to_string(lineNo) + ": " + why;
      return false;
    };
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string_view> words = splitWords(line);
    std::string_view key = words[0];
    if (!sawHeader) {
      if (key != kBundleMagic || words.size() != 2)
        return fail("not a tle bundle");
      if (words[1] != std::to_string(kBundleVersion))
        return fail("bundle version " + std::string(words[1]) +
                    " is not supported (this tlerun reads version " +
                    std::to_string(kBundleVersion) + ")");
      sawHeader = true;
      continue;
    }
    std::string rest =
        words.size() > 1 ? std::string(line.substr(line.find(' ') + 1)) : "";
    if (key == "target")
      out.target = rest;
    else if (key == "arch")
      out.arch = rest;
    else if (key == "format")
      out.format = rest;
    else if (key == "source")
      out.source = rest;
    else if (key == "kernel") {
      BundleKernel kernel;
      if (!parseKernel(words, kernel, error))
        return fail(error);
      out.kernels.push_back(std::move(kernel));
    } else if (key == "code") {
      uint64_t bytes = 0;
      if (words.size() != 2 || !parseUnsigned(words[1], bytes))
        return fail("malformed code line");
      if (text.size() - pos < bytes)
        return fail("code is truncated: expected " + std::to_string(bytes) +
                    " bytes, found " + std::to_string(text.size() - pos));
      out.code = std::string(text.substr(pos, bytes));
      if (out.target != "cuda" && out.target != "host")
        return fail("unknown target '" + out.target + "'");
      return true;
    } else {
      return fail("unknown key '" + std::string(key) + "'");
    }
  }
  error = "bundle ends before its `code` line";
  return false;
}
