//===- Bundle.cpp - Reading and writing kernel bundles --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The bundle is line-oriented text up to a `code BYTES` line, then exactly
// BYTES bytes of code. Keys are words, values never contain control
// characters; a reader skips empty and `#` comment lines and rejects unknown
// or repeated keys, so that a newer or corrupted bundle fails loudly rather
// than running with half its metadata.
//
//===----------------------------------------------------------------------===//

#include "tle/Bundle/Bundle.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace tle::run;

const BundleKernel *Bundle::findKernel(std::string_view name) const {
  for (const BundleKernel &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

static bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool tle::run::isValidKernelName(std::string_view name) {
  if (name.empty() || !(isAlpha(name[0]) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!(isAlpha(c) || isDigit(c) || c == '_'))
      return false;
  return true;
}

bool tle::run::isValidParamType(std::string_view type) {
  static const std::set<std::string_view> types = {
      "ptr", "i1", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "index"};
  return types.count(type) != 0;
}

std::string tle::run::joinParams(const std::vector<std::string> &params) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i)
    out += (i ? "," : "") + params[i];
  return out;
}

/// A value may hold printable characters only (a newline would start a new
/// key, which is how a hostile source name could inject metadata).
static bool isPrintable(std::string_view value) {
  for (char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return false;
  return true;
}

bool tle::run::looksLikeBundle(std::string_view text) {
  return text.substr(0, kBundleMagic.size()) == kBundleMagic;
}

bool tle::run::writeBundle(const Bundle &bundle, std::string &out,
                           std::string &error) {
  for (std::string_view value :
       {std::string_view(bundle.target), std::string_view(bundle.arch),
        std::string_view(bundle.format), std::string_view(bundle.source)})
    if (!isPrintable(value) || value.find(' ') == 0) {
      error = "bundle field '" + std::string(value) +
              "' holds a control character or starts with a space";
      return false;
    }
  std::ostringstream os;
  os << kBundleMagic << ' ' << kBundleVersion << '\n';
  os << "target " << bundle.target << '\n';
  os << "arch " << bundle.arch << '\n';
  os << "format " << bundle.format << '\n';
  if (!bundle.source.empty())
    os << "source " << bundle.source << '\n';
  for (const BundleKernel &kernel : bundle.kernels) {
    if (!isValidKernelName(kernel.name)) {
      error = "kernel name '" + kernel.name + "' is not a C identifier";
      return false;
    }
    for (const std::string &type : kernel.params)
      if (!isValidParamType(type)) {
        error = "kernel '" + kernel.name + "' has parameter type '" + type +
                "', which a bundle cannot carry";
        return false;
      }
    os << "kernel " << kernel.name << " params=" << joinParams(kernel.params)
       << " cooperative=" << (kernel.cooperative ? 1 : 0) << " barrier-slots=";
    if (kernel.barrierSlots)
      os << *kernel.barrierSlots;
    else
      os << "runtime";
    os << " barrier-ops=" << kernel.barrierOps << " signal-words=";
    if (kernel.signalWords)
      os << *kernel.signalWords;
    else
      os << "runtime";
    os << " counter-words=";
    if (kernel.counterWords)
      os << *kernel.counterWords;
    else
      os << "runtime";
    os << '\n';
  }
  for (const BundleSite &site : bundle.sites) {
    if (site.id == 0 || site.text.empty() || !isPrintable(site.text)) {
      error = "call site " + std::to_string(site.id) +
              " has no text or a control character in it";
      return false;
    }
    os << "site " << site.id << ' ' << site.text << '\n';
  }
  os << "code " << bundle.code.size() << '\n';
  os << bundle.code;
  out = os.str();
  return true;
}

/// Splits `line` at spaces (runs of spaces count as one).
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

static bool parseU32(std::string_view text, uint32_t &out) {
  uint64_t v = 0;
  if (!parseUnsigned(text, v) || v > std::numeric_limits<uint32_t>::max())
    return false;
  out = static_cast<uint32_t>(v);
  return true;
}

/// Parses the attributes of a `kernel` line of a bundle of format `version`;
/// each must appear exactly once.
static bool parseKernel(const std::vector<std::string_view> &words, int version,
                        BundleKernel &kernel, std::string &error) {
  if (words.size() < 2) {
    error = "kernel line without a name";
    return false;
  }
  if (!isValidKernelName(words[1])) {
    error = "kernel name '" + std::string(words[1]) + "' is not a C identifier";
    return false;
  }
  kernel.name = words[1];
  std::set<std::string_view> seen;
  for (size_t i = 2; i < words.size(); ++i) {
    std::string_view word = words[i];
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) {
      error = "malformed kernel attribute '" + std::string(word) + "'";
      return false;
    }
    std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    if (!seen.insert(key).second) {
      error = "kernel attribute '" + std::string(key) + "' given twice";
      return false;
    }
    if (key == "params") {
      size_t pos = 0;
      while (pos < value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string_view::npos)
          comma = value.size();
        std::string_view type = value.substr(pos, comma - pos);
        if (!isValidParamType(type)) {
          error = "unknown parameter type '" + std::string(type) + "'";
          return false;
        }
        if (kernel.params.size() == kMaxKernelParams) {
          error =
              "more than " + std::to_string(kMaxKernelParams) + " parameters";
          return false;
        }
        kernel.params.emplace_back(type);
        pos = comma + 1;
      }
      if (!value.empty() && value.back() == ',') {
        error = "empty parameter type in '" + std::string(value) + "'";
        return false;
      }
    } else if (key == "cooperative" && (value == "0" || value == "1")) {
      kernel.cooperative = value == "1";
    } else if (key == "barrier-slots" && value == "runtime") {
      kernel.barrierSlots.reset();
    } else if (uint32_t n = 0; key == "barrier-slots" && parseU32(value, n)) {
      kernel.barrierSlots = n;
    } else if (key == "barrier-ops" && parseU32(value, n)) {
      kernel.barrierOps = n;
    } else if (version >= 3 && key == "signal-words" && value == "runtime") {
      kernel.signalWords.reset();
    } else if (version >= 3 && key == "signal-words" && parseU32(value, n)) {
      kernel.signalWords = n;
    } else if (version >= 4 && key == "counter-words" && value == "runtime") {
      kernel.counterWords.reset();
    } else if (version >= 4 && key == "counter-words" && parseU32(value, n)) {
      kernel.counterWords = n;
    } else {
      error =
          "unknown or malformed kernel attribute '" + std::string(word) + "'";
      return false;
    }
  }
  std::vector<std::string_view> required = {"params", "cooperative",
                                            "barrier-slots", "barrier-ops"};
  if (version >= 3)
    required.push_back("signal-words");
  if (version >= 4)
    required.push_back("counter-words");
  for (std::string_view key : required)
    if (!seen.count(key)) {
      error = "kernel '" + kernel.name + "' lacks its '" + std::string(key) +
              "' attribute";
      return false;
    }
  return true;
}

