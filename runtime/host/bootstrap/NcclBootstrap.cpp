//===- NcclBootstrap.cpp - The exchange over an existing NCCL comm --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A communicator made from an NCCL communicator (tleCommInitFromNccl)
// exchanges its handles with NCCL's own all-gather instead of a second
// bootstrap: each step stages this rank's blob in device memory, runs
// ncclAllGather on a stream of TLE's, and copies the result back; a first
// all-gather of the blobs' lengths sizes the second. libtle never links
// NCCL: the functions are the caller's, or those of the libnccl.so.2
// already loaded in the process, found with dlopen(RTLD_NOLOAD).
//
// Each step's first all-gather carries (rank, length) with a magic number,
// checked against where it arrived, so that two ranks claiming one NCCL
// rank, or an all-gather that returns other bytes, are refused on the
// spot; a length past wire::kMaxFrameBytes is refused before anything is
// sized by it.
//
// NCCL's collectives carry bytes, not file descriptors, so this bootstrap
// refuses descriptors (the emulator's memory files and cuMem exports need
// them; the CUDA backend falls back to legacy IPC). A step waits for the
// all-gather until the bootstrap deadline, watching NCCL's asynchronous
// error; a step that times out leaves the all-gather queued on the stream,
// so its buffers are left to it (never freed under a running kernel) and
// the channel fails every later step with the reason.
//
//===----------------------------------------------------------------------===//

#include "bootstrap/NcclBootstrap.h"

#include "bootstrap/Wire.h"
#include "diag/Error.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

namespace tle {
namespace {

/// NCCL's encodings that TLE needs (nccl.h): ncclInt8, ncclSuccess,
/// ncclInProgress.
constexpr int kNcclInt8 = 0;
constexpr int kNcclSuccess = 0;
constexpr int kNcclInProgress = 7;

class NcclBootstrap final : public Bootstrap {
public:
  NcclBootstrap(const NcclApi &api, void *comm, int rank, int size,
                std::shared_ptr<Backend> staging, void *stream,
                int64_t timeoutMs)
      : api(api), comm(comm), myRank(rank), nRanks(size),
        staging(std::move(staging)), stream(stream), timeoutMs(timeoutMs) {}

  ~NcclBootstrap() override {
    // After a step that never completed, NCCL may still write into the
    // buffers: leave them (and the stream, which destroyStream does not
    // wait for) to the queued all-gather.
    if (!pending) {
      if (send)
        staging->freeLocal(send);
      if (recv)
        staging->freeLocal(recv);
    }
    if (stream)
      staging->destroyStream(stream);
  }

  int rank() const override { return myRank; }
  int size() const override { return nRanks; }
  bool outOfBand() const override { return false; }

  tleResult_t allGather(const std::string &mine,
                        std::vector<std::string> &out) override {
    if (!brokenReason.empty())
      return fail(tlePeerFailure, "%s", brokenReason.c_str());
    // Each rank says who it is with its length, so that two ranks that
    // claim one rank, or an all-gather that returns something else than
    // what the ranks sent, are refused here instead of being believed.
    wire::NcclAnnounce announce = {wire::kNcclAnnounceMagic, myRank,
                                   mine.size()};
    std::string announced;
    if (tleResult_t r = gather(&announce, sizeof(announce), announced))
      return breakWith(r);
    wire::NcclAnnounced got = wire::checkNcclAnnounced(
        reinterpret_cast<const uint8_t *>(announced.data()), announced.size(),
        nRanks, myRank, mine.size());
    if (got.bad == nRanks)
      return breakWith(
          fail(tleInvalidArgument,
               "the exchange through NCCL announced more bytes "
               "in all than the %llu an exchange carries",
               static_cast<unsigned long long>(wire::kMaxFrameBytes)));
    if (got.bad >= 0)
      return breakWith(inconsistent(
          got.bad, got.claimed < 0 ? std::string("no contribution")
                                   : "rank " + std::to_string(got.claimed) +
                                         "'s contribution"));
    const std::vector<uint64_t> &lengths = got.lengths;
    uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
    out.assign(nRanks, std::string());
    if (longest == 0)
      return tleSuccess;
    std::string padded = mine;
    padded.resize(longest);
    std::string all;
    if (tleResult_t r = gather(padded.data(), longest, all))
      return breakWith(r);
    if (all.compare(myRank * longest, mine.size(), mine) != 0)
      return breakWith(inconsistent(myRank, "other bytes than it sent"));
    for (int p = 0; p < nRanks; ++p)
      out[p] = all.substr(p * longest, lengths[p]);
    return tleSuccess;
  }

