//===- CudaBackend.cpp - The CUDA memory backend --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements tle::Backend on one NVIDIA GPU. Memory peers map comes in two
// kinds (tleAllocType_t): cudaMalloc, shared by peer access (ranks of one
// process) or legacy CUDA IPC handles (one process per rank); or cuMem
// (VMM) physical memory mapped into a reserved range, shared by granting
// each peer device access (one process) or by exporting a POSIX file
// descriptor that travels over the bootstrap's socket (one process per
// rank). Every export blob names its kind, so a rank maps a peer's block
// whatever kind this rank allocates. Memory the user allocated with
// cudaMalloc is shared the legacy way too when tleMemRegister registers it
// (found with the driver's pointer attributes). The error record lives in
// host-mapped pinned memory, which the host can still read after a trap has
// killed the CUDA context. Multicast objects are never created (docs/gpu.md).
// Every method may run on any host thread, so each one selects the backend's
// device and restores the caller's current device on return.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "diag/Error.h"

#include "bootstrap/UniqueFd.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tle {
namespace {

/// Records a failed CUDA call as tleCudaError with the call and CUDA's text.
tleResult_t cudaFail(cudaError_t err, int device, const char *call) {
  // Clear the per-thread "last error" so that a later unrelated
  // cudaGetLastError() does not report this failure a second time. Sticky
  // errors (a trap) stay regardless.
  (void)cudaGetLastError();
  return fail(tleCudaError, "%s on device %d failed: %s (%s)", call, device,
              cudaGetErrorString(err), cudaGetErrorName(err));
}

/// The driver API functions of the cuMem path. They come from the runtime
/// (cudaGetDriverEntryPointByVersion), not from linking libcuda, so that
/// libtle and every program linking it build where only the toolkit's stub
/// exists (the CPU machines) and load where the driver is.
#define TLE_DRIVER_FUNCTIONS(X)                                                \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetAttribute)                                                      \
  X(cuMemGetAllocationGranularity)                                             \
  X(cuMemCreate)                                                               \
  X(cuMemRelease)                                                              \
  X(cuMemAddressReserve)                                                       \
  X(cuMemAddressFree)                                                          \
  X(cuMemMap)                                                                  \
  X(cuMemUnmap)                                                                \
  X(cuMemSetAccess)                                                            \
  X(cuMemGetAccess)                                                            \
  X(cuMemExportToShareableHandle)                                              \
  X(cuMemImportFromShareableHandle)                                            \
  X(cuMemGetAllocationPropertiesFromHandle)                                    \
  X(cuPointerGetAttributes)                                                    \
  X(cuMemGetAddressRange)

struct Driver {
#define TLE_DRIVER_POINTER(name) decltype(&::name) name = nullptr;
  TLE_DRIVER_FUNCTIONS(TLE_DRIVER_POINTER)
#undef TLE_DRIVER_POINTER
  /// The first function the driver did not provide ("" when all are here).
  std::string missing;
};

/// The driver's functions, looked up once. The ABI asked for is CUDA 12.0's
/// (every function above has kept its signature since 11.x).
const Driver &drv() {
  static const Driver driver = [] {
    Driver d;
#define TLE_DRIVER_LOOKUP(name)                                                \
  {                                                                            \
    void *fn = nullptr;                                                        \
    cudaDriverEntryPointQueryResult found;                                     \
    if (cudaGetDriverEntryPointByVersion(#name, &fn, 12000, cudaEnableDefault, \
                                         &found) != cudaSuccess ||             \
        found != cudaDriverEntryPointSuccess || !fn) {                         \
      (void)cudaGetLastError();                                                \
      if (d.missing.empty())                                                   \
        d.missing = #name;                                                     \
    }                                                                          \
    d.name = reinterpret_cast<decltype(d.name)>(fn);                           \
  }
    TLE_DRIVER_FUNCTIONS(TLE_DRIVER_LOOKUP)
#undef TLE_DRIVER_LOOKUP
    return d;
  }();
  return driver;
}

/// The same for a failed driver API call.
tleResult_t cuFail(CUresult err, int device, const char *call) {
  const char *name = nullptr, *text = nullptr;
  if (drv().cuGetErrorName)
    drv().cuGetErrorName(err, &name);
  if (drv().cuGetErrorString)
    drv().cuGetErrorString(err, &text);
  return fail(tleCudaError, "%s on device %d failed: %s (%s)", call, device,
              text ? text : "unknown error", name ? name : "?");
}

#define TLE_CUDA_TRY(call)                                                     \
  do {                                                                         \
    cudaError_t tleErr_ = (call);                                              \
    if (tleErr_ != cudaSuccess)                                                \
      return cudaFail(tleErr_, device_, #call);                                \
  } while (0)

#define TLE_CU_TRY(call)                                                       \
  do {                                                                         \
    CUresult tleErr_ = (call);                                                 \
    if (tleErr_ != CUDA_SUCCESS)                                               \
      return cuFail(tleErr_, device_, #call);                                  \
  } while (0)

/// The first byte of an export blob: which kind of memory it describes.
enum BlobKind : char {
  kBlobIpc = 'I', ///< + cudaIpcMemHandle_t (legacy CUDA IPC)
  kBlobVmm = 'V', ///< + uint64 mapped bytes; the descriptor travels beside it
};

/// A cuMem block this backend allocated (SharedAlloc::impl).
struct VmmBlock {
  CUmemGenericAllocationHandle handle = 0;
  size_t mapped = 0; ///< bytes reserved and mapped: a granularity multiple
  UniqueFd fd;       ///< the export, until every peer has mapped it
};

CUmemAccessDesc readWriteFor(int device) {
  CUmemAccessDesc desc = {};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = device;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return desc;
}

/// Makes `device` current for the scope and restores the caller's device:
/// the host runtime calls backends from user threads (the last rank to drop
/// a peer's buffer frees it through the owner's backend), and silently moving
/// a user thread to another GPU would redirect its next launches.
class DeviceScope {
public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&saved_) != cudaSuccess) {
      saved_ = -1;
      (void)cudaGetLastError();
    }
    // Also when `device` is already current: since CUDA 12 cudaSetDevice
    // makes the device's primary context current on this thread, which the
    // driver API calls of the cuMem path need (a thread that never called
    // CUDA has device 0 "current" but no context).
    status_ = cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (saved_ >= 0)
      (void)cudaSetDevice(saved_);
  }
  cudaError_t status() const { return status_; }

private:
  int saved_ = -1;
  cudaError_t status_ = cudaSuccess;
};