/// Checks the header fields once the `code` line is reached.
static bool checkHeader(const Bundle &b, std::string &error) {
  if (b.target != "cuda" && b.target != "host") {
    error = "unknown target '" + b.target + "'";
    return false;
  }
  const char *format = b.target == "cuda" ? "ptx" : "llvm";
  if (b.format != format) {
    error = "format '" + b.format + "' does not match target '" + b.target +
            "' (expected '" + format + "')";
    return false;
  }
  if (b.arch.empty()) {
    error = "no arch line";
    return false;
  }
  if (b.kernels.empty()) {
    error = "no kernel line";
    return false;
  }
  return true;
}

bool tle::run::parseBundle(std::string_view text, Bundle &out,
                           std::string &error) {
  out = Bundle();
  size_t pos = 0;
  int lineNo = 0;
  bool sawHeader = false;
  int version = 0;
  std::set<std::string_view> seenKeys;
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
    std::vector<std::string_view> words = splitWords(line);
    if (words.empty() || line[0] == '#')
      continue;
    if (!isPrintable(line))
      return fail("control character in a metadata line");
    std::string_view key = words[0];
    if (!sawHeader) {
      if (key != kBundleMagic || words.size() != 2)
        return fail("not a tle bundle");
      for (int v = kOldestBundleVersion; v <= kBundleVersion; ++v)
        if (words[1] == std::to_string(v))
          version = v;
      if (!version)
        return fail("bundle version " + std::string(words[1]) +
                    " is not supported (this tlerun reads versions " +
                    std::to_string(kOldestBundleVersion) + " to " +
                    std::to_string(kBundleVersion) +
                    "; recompile the kernel with this tlec)");
      sawHeader = true;
      continue;
    }
    if (key != "kernel" && key != "site" && !seenKeys.insert(key).second)
      return fail("key '" + std::string(key) + "' given twice");
    std::string rest(line.substr(line.find(key) + key.size()));
    rest.erase(0, rest.find_first_not_of(' '));
    if (key == "target")
      out.target = rest;
    else if (key == "arch")
      out.arch = rest;
    else if (key == "format")
      out.format = rest;
    else if (key == "source")
      out.source = rest;
    else if (key == "kernel") {
      if (out.kernels.size() == kMaxBundleKernels)
        return fail("more than " + std::to_string(kMaxBundleKernels) +
                    " kernels");
      BundleKernel kernel;
      if (!parseKernel(words, version, kernel, error))
        return fail(error);
      if (out.findKernel(kernel.name))
        return fail("kernel '" + kernel.name + "' listed twice");
      out.kernels.push_back(std::move(kernel));
    } else if (key == "site" && version >= 5) {
      if (out.sites.size() == kMaxBundleSites)
        return fail("more than " + std::to_string(kMaxBundleSites) +
                    " call sites");
      BundleSite site;
      size_t space = rest.find(' ');
      if (words.size() < 3 || !parseU32(words[1], site.id) || site.id == 0 ||
          space == std::string::npos)
        return fail("malformed site line");
      site.text = rest.substr(space + 1);
      out.sites.push_back(std::move(site));
    } else if (key == "code") {
      uint64_t bytes = 0;
      if (words.size() != 2 || !parseUnsigned(words[1], bytes))
        return fail("malformed code line");
      if (text.size() - pos != bytes)
        return fail("code size mismatch: the code line says " +
                    std::to_string(bytes) + " bytes, the bundle holds " +
                    std::to_string(text.size() - pos));
      if (!checkHeader(out, error))
        return fail(error);
      out.code = std::string(text.substr(pos, bytes));
      return true;
    } else {
      return fail("unknown key '" + std::string(key) + "'");
    }
  }
  error = "bundle ends before its `code` line";
  return false;
}