  tleResult_t
  allGatherFds(const std::string &mine, const std::vector<int> &myFds,
               std::vector<std::string> &out,
               std::vector<std::vector<UniqueFd>> &outFds) override {
    if (!myFds.empty())
      return fail(tleInternalError,
                  "file descriptors cannot travel through NCCL's "
                  "collectives");
    outFds.clear();
    outFds.resize(nRanks);
    return allGather(mine, out);
  }

private:
  /// The exchange returned `what` at rank `p`'s place.
  static tleResult_t inconsistent(int p, const std::string &what) {
    return fail(tleInvalidArgument,
                "the exchange through NCCL is inconsistent: at rank %d's "
                "place it returned %s (two ranks claim one NCCL rank, or "
                "ncclAllGather does not gather every rank's bytes in rank "
                "order)",
                p, what.c_str());
  }

  tleResult_t breakWith(tleResult_t r) {
    brokenReason =
        "an earlier exchange through NCCL failed: " + lastErrorDetail();
    return r;
  }

  /// Grows the staging buffers to `bytes` per rank.
  tleResult_t reserve(size_t bytes) {
    if (bytes <= capacity)
      return tleSuccess;
    size_t want = std::max<size_t>(bytes, 2 * capacity);
    void *s, *r;
    if (tleResult_t e = staging->allocLocal(want, &s))
      return e;
    if (tleResult_t e = staging->allocLocal(want * nRanks, &r)) {
      staging->freeLocal(s);
      return e;
    }
    if (send)
      staging->freeLocal(send);
    if (recv)
      staging->freeLocal(recv);
    send = s;
    recv = r;
    capacity = want;
    return tleSuccess;
  }

  std::string ncclText(int result) const {
    const char *text = api.getErrorString ? api.getErrorString(result) : "";
    return "NCCL error " + std::to_string(result) +
           (text && *text ? std::string(" (") + text + ")" : "");
  }

  /// All-gathers `bytes` at `data` from every rank into `out`.
  tleResult_t gather(const void *data, size_t bytes, std::string &out) {
    if (tleResult_t r = reserve(bytes))
      return r;
    if (tleResult_t r = staging->copyToLocal(send, data, bytes))
      return r;
    pending = true;
    int result = api.allGather(send, recv, bytes, kNcclInt8, comm, stream);
    if (result != kNcclSuccess && result != kNcclInProgress) {
      pending = false;
      return fail(tlePeerFailure, "ncclAllGather failed: %s",
                  ncclText(result).c_str());
    }
    if (tleResult_t r = await())
      return r;
    pending = false;
    out.resize(bytes * nRanks);
    return staging->copyFromLocal(out.data(), recv, bytes * nRanks);
  }

  /// Waits until the all-gather on `stream` is done, NCCL reports an error
  /// or the deadline passes.
  tleResult_t await() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto nap = std::chrono::microseconds(5);
    for (;;) {
      if (api.commGetAsyncError) {
        int async = kNcclSuccess;
        int r = api.commGetAsyncError(comm, &async);
        if (r != kNcclSuccess)
          return fail(tlePeerFailure, "ncclCommGetAsyncError failed: %s",
                      ncclText(r).c_str());
        if (async != kNcclSuccess && async != kNcclInProgress)
          return fail(tlePeerFailure,
                      "NCCL reported an error during the exchange: %s (a "
                      "peer failed or left)",
                      ncclText(async).c_str());
      }
      bool done = false;
      if (tleResult_t r = staging->streamDone(stream, done))
        return r;
      if (done)
        return tleSuccess;
      auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                        Clock::now() - start)
                        .count();
      if (timeoutMs > 0 && waited >= timeoutMs)
        return fail(tleTimeout,
                    "an exchange through NCCL (ncclAllGather) did not "
                    "complete within %lld ms: a rank did not make the same "
                    "call; the NCCL communicator keeps the all-gather queued "
                    "(abort it with ncclCommAbort)",
                    static_cast<long long>(timeoutMs));
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }

  NcclApi api;
  void *comm;
  int myRank, nRanks;
  std::shared_ptr<Backend> staging;
  void *stream;
  int64_t timeoutMs;
  void *send = nullptr, *recv = nullptr;
  size_t capacity = 0;
  /// An all-gather was queued and has not been seen to complete.
  bool pending = false;
  std::string brokenReason;
};

/// Sets `out` to function `name` of the libnccl loaded in this process
/// (null when there is none).
template <typename Fn>
void findLoaded(void *library, const char *name, Fn &out) {
  void *fn = library ? dlsym(library, name) : nullptr;
  out = reinterpret_cast<Fn>(fn ? fn : dlsym(RTLD_DEFAULT, name));
}

/// See createNodeBootstrap.
class NodeBootstrap final : public Bootstrap {
public:
  NodeBootstrap(std::unique_ptr<Bootstrap> world, int nodeSize)
      : world(std::move(world)), nodeSize(nodeSize),
        first(this->world->rank() / nodeSize * nodeSize) {}

  int rank() const override { return world->rank() - first; }
  int size() const override { return nodeSize; }

  tleResult_t allGather(const std::string &mine,
                        std::vector<std::string> &out) override {
    std::vector<std::string> all;
    if (tleResult_t r = world->allGather(mine, all))
      return r;
    out.assign(all.begin() + first, all.begin() + first + nodeSize);
    return tleSuccess;
  }