class CudaBackend final : public Backend {
public:
  CudaBackend(int device, bool multiProcess, bool cuMem)
      : device_(device), multiProcess_(multiProcess), cuMem_(cuMem) {}

  ~CudaBackend() override {
    if (stream_) {
      DeviceScope scope(device_);
      (void)cudaStreamDestroy(stream_);
    }
  }

  tleBackend_t kind() const override { return tleBackendCuda; }
  int device() const override { return device_; }
  const char *sharedMemoryKind() const override {
    return cuMem_ ? "cuMem" : "cudaMalloc";
  }

  tleResult_t allocShared(size_t bytes, SharedAlloc &out) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    if (cuMem_)
      return allocVmm(bytes, out);
    void *ptr = nullptr;
    TLE_CUDA_TRY(cudaMalloc(&ptr, bytes));
    if (tleResult_t r = zeroFill(ptr, bytes); r != tleSuccess) {
      (void)cudaFree(ptr);
      return r;
    }
    std::string blob;
    if (multiProcess_) {
      // Legacy IPC handle of the whole allocation. The peer maps it with
      // cudaIpcOpenMemHandle; the allocation must stay alive in this process
      // until every peer has closed it (the host runtime's free protocol).
      cudaIpcMemHandle_t handle;
      cudaError_t err = cudaIpcGetMemHandle(&handle, ptr);
      if (err != cudaSuccess) {
        (void)cudaFree(ptr);
        return cudaFail(err, device_, "cudaIpcGetMemHandle");
      }
      blob.push_back(kBlobIpc);
      blob.append(reinterpret_cast<const char *>(&handle), sizeof(handle));
    }
    out.ptr = ptr;
    out.bytes = bytes;
    out.exportBlob = std::move(blob);
    out.impl = nullptr;
    return tleSuccess;
  }

  tleResult_t freeShared(SharedAlloc &alloc) override {
    if (!alloc.ptr)
      return tleSuccess;
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    if (auto *block = static_cast<VmmBlock *>(alloc.impl)) {
      // Peers' mappings hold their own references to the physical memory,
      // so the owner may release its part at any time.
      tleResult_t r = unmapVmm(alloc.ptr, block->mapped);
      CUresult err = drv().cuMemRelease(block->handle);
      delete block;
      alloc.impl = nullptr;
      alloc.exportFd = -1;
      alloc.ptr = nullptr;
      alloc.exportBlob.clear();
      if (r == tleSuccess && err != CUDA_SUCCESS)
        r = cuFail(err, device_, "cuMemRelease");
      return r;
    }
    TLE_CUDA_TRY(cudaFree(alloc.ptr));
    alloc.ptr = nullptr;
    alloc.exportBlob.clear();
    return tleSuccess;
  }

  tleResult_t releaseExport(SharedAlloc &alloc) override {
    if (auto *block = static_cast<VmmBlock *>(alloc.impl))
      block->fd.reset();
    alloc.exportFd = -1;
    return tleSuccess;
  }

  tleResult_t importPeer(const SharedAlloc &peer, bool sameProcess,
                         void **mapped) override {
    if (!mapped)
      return fail(tleInvalidArgument, "importPeer: null output pointer");
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    if (sameProcess)
      return importSameProcess(peer, mapped);
    const std::string &blob = peer.exportBlob;
    if (!blob.empty() && blob[0] == kBlobVmm)
      return importVmm(peer, mapped);

    cudaIpcMemHandle_t handle;
    if (blob.size() != 1 + sizeof(handle) || blob[0] != kBlobIpc)
      return fail(tleInvalidArgument,
                  "importPeer: an export blob of %zu bytes that is neither a "
                  "CUDA IPC handle nor a cuMem export (was the peer created "
                  "with the CUDA backend in another process?)",
                  blob.size());
    std::memcpy(&handle, blob.data() + 1, sizeof(handle));
    void *ptr = nullptr;
    // LazyEnablePeerAccess: the driver enables peer access to the owning
    // device on first use, which is what every mapping needs here.
    TLE_CUDA_TRY(
        cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess));
    *mapped = ptr;
    return tleSuccess;
  }

  tleResult_t closePeer(void *mapped, bool sameProcess) override {
    // Within one process the peer's own pointer was handed out; peer access
    // stays enabled for the other buffers that rely on it.
    if (sameProcess || !mapped)
      return tleSuccess;
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    size_t vmmBytes = 0;
    {
      std::lock_guard<std::mutex> lock(mappingsMutex_);
      auto it = vmmMappings_.find(mapped);
      if (it != vmmMappings_.end()) {
        vmmBytes = it->second;
        vmmMappings_.erase(it);
      }
    }
    if (vmmBytes)
      return unmapVmm(mapped, vmmBytes);
    TLE_CUDA_TRY(cudaIpcCloseMemHandle(mapped));
    return tleSuccess;
  }

  tleResult_t exportRegion(void *ptr, size_t bytes, bool sameProcess,
                           SharedAlloc &out) override;
  tleResult_t unexportRegion(SharedAlloc &region) override {
    region.ptr = nullptr;
    region.exportBlob.clear();
    return tleSuccess;
  }
  tleResult_t importRegion(const SharedAlloc &peer, void **mapped) override;
  tleResult_t closeRegion(void *mapped) override;

  tleResult_t allocLocal(size_t bytes, void **out) override {
    if (!out)
      return fail(tleInvalidArgument, "allocLocal: null output pointer");
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    void *ptr = nullptr;
    TLE_CUDA_TRY(cudaMalloc(&ptr, bytes));
    if (tleResult_t r = zeroFill(ptr, bytes); r != tleSuccess) {
      (void)cudaFree(ptr);
      return r;
    }
    *out = ptr;
    return tleSuccess;
  }

  tleResult_t freeLocal(void *ptr) override {
    if (!ptr)
      return tleSuccess;
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    TLE_CUDA_TRY(cudaFree(ptr));
    return tleSuccess;
  }

  tleResult_t allocHostVisible(size_t bytes, void **host, void **dev) override {
    if (!host || !dev)
      return fail(tleInvalidArgument, "allocHostVisible: null output pointer");
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    // Pinned, mapped host memory: the device writes the error record with
    // system-scope atomics over PCIe/C2C, and the host reads it with plain
    // loads even after a trap made every CUDA call on this context fail.
    // Portable: valid in every context of the process, not only this one.
    void *h = nullptr;
    TLE_CUDA_TRY(
        cudaHostAlloc(&h, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(h, 0, bytes);
    void *d = nullptr;
    cudaError_t err = cudaHostGetDevicePointer(&d, h, 0);
    if (err != cudaSuccess) {
      (void)cudaFreeHost(h);
      return cudaFail(err, device_, "cudaHostGetDevicePointer");
    }
    *host = h;
    *dev = d;
    return tleSuccess;
  }

  tleResult_t freeHostVisible(void *host) override {
    if (!host)
      return tleSuccess;
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    TLE_CUDA_TRY(cudaFreeHost(host));
    return tleSuccess;
  }

  tleResult_t copyToLocal(void *dst, const void *src, size_t bytes) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    // Complete before this returns: the DevComm before the host hands its
    // pointer to a kernel, a staged blob before NCCL's all-gather reads it
    // from another stream. cudaMemcpy from pageable memory may return
    // before its DMA has landed, ordered only before later work of the
    // legacy stream; a copy on the private stream, waited for, has landed.
    cudaStream_t s;
    if (tleResult_t r = privateStream(s))
      return r;
    TLE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
    TLE_CUDA_TRY(cudaStreamSynchronize(s));
    return tleSuccess;
  }
  tleResult_t copyFromLocal(void *dst, const void *src, size_t bytes) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    TLE_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return tleSuccess;
  }

  tleResult_t adoptImported(void *ptr, size_t bytes,
                            const ImportedCopy &copy) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    // The first and the last byte: a range that runs past its allocation
    // into unmapped addresses is caught without asking how the user
    // allocated it (cudaMalloc, cuMem, an IPC or cuMem import all answer).
    int owner = -1;
    const char *where[2] = {"first", "last"};
    for (int end = 0; end < 2; ++end) {
      void *at = static_cast<char *>(ptr) + (end ? bytes - 1 : 0);
      cudaPointerAttributes attr;
      cudaError_t err = cudaPointerGetAttributes(&attr, at);
      if (err != cudaSuccess)
        return cudaFail(err, device_, "cudaPointerGetAttributes");
      if (attr.type != cudaMemoryTypeDevice &&
          attr.type != cudaMemoryTypeManaged)
        return fail(tleInvalidArgument,
                    "the %s byte of %zu at %p is not device memory mapped "
                    "in this process",
                    where[end], bytes, ptr);
      if (end == 0)
        owner = attr.device;
      else if (attr.device != owner)
        return fail(tleInvalidArgument,
                    "%zu bytes at %p span memory of devices %d and %d", bytes,
                    ptr, owner, attr.device);
    }
    if (copy.source == ImportedCopy::Own && owner != device_)
      return fail(tleInvalidArgument,
                  "this rank's copy at %p is memory of device %d, but the "
                  "rank runs on device %d",
                  ptr, owner, device_);
    // An address a peer reported is right here only if it names memory of
    // that peer's device (the same address in every process).
    if (copy.source == ImportedCopy::Peer && owner != copy.peerDevice)
      return fail(tleInvalidArgument,
                  "the address %p the peer reported for its copy is memory "
                  "of device %d in this process, not of the peer's device "
                  "%d: pass peerPtrs, the peers' copies as this process maps "
                  "them",
                  ptr, owner, copy.peerDevice);
    if (owner == device_ || owner < 0)
      return tleSuccess;
    // cuMem memory: access is what cuMemSetAccess granted; say so rather
    // than let a kernel fault. (cuMemGetAccess fails on other memory.)
    CUmemLocation here = readWriteFor(device_).location;
    unsigned long long flags = 0;
    if (drv().cuMemGetAccess &&
        drv().cuMemGetAccess(&flags, &here,
                             reinterpret_cast<CUdeviceptr>(ptr)) ==
            CUDA_SUCCESS) {
      if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return fail(tleInvalidArgument,
                    "device %d has no read-write access to the cuMem "
                    "mapping at %p (device %d's memory): grant it with "
                    "cuMemSetAccess",
                    device_, ptr, owner);
      return tleSuccess;
    }
    // cudaMalloc memory of another GPU of this process: peer access.
    return enablePeerAccess(owner);
  }

  tleResult_t createStream(void **out) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    cudaStream_t s;
    TLE_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *out = s;
    return tleSuccess;
  }
  void destroyStream(void *stream) override {
    DeviceScope scope(device_);
    // Work still queued (an all-gather a peer never joined) keeps its
    // resources until it ends; destroying does not wait for it.
    (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  }
  tleResult_t streamDone(void *stream, bool &done) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(stream));
    done = err == cudaSuccess;
    if (err == cudaSuccess)
      return tleSuccess;
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError(); // not an error to leave for the caller
      return tleSuccess;
    }
    return cudaFail(err, device_, "cudaStreamQuery");
  }

