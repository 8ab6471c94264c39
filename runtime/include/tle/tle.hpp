//===- tle.hpp - C++ layer over the TLE host C API --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// RAII owners for communicators and symmetric buffers, and exceptions
// instead of status codes. Header-only and built only on tle.h: exceptions
// are thrown here, in the caller's code, never across the C API.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_TLE_HPP
#define TLE_TLE_HPP

#include "tle/tle.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tle {

/// A failed TLE call: the status and the library's detail.
class Error : public std::runtime_error {
public:
  Error(tleResult_t result, const std::string &what)
      : std::runtime_error(what), code(result) {}
  tleResult_t result() const { return code; }

private:
  tleResult_t code;
};

/// Throws tle::Error unless `result` is tleSuccess.
inline void check(tleResult_t result) {
  if (result != tleSuccess)
    throw Error(result, std::string(tleGetErrorString(result)) + ": " +
                            tleGetLastErrorDetail());
}

/// A tleConfig_t initialised with TLE_CONFIG_INITIALIZER.
inline tleConfig_t defaultConfig() {
  tleConfig_t config = TLE_CONFIG_INITIALIZER;
  return config;
}

/// Owns a tleComm_t.
class Comm {
public:
  Comm() = default;
  /// Takes ownership of `comm`.
  explicit Comm(tleComm_t comm) : comm(comm) {}
  Comm(Comm &&other) noexcept : comm(std::exchange(other.comm, nullptr)) {}
  Comm &operator=(Comm &&other) noexcept {
    if (this != &other) {
      reset();
      comm = std::exchange(other.comm, nullptr);
    }
    return *this;
  }
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;
  ~Comm() { reset(); }

  /// tleCommInitRank: this process is `rank` of `nRanks`.
  static Comm initRank(int nRanks, const tleUniqueId &id, int rank,
                       int device = 0,
                       const tleConfig_t &config = defaultConfig()) {
    tleComm_t c;
    check(tleCommInitRank(&c, nRanks, &id, rank, device, &config));
    return Comm(c);
  }
  /// tleCommInitAll: every rank in this process; devices may be empty.
  static std::vector<Comm>
  initAll(int nRanks, const std::vector<int> &devices = {},
          const tleConfig_t &config = defaultConfig()) {
    std::vector<tleComm_t> raw(nRanks);
    check(tleCommInitAll(raw.data(), nRanks,
                         devices.empty() ? nullptr : devices.data(), &config));
    std::vector<Comm> comms;
    for (tleComm_t c : raw)
      comms.emplace_back(c);
    return comms;
  }
  /// tleCommInitFromNccl: this rank of NCCL communicator `ncclComm`
  /// (ncclComm_t), exchanging through NCCL; `nccl` NULL finds the process's
  /// libnccl. The default config is the CUDA backend's.
  static Comm initFromNccl(void *ncclComm,
                           const tleNcclFunctions_t *nccl = nullptr,
                           const tleConfig_t *config = nullptr) {
    tleComm_t c;
    check(tleCommInitFromNccl(&c, ncclComm, nccl, config));
    return Comm(c);
  }
  /// A fresh id for initRank (made once, shared with every rank).
  static tleUniqueId uniqueId() {
    tleUniqueId id;
    check(tleGetUniqueId(&id));
    return id;
  }

  tleComm_t get() const { return comm; }
  explicit operator bool() const { return comm != nullptr; }
  /// Gives up ownership.
  tleComm_t release() { return std::exchange(comm, nullptr); }
  /// Destroys the communicator now (errors are ignored, as in the
  /// destructor; call tleCommDestroy directly to see them).
  void reset() {
    if (comm)
      tleCommDestroy(std::exchange(comm, nullptr));
  }

  int rank() const {
    int r;
    check(tleCommRank(comm, &r));
    return r;
  }
  int size() const {
    int s;
    check(tleCommSize(comm, &s));
    return s;
  }
  tleBackend_t backend() const {
    tleBackend_t b;
    check(tleCommBackend(comm, &b));
    return b;
  }
  /// The kernel's communicator argument.
  void *devComm() const {
    void *d;
    check(tleCommGetDevComm(comm, &d));
    return d;
  }
  /// Reads and clears the device error record; info.result == tleSuccess
  /// when nothing was recorded. Does not throw for a recorded error.
  tleErrorInfo takeError() const {
    tleErrorInfo info{};
    tleResult_t r = tleCommGetError(comm, &info);
    if (r != tleSuccess && r != info.result)
      check(r);
    return info;
  }

private:
  tleComm_t comm = nullptr;
};

/// Owns a tleMem_t.
class Mem {
public:
  Mem() = default;
  /// Takes ownership of `mem`.
  explicit Mem(tleMem_t mem) : mem(mem) {}
  Mem(Mem &&other) noexcept : mem(std::exchange(other.mem, nullptr)) {}
  Mem &operator=(Mem &&other) noexcept {
    if (this != &other) {
      reset();
      mem = std::exchange(other.mem, nullptr);
    }
    return *this;
  }
  Mem(const Mem &) = delete;
  Mem &operator=(const Mem &) = delete;
  ~Mem() { reset(); }

  /// tleMemAlloc: collective over `comm`.
  static Mem alloc(const Comm &comm, size_t bytes) {
    tleMem_t m;
    check(tleMemAlloc(comm.get(), bytes, &m));
    return Mem(m);
  }
  /// tleMemRegister: `bytes` of the caller's memory at `ptr` as a symmetric
  /// buffer (collective over `comm`); destroying the Mem unmaps the peers'
  /// copies and leaves the memory to the caller.
  static Mem registerMemory(const Comm &comm, void *ptr, size_t bytes) {
    tleMem_t m;
    check(tleMemRegister(comm.get(), ptr, bytes, &m));
    return Mem(m);
  }
  /// tleMemAllocAll over every rank of a Comm::initAll set.
  static std::vector<Mem> allocAll(const std::vector<Comm> &comms,
                                   size_t bytes) {
    std::vector<tleComm_t> raw;
    for (const Comm &c : comms)
      raw.push_back(c.get());
    std::vector<tleMem_t> out(raw.size());
    check(tleMemAllocAll(raw.data(), static_cast<int>(raw.size()), bytes,
                         out.data()));
    std::vector<Mem> mems;
    for (tleMem_t m : out)
      mems.emplace_back(m);
    return mems;
  }

  /// tleMemImport: `bytes` at `localPtr`, already mapped into every rank;
  /// `peerPtrs` (comm size entries) or NULL to exchange the addresses.
  static Mem importMapped(const Comm &comm, void *localPtr, size_t bytes,
                          void *const *peerPtrs = nullptr) {
    tleMem_t m;
    check(tleMemImport(comm.get(), localPtr, bytes, peerPtrs, &m));
    return Mem(m);
  }

  tleMem_t get() const { return mem; }
  explicit operator bool() const { return mem != nullptr; }
  tleMem_t release() { return std::exchange(mem, nullptr); }
  void reset() {
    if (mem)
      tleMemFree(std::exchange(mem, nullptr));
  }

  /// The kernel's `mem` argument.
  void *handle() const {
    void *h;
    check(tleMemGetHandle(mem, &h));
    return h;
  }
  /// This rank's copy.
  void *localPtr() const {
    void *p;
    check(tleMemGetLocalPtr(mem, &p));
    return p;
  }

private:
  tleMem_t mem = nullptr;
};

} // namespace tle

#endif // TLE_TLE_HPP