  tleResult_t
  allGatherFds(const std::string &mine, const std::vector<int> &myFds,
               std::vector<std::string> &out,
               std::vector<std::vector<UniqueFd>> &outFds) override {
    std::vector<std::string> all;
    std::vector<std::vector<UniqueFd>> allFds;
    if (tleResult_t r = world->allGatherFds(mine, myFds, all, allFds))
      return r;
    out.assign(all.begin() + first, all.begin() + first + nodeSize);
    outFds.clear();
    for (int p = first; p < first + nodeSize && p < int(allFds.size()); ++p)
      outFds.push_back(std::move(allFds[p]));
    return tleSuccess;
  }

  bool outOfBand() const override { return world->outOfBand(); }

  // No watch(): the NCCL exchange has no watchdog (NCCL reports a dead
  // peer through its own asynchronous error).

private:
  std::unique_ptr<Bootstrap> world;
  int nodeSize;
  int first; ///< world rank of the node's first rank
};

} // namespace

std::unique_ptr<Bootstrap> createNodeBootstrap(std::unique_ptr<Bootstrap> world,
                                               int nodeSize) {
  return std::make_unique<NodeBootstrap>(std::move(world), nodeSize);
}

tleResult_t resolveNccl(const tleNcclFunctions_t *given, NcclApi &out) {
  if (given) {
    // The device-API members came later: a caller built against the
    // older struct passes its smaller size and has none of them.
    constexpr size_t kFirstSize = offsetof(tleNcclFunctions_t, getVersion);
    if (given->size < kFirstSize || given->size > sizeof(tleNcclFunctions_t))
      return fail(tleInvalidArgument,
                  "nccl->size is %zu, expected %zu: set it to "
                  "sizeof(tleNcclFunctions_t)",
                  given->size, sizeof(tleNcclFunctions_t));
    if (!given->allGather || !given->commCount || !given->commUserRank ||
        !given->commCuDevice)
      return fail(tleInvalidArgument,
                  "nccl lacks allGather, commCount, commUserRank or "
                  "commCuDevice (only commGetAsyncError and getErrorString "
                  "may be NULL)");
    out.allGather = given->allGather;
    out.commCount = given->commCount;
    out.commUserRank = given->commUserRank;
    out.commCuDevice = given->commCuDevice;
    out.commGetAsyncError = given->commGetAsyncError;
    out.getErrorString = given->getErrorString;
    if (given->size >= offsetof(tleNcclFunctions_t, commWindowRegister)) {
      out.getVersion = given->getVersion;
      out.devCommCreate = given->devCommCreate;
      out.devCommDestroy = given->devCommDestroy;
    }
    if (given->size >= sizeof(tleNcclFunctions_t)) {
      out.commWindowRegister = given->commWindowRegister;
      out.commWindowDeregister = given->commWindowDeregister;
    }
    return tleSuccess;
  }
  // RTLD_NOLOAD: only a library the process already has (the one that made
  // the communicator); loading another copy would call into a second NCCL
  // that knows nothing of it.
  void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  if (!library)
    library = dlopen("libnccl.so", RTLD_NOW | RTLD_NOLOAD);
  findLoaded(library, "ncclAllGather", out.allGather);
  findLoaded(library, "ncclCommCount", out.commCount);
  findLoaded(library, "ncclCommUserRank", out.commUserRank);
  findLoaded(library, "ncclCommCuDevice", out.commCuDevice);
  findLoaded(library, "ncclCommGetAsyncError", out.commGetAsyncError);
  findLoaded(library, "ncclGetErrorString", out.getErrorString);
  findLoaded(library, "ncclGetVersion", out.getVersion);
  findLoaded(library, "ncclDevCommCreate", out.devCommCreate);
  findLoaded(library, "ncclDevCommDestroy", out.devCommDestroy);
  findLoaded(library, "ncclCommWindowRegister", out.commWindowRegister);
  findLoaded(library, "ncclCommWindowDeregister", out.commWindowDeregister);
  // The handle only pins a library the process holds anyway.
  if (library)
    dlclose(library);
  if (!out.allGather || !out.commCount || !out.commUserRank ||
      !out.commCuDevice)
    return fail(tleNotSupported,
                "no NCCL library is loaded in this process (libnccl.so.2 "
                "not found with RTLD_NOLOAD, ncclAllGather not a global "
                "symbol): pass its functions in tleNcclFunctions_t");
  return tleSuccess;
}

tleResult_t createNcclBootstrap(const NcclApi &api, void *comm, int rank,
                                int size, std::shared_ptr<Backend> staging,
                                int64_t timeoutMs,
                                std::unique_ptr<Bootstrap> &out) {
  void *stream = nullptr;
  if (tleResult_t r = staging->createStream(&stream))
    return r;
  out = std::make_unique<NcclBootstrap>(api, comm, rank, size,
                                        std::move(staging), stream, timeoutMs);
  return tleSuccess;
}

} // namespace tle