namespace {
/// Closes a descriptor this file opened.
struct InputFd {
  int fd = -1;
  bool owned = false;
  ~InputFd() {
    if (owned && fd >= 0)
      close(fd);
  }
};

std::string describeErrno(const std::string &what, const std::string &path) {
  return "cannot " + what + " '" + path + "': " + std::strerror(errno);
}

/// Waits until a process opens the FIFO `fd` (opened O_NONBLOCK) for
/// writing, keeping what it may already have written in `out`; then makes
/// `fd` blocking. A FIFO without a writer reads as EOF at once.
bool awaitWriter(int fd, const std::string &path, std::string &out,
                 std::string &error) {
  using Clock = std::chrono::steady_clock;
  auto end =
      Clock::now() + std::chrono::milliseconds(tle::run::kFifoWriterWaitMs);
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      break;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break; // a writer, nothing written yet
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = describeErrno("read", path);
      return false;
    }
    if (Clock::now() >= end) {
      error = "no process opened the FIFO '" + path + "' for writing within " +
              std::to_string(tle::run::kFifoWriterWaitMs) + " ms";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    error = describeErrno("read", path);
    return false;
  }
  return true;
}
} // namespace

bool tle::run::readInputFile(const std::string &path, std::string &out,
                             std::string &error) {
  out.clear();
  InputFd in;
  struct stat st;
  if (path == "-") {
    in.fd = STDIN_FILENO;
  } else {
    if (stat(path.c_str(), &st) != 0) {
      error = describeErrno("open", path);
      return false;
    }
    bool fifo = S_ISFIFO(st.st_mode);
    if (S_ISREG(st.st_mode) && uint64_t(st.st_size) > kMaxInputBytes) {
      error = "'" + path + "' is " + std::to_string(st.st_size) +
              " bytes, more than the " + std::to_string(kMaxInputBytes) +
              " an input may have";
      return false;
    }
    // A FIFO is opened without waiting for a writer (which open() would do
    // forever); awaitWriter bounds the wait.
    in.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
    in.owned = true;
    if (in.fd < 0) {
      error = describeErrno("open", path);
      return false;
    }
    if (fifo && !awaitWriter(in.fd, path, out, error))
      return false;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = read(in.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = describeErrno("read", path);
      return false;
    }
    if (n == 0)
      return true;
    if (out.size() + static_cast<size_t>(n) > kMaxInputBytes) {
      error = "'" + path + "' holds more than " +
              std::to_string(kMaxInputBytes) +
              " bytes, the most an input may have (an endless stream such "
              "as /dev/zero?)";
      out.clear();
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}
