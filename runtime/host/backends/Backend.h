//===- Backend.h - Memory backends behind the communicator -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The communicator logic (bootstrap, exchange of handles, building the
// DevComm) is the same for the CPU emulator and for CUDA; what differs is
// how memory is allocated, shared with peers and written. A Backend captures
// exactly that. One Backend object serves one rank.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_HOST_BACKEND_H
#define TLE_HOST_BACKEND_H

#include "tle/tle.h"

#include <cstddef>
#include <memory>
#include <string>

namespace tle {

/// Memory of one rank that peers can map.
struct SharedAlloc {
  void *ptr = nullptr; ///< this rank's address (device memory on GPUs)
  size_t bytes = 0;
  std::string exportBlob; ///< what a peer in another process needs to map it
  /// A descriptor a peer in another process needs as well (the CPU
  /// backend's memory file), owned by the backend; -1 when none. It
  /// travels to the peers over the bootstrap's socket.
  int exportFd = -1;
  void *impl = nullptr; ///< backend-private
};

/// One rank's copy of an imported buffer, as adoptImported sees it.
struct ImportedCopy {
  enum Source {
    Own,    ///< this rank's copy
    Caller, ///< a peer's copy; this rank's caller gave the address
    Peer,   ///< a peer's copy at the address the peer itself reported, so
            ///< only valid where that address means the same memory here
  } source = Own;
  /// Source Peer: the peer's device (-1 for the emulator), and whether the
  /// peer runs in this process.
  int peerDevice = -1;
  bool peerInProcess = false;
};

/// Methods may be called from any thread: in one process, the last rank to
/// drop a peer's allocation frees it through the owner's Backend.
class Backend {
public:
  virtual ~Backend() = default;
  virtual tleBackend_t kind() const = 0;
  /// The device this rank runs on (-1 for the emulator).
  virtual int device() const = 0;
  /// What memory peers map comes from, for the log ("cuMem", ...).
  virtual const char *sharedMemoryKind() const = 0;

  /// Zero-filled memory that peers can map (inboxes, symmetric buffers).
  virtual tleResult_t allocShared(size_t bytes, SharedAlloc &out) = 0;
  virtual tleResult_t freeShared(SharedAlloc &alloc) = 0;
  /// Map a peer's allocation. `sameProcess` peers pass their pointer in the
  /// blob's place (peer access within one process). Across processes,
  /// `peer.exportFd` is this process's copy of the peer's exportFd (the
  /// caller closes it).
  virtual tleResult_t importPeer(const SharedAlloc &peer, bool sameProcess,
                                 void **mapped) = 0;
  virtual tleResult_t closePeer(void *mapped, bool sameProcess) = 0;
  /// Every peer has imported `alloc`: drop whatever lets others import it
  /// (the CPU backend closes its memory file). Mappings stay valid. The
  /// default has nothing to drop.
  virtual tleResult_t releaseExport(SharedAlloc &alloc) {
    (void)alloc;
    return tleSuccess;
  }

  /// Registration of memory the user allocated (tleMemRegister,
  /// Register.cpp). exportRegion checks that `bytes` at `ptr` can be shared
  /// and fills `out` as allocShared would (ptr, bytes, and across processes
  /// the export blob and descriptor), without taking ownership of the
  /// memory; a peer in the same process uses importPeer/closePeer on it as
  /// on an allocation. Across processes a peer maps it with importRegion
  /// and unmaps it with closeRegion. unexportRegion releases what
  /// exportRegion made and leaves the memory to its owner. The defaults
  /// refuse: a backend that cannot share user memory says so.
  virtual tleResult_t exportRegion(void *ptr, size_t bytes, bool sameProcess,
                                   SharedAlloc &out);
  virtual tleResult_t unexportRegion(SharedAlloc &region);
  virtual tleResult_t importRegion(const SharedAlloc &peer, void **mapped);
  virtual tleResult_t closeRegion(void *mapped);

  /// Memory only this rank uses (epochs, the DevComm itself), zero-filled.
  virtual tleResult_t allocLocal(size_t bytes, void **out) = 0;
  virtual tleResult_t freeLocal(void *ptr) = 0;
  /// Memory the host can read after a failed launch and the device can
  /// write (the error record): host-mapped pinned memory on GPUs.
  virtual tleResult_t allocHostVisible(size_t bytes, void **host,
                                       void **dev) = 0;
  virtual tleResult_t freeHostVisible(void *host) = 0;
  virtual tleResult_t copyToLocal(void *dst, const void *src, size_t bytes) = 0;
  /// Copies `bytes` of this rank's local memory `src` to host memory `dst`
  /// (synchronous).
  virtual tleResult_t copyFromLocal(void *dst, const void *src,
                                    size_t bytes) = 0;

  /// Memory TLE did not allocate (tleMemImport): checks that this rank's
  /// kernels can access `bytes` at `ptr` and makes it accessible where that
  /// is TLE's part (peer access to another GPU of this process). Never
  /// takes ownership. `copy` says whose copy it is and who gave its address.
  virtual tleResult_t adoptImported(void *ptr, size_t bytes,
                                    const ImportedCopy &copy) = 0;

  /// A stream of this rank's device for collectives another engine runs
  /// for TLE (NCCL's all-gather); the emulator has none (nullptr).
  virtual tleResult_t createStream(void **out) {
    *out = nullptr;
    return tleSuccess;
  }
  virtual void destroyStream(void *stream) { (void)stream; }
  /// Whether all work queued on `stream` has finished.
  virtual tleResult_t streamDone(void *stream, bool &done) {
    (void)stream;
    done = true;
    return tleSuccess;
  }
};

/// The CPU backend: plain memory in one process, memory files (memfd)
/// passed over the bootstrap across processes.
std::unique_ptr<Backend> createCpuBackend(bool multiProcess);
/// What the CUDA backend allocates shared memory with, and whether the
/// rank's bootstrap can carry the file descriptors cuMem needs across
/// processes.
struct CudaBackendOptions {
  tleAllocType_t allocType = tleAllocCudaMalloc; ///< never tleAllocDefault
  bool fdsTravel = false;
};

/// The CUDA backend for `device` (nullptr with tleNotSupported when CUDA
/// support is not built in, or when options.allocType is tleAllocCuMem and
/// the driver or the bootstrap cannot serve it).
tleResult_t createCudaBackend(int device, bool multiProcess,
                              const CudaBackendOptions &options,
                              std::unique_ptr<Backend> &out);
/// tleShareableAlloc/Free on a GPU: device memory that the CUDA backend's
/// exportRegion accepts (tleNotSupported in a build without CUDA).
tleResult_t allocCudaShareable(int device, size_t bytes, void **out);
tleResult_t freeCudaShareable(int device, void *ptr);

} // namespace tle

#endif // TLE_HOST_BACKEND_H