private:
  /// cuMem memory on this device, zero-filled: reserved, mapped and made
  /// accessible to this device; across processes also exported as a POSIX
  /// file descriptor (the blob carries the mapped size).
  tleResult_t allocVmm(size_t bytes, SharedAlloc &out) {
    CUmemAllocationProp prop = vmmProp();
    size_t granularity = 0;
    TLE_CU_TRY(drv().cuMemGetAllocationGranularity(
        &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t mapped = (bytes + granularity - 1) / granularity * granularity;
    if (mapped < bytes)
      return fail(tleInvalidArgument, "cannot allocate %zu bytes", bytes);
    auto block = std::make_unique<VmmBlock>();
    block->mapped = mapped;
    TLE_CU_TRY(drv().cuMemCreate(&block->handle, mapped, &prop, 0));
    void *ptr = nullptr;
    tleResult_t r = mapVmm(block->handle, mapped, granularity, &ptr);
    if (r == tleSuccess)
      r = zeroFill(ptr, mapped);
    std::string blob;
    if (r == tleSuccess && multiProcess_) {
      int fd = -1;
      CUresult err = drv().cuMemExportToShareableHandle(
          &fd, block->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
      if (err != CUDA_SUCCESS)
        r = cuFail(err, device_, "cuMemExportToShareableHandle");
      block->fd.reset(fd);
      uint64_t size = mapped;
      blob.push_back(kBlobVmm);
      blob.append(reinterpret_cast<const char *>(&size), sizeof(size));
    }
    if (r != tleSuccess) {
      if (ptr)
        (void)unmapVmm(ptr, mapped);
      (void)drv().cuMemRelease(block->handle);
      return r;
    }
    out.ptr = ptr;
    out.bytes = bytes;
    out.exportBlob = std::move(blob);
    out.exportFd = block->fd.get();
    out.impl = block.release();
    return tleSuccess;
  }

  /// Maps a peer's cuMem export: the descriptor becomes a handle, mapped
  /// into a range of our own and made accessible to this device. The
  /// handle is released at once: the mapping keeps the memory alive.
  tleResult_t importVmm(const SharedAlloc &peer, void **mapped) {
    uint64_t size = 0;
    if (peer.exportBlob.size() != 1 + sizeof(size))
      return fail(tleInvalidArgument, "importPeer: malformed cuMem export");
    std::memcpy(&size, peer.exportBlob.data() + 1, sizeof(size));
    if (peer.exportFd < 0)
      return fail(tleInternalError,
                  "importPeer: a peer's cuMem export came without its file "
                  "descriptor");
    if (size < peer.bytes)
      return fail(tleInternalError,
                  "importPeer: a peer exported %llu bytes for a %zu-byte "
                  "block",
                  static_cast<unsigned long long>(size), peer.bytes);
    CUmemGenericAllocationHandle handle;
    TLE_CU_TRY(drv().cuMemImportFromShareableHandle(
        &handle, reinterpret_cast<void *>(static_cast<intptr_t>(peer.exportFd)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CUmemAllocationProp prop = {};
    size_t granularity = 0;
    CUresult err = drv().cuMemGetAllocationPropertiesFromHandle(&prop, handle);
    if (err == CUDA_SUCCESS)
      err = drv().cuMemGetAllocationGranularity(
          &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    tleResult_t r = err == CUDA_SUCCESS
                        ? mapVmm(handle, size, granularity, mapped)
                        : cuFail(err, device_, "cuMemGetAllocationGranularity");
    CUresult released = drv().cuMemRelease(handle);
    if (r != tleSuccess)
      return r;
    if (released != CUDA_SUCCESS) {
      (void)unmapVmm(*mapped, size);
      return cuFail(released, device_, "cuMemRelease");
    }
    std::lock_guard<std::mutex> lock(mappingsMutex_);
    vmmMappings_[*mapped] = size;
    return tleSuccess;
  }

  CUmemAllocationProp vmmProp() const {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device_;
    prop.requestedHandleTypes = multiProcess_
                                    ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                    : CU_MEM_HANDLE_TYPE_NONE;
    return prop;
  }

  /// Reserves `bytes` of address space, maps `handle` there and grants this
  /// device read-write access; undoes what it did on failure.
  tleResult_t mapVmm(CUmemGenericAllocationHandle handle, size_t bytes,
                     size_t alignment, void **out) {
    CUdeviceptr va = 0;
    TLE_CU_TRY(drv().cuMemAddressReserve(&va, bytes, alignment, 0, 0));
    CUresult err = drv().cuMemMap(va, bytes, 0, handle, 0);
    if (err != CUDA_SUCCESS) {
      (void)drv().cuMemAddressFree(va, bytes);
      return cuFail(err, device_, "cuMemMap");
    }
    CUmemAccessDesc access = readWriteFor(device_);
    err = drv().cuMemSetAccess(va, bytes, &access, 1);
    if (err != CUDA_SUCCESS) {
      (void)drv().cuMemUnmap(va, bytes);
      (void)drv().cuMemAddressFree(va, bytes);
      return cuFail(err, device_, "cuMemSetAccess");
    }
    *out = reinterpret_cast<void *>(va);
    return tleSuccess;
  }

  tleResult_t unmapVmm(void *ptr, size_t bytes) {
    CUdeviceptr va = reinterpret_cast<CUdeviceptr>(ptr);
    TLE_CU_TRY(drv().cuMemUnmap(va, bytes));
    TLE_CU_TRY(drv().cuMemAddressFree(va, bytes));
    return tleSuccess;
  }

  tleResult_t enablePeerAccess(int owner) {
    int can = 0;
    TLE_CUDA_TRY(cudaDeviceCanAccessPeer(&can, device_, owner));
    if (!can)
      return fail(tleCudaError,
                  "device %d cannot access device %d's memory "
                  "(cudaDeviceCanAccessPeer is 0: no NVLink or PCIe P2P "
                  "path between them); TLE needs peer access",
                  device_, owner);
    cudaError_t err = cudaDeviceEnablePeerAccess(owner, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError(); // not sticky; clear it for the caller
    else if (err != cudaSuccess)
      return cudaFail(err, device_, "cudaDeviceEnablePeerAccess");
    return tleSuccess;
  }

  /// Zero `bytes` at `ptr` and wait for it. Peers on other GPUs write into
  /// this memory from their own streams, which nothing orders after a memset
  /// on ours, so the zeros must have landed before the address is shared.
  /// A private non-blocking stream keeps this from waiting on (or being
  /// ordered behind) kernels the user is running on the device.
  tleResult_t zeroFill(void *ptr, size_t bytes) {
    cudaStream_t s;
    if (tleResult_t r = privateStream(s))
      return r;
    TLE_CUDA_TRY(cudaMemsetAsync(ptr, 0, bytes, s));
    TLE_CUDA_TRY(cudaStreamSynchronize(s));
    return tleSuccess;
  }

  /// The backend's own stream, created on first use.
  tleResult_t privateStream(cudaStream_t &out) {
    std::lock_guard<std::mutex> lock(streamMutex_);
    if (!stream_)
      TLE_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    out = stream_;
    return tleSuccess;
  }

  tleResult_t importSameProcess(const SharedAlloc &peer, void **mapped) {
    if (!peer.ptr)
      return fail(tleInvalidArgument, "importPeer: null peer pointer");
    cudaPointerAttributes attr;
    TLE_CUDA_TRY(cudaPointerGetAttributes(&attr, peer.ptr));
    if (attr.type != cudaMemoryTypeDevice)
      return fail(tleInvalidArgument,
                  "importPeer: the peer's buffer is not device memory");
    int owner = attr.device;
    if (owner != device_) {
      if (auto *block = static_cast<const VmmBlock *>(peer.impl)) {
        // cuMem memory is reached through the access its mapping grants,
        // per device, not through peer access: grant it to this device.
        // Both backends live in this process, so the owner's VmmBlock is
        // ours to read.
        CUmemAccessDesc access = readWriteFor(device_);
        TLE_CU_TRY(drv().cuMemSetAccess(reinterpret_cast<CUdeviceptr>(peer.ptr),
                                        block->mapped, &access, 1));
      } else if (tleResult_t r = enablePeerAccess(owner)) {
        return r;
      }
    }
    *mapped = peer.ptr;
    return tleSuccess;
  }

  int device_;
  bool multiProcess_;
  bool cuMem_;
  std::mutex mappingsMutex_;
  /// Peers' cuMem blocks mapped here, and their mapped sizes.
  std::unordered_map<void *, size_t> vmmMappings_;
  std::mutex streamMutex_;
  cudaStream_t stream_ = nullptr;

  /// Peers' allocations opened for registrations, by IPC handle: one
  /// registration or several (tensors of one allocation, a tensor
  /// registered twice) share one cudaIpcOpenMemHandle, closed with the
  /// last. Plus the handle of each address importRegion handed out.
  struct Opened {
    void *base;
    int refs;
  };
  std::mutex regionMutex_;
  std::map<std::string, Opened> opened_;
  std::multimap<void *, std::string> regionHandles_;
};

// Registration (tleMemRegister). The range must lie in one cudaMalloc
// allocation of this rank's GPU: legacy IPC exports whole allocations
// (cudaIpcGetMemHandle of the allocation's base; the blob adds the range's
// offset), and peer access within one process covers cudaMalloc memory but
// not cuMem/VMM or pool memory, which need per-device access rights.

tleResult_t CudaBackend::exportRegion(void *ptr, size_t bytes, bool sameProcess,
                                      SharedAlloc &out) {
  DeviceScope scope(device_);
  TLE_CUDA_TRY(scope.status());
  if (!drv().cuPointerGetAttributes || !drv().cuMemGetAddressRange)
    return fail(tleNotSupported,
                "the driver does not provide cuPointerGetAttributes and "
                "cuMemGetAddressRange, which registration needs");
  unsigned int type = 0;
  int ordinal = -1, ipcCapable = 0;
  CUpointer_attribute attrs[] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE};
  void *values[] = {&type, &ordinal, &ipcCapable};
  // Not a CUDA pointer is no error here: the attributes stay zero.
  TLE_CU_TRY(drv().cuPointerGetAttributes(3, attrs, values,
                                          reinterpret_cast<CUdeviceptr>(ptr)));
  if (type != CU_MEMORYTYPE_DEVICE)
    return fail(tleInvalidArgument,
                "%p is not device memory (host memory, or not from CUDA): "
                "register memory of this rank's GPU %d",
                ptr, device_);
  if (ordinal != device_)
    return fail(tleInvalidArgument,
                "%p is memory of GPU %d, but this rank runs on GPU %d", ptr,
                ordinal, device_);
  if (!ipcCapable)
    return fail(tleInvalidArgument,
                "%p is in an allocation that legacy CUDA IPC cannot share: "
                "virtual memory (cuMemCreate; PyTorch allocates so with "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) or a "
                "cudaMallocAsync pool. Allocate the buffer with cudaMalloc: "
                "in a torch.cuda.MemPool over tleShareableAlloc "
                "(tle.flagtree.get_mem_pool()), or with PyTorch's default "
                "allocator without expandable_segments",
                ptr);
  CUdeviceptr base = 0;
  size_t size = 0;
  TLE_CU_TRY(drv().cuMemGetAddressRange(&base, &size,
                                        reinterpret_cast<CUdeviceptr>(ptr)));
  size_t offset = reinterpret_cast<uintptr_t>(ptr) - base;
  if (bytes > size - offset)
    return fail(tleInvalidArgument,
                "%zu bytes at %p run past the end of their allocation (%zu "
                "bytes at 0x%llx)",
                bytes, ptr, size, static_cast<unsigned long long>(base));
  out.ptr = ptr;
  out.bytes = bytes;
  if (sameProcess)
    return tleSuccess;
  cudaIpcMemHandle_t handle;
  TLE_CUDA_TRY(cudaIpcGetMemHandle(&handle, reinterpret_cast<void *>(base)));
  uint64_t off = offset;
  out.exportBlob.assign(reinterpret_cast<const char *>(&handle),
                        sizeof(handle));
  out.exportBlob.append(reinterpret_cast<const char *>(&off), sizeof(off));
  return tleSuccess;
}

tleResult_t CudaBackend::importRegion(const SharedAlloc &peer, void **mapped) {
  cudaIpcMemHandle_t handle;
  uint64_t offset;
  if (peer.exportBlob.size() != sizeof(handle) + sizeof(offset))
    return fail(tleInvalidArgument,
                "importRegion: a registration of %zu bytes, expected %zu "
                "(was the peer created with the CUDA backend?)",
                peer.exportBlob.size(), sizeof(handle) + sizeof(offset));
  std::string key = peer.exportBlob.substr(0, sizeof(handle));
  memcpy(&handle, key.data(), sizeof(handle));
  memcpy(&offset, peer.exportBlob.data() + sizeof(handle), sizeof(offset));
  DeviceScope scope(device_);
  TLE_CUDA_TRY(scope.status());
  std::lock_guard<std::mutex> lock(regionMutex_);
  auto it = opened_.find(key);
  if (it == opened_.end()) {
    void *base = nullptr;
    TLE_CUDA_TRY(
        cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess));
    it = opened_.emplace(key, Opened{base, 0}).first;
  }
  ++it->second.refs;
  void *p = static_cast<char *>(it->second.base) + offset;
  regionHandles_.emplace(p, key);
  *mapped = p;
  return tleSuccess;
}

tleResult_t CudaBackend::closeRegion(void *mapped) {
  if (!mapped)
    return tleSuccess;
  void *base = nullptr;
  {
    std::lock_guard<std::mutex> lock(regionMutex_);
    auto at = regionHandles_.find(mapped);
    if (at == regionHandles_.end())
      return fail(tleInternalError, "closeRegion of an unknown mapping");
    auto it = opened_.find(at->second);
    regionHandles_.erase(at);
    if (it == opened_.end() || --it->second.refs > 0)
      return tleSuccess;
    base = it->second.base;
    opened_.erase(it);
  }
  DeviceScope scope(device_);
  TLE_CUDA_TRY(scope.status());
  TLE_CUDA_TRY(cudaIpcCloseMemHandle(base));
  return tleSuccess;
}

#undef TLE_CUDA_TRY
#undef TLE_CU_TRY

/// Whether cuMem can serve `device` in this configuration; `why` says why
/// not.
bool cuMemUsable(int device, bool multiProcess,
                 const CudaBackendOptions &options, std::string &why) {
  if (!drv().missing.empty()) {
    why = "the driver does not provide " + drv().missing;
    return false;
  }
  CUdevice dev;
  int vmm = 0, posixFd = 0;
  if (drv().cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
      drv().cuDeviceGetAttribute(
          &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) !=
          CUDA_SUCCESS ||
      !vmm) {
    why = "the driver does not support virtual memory management on "
          "device " +
          std::to_string(device);
    return false;
  }
  if (!multiProcess)
    return true;
  if (drv().cuDeviceGetAttribute(
          &posixFd,
          CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
          dev) != CUDA_SUCCESS ||
      !posixFd) {
    why = "device " + std::to_string(device) +
          " cannot export cuMem memory as a POSIX file descriptor";
    return false;
  }
  if (!options.fdsTravel) {
    why = "this communicator's bootstrap cannot carry the file descriptors "
          "of cuMem exports between processes (NCCL's collectives carry "
          "bytes only)";
    return false;
  }
  return true;
}

} // namespace

tleResult_t createCudaBackend(int device, bool multiProcess,
                              const CudaBackendOptions &options,
                              std::unique_ptr<Backend> &out) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return cudaFail(err, device, "cudaGetDeviceCount");
  if (device < 0 || device >= count)
    return fail(tleInvalidArgument,
                "CUDA device %d does not exist (%d visible)", device, count);
  {
    // Create the primary context now, so that a broken device or driver is
    // reported at communicator creation rather than at the first allocation.
    DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
      return cudaFail(scope.status(), device, "cudaSetDevice");
    err = cudaFree(nullptr);
    if (err != cudaSuccess)
      return cudaFail(err, device, "cudaFree(nullptr) (context creation)");
  }
  bool cuMem = false;
  if (options.allocType != tleAllocCudaMalloc) {
    std::string why;
    cuMem = cuMemUsable(device, multiProcess, options, why);
    if (!cuMem && options.allocType == tleAllocCuMem)
      return fail(tleNotSupported, "cuMem memory was asked for, but %s",
                  why.c_str());
  }
  out = std::make_unique<CudaBackend>(device, multiProcess, cuMem);
  return tleSuccess;
}

tleResult_t allocCudaShareable(int device, size_t bytes, void **out) {
  *out = nullptr;
  DeviceScope scope(device);
  if (scope.status() != cudaSuccess)
    return cudaFail(scope.status(), device, "cudaSetDevice");
  // Plain cudaMalloc: the memory legacy IPC exports (exportRegion).
  if (cudaError_t err = cudaMalloc(out, bytes); err != cudaSuccess)
    return cudaFail(err, device, "cudaMalloc");
  return tleSuccess;
}

tleResult_t freeCudaShareable(int device, void *ptr) {
  DeviceScope scope(device);
  if (scope.status() != cudaSuccess)
    return cudaFail(scope.status(), device, "cudaSetDevice");
  if (cudaError_t err = cudaFree(ptr); err != cudaSuccess)
    return cudaFail(err, device, "cudaFree");
  return tleSuccess;
}

} // namespace tle
