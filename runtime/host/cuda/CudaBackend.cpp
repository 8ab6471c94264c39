//===- CudaBackend.cpp - The CUDA memory backend --------------------------===//
//
// Implements tle::Backend on one NVIDIA GPU with the CUDA runtime API: device
// memory from cudaMalloc shared with peers by peer access (ranks of one
// process) or by legacy CUDA IPC handles (one process per rank), and the
// error record in host-mapped pinned memory, which the host can still read
// after a trap has killed the CUDA context. Multicast objects are never
// created (docs/gpu.md says why and why IPC rather than cuMem handles).
// Every method may run on any host thread, so each one selects the backend's
// device and restores the caller's current device on return.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Error.h"

#include <cuda_runtime.h>

#include <cstring>
#include <mutex>

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

#define TLE_CUDA_TRY(call)                                                     \
  do {                                                                         \
    cudaError_t tleErr_ = (call);                                              \
    if (tleErr_ != cudaSuccess)                                                \
      return cudaFail(tleErr_, device_, #call);                                \
  } while (0)

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
    if (saved_ != device)
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
  CudaBackend(int device, bool multiProcess)
      : device_(device), multiProcess_(multiProcess) {}

  ~CudaBackend() override {
    if (stream_) {
      DeviceScope scope(device_);
      (void)cudaStreamDestroy(stream_);
    }
  }

  tleBackend_t kind() const override { return tleBackendCuda; }
  int device() const override { return device_; }

  tleResult_t allocShared(size_t bytes, SharedAlloc &out) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
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
      blob.assign(reinterpret_cast<const char *>(&handle), sizeof(handle));
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
    TLE_CUDA_TRY(cudaFree(alloc.ptr));
    alloc.ptr = nullptr;
    alloc.exportBlob.clear();
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

    cudaIpcMemHandle_t handle;
    if (peer.exportBlob.size() != sizeof(handle))
      return fail(tleInvalidArgument,
                  "importPeer: CUDA IPC handle of %zu bytes, expected %zu "
                  "(was the peer created with the CUDA backend in another "
                  "process?)",
                  peer.exportBlob.size(), sizeof(handle));
    std::memcpy(&handle, peer.exportBlob.data(), sizeof(handle));
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
    TLE_CUDA_TRY(cudaIpcCloseMemHandle(mapped));
    return tleSuccess;
  }

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
    // Synchronous with respect to the host: the DevComm must be complete
    // before the host hands its pointer to a kernel.
    TLE_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    return tleSuccess;
  }
  tleResult_t copyFromLocal(void *dst, const void *src,
                            size_t bytes) override {
    DeviceScope scope(device_);
    TLE_CUDA_TRY(scope.status());
    TLE_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return tleSuccess;
  }

private:
  /// Zero `bytes` at `ptr` and wait for it. Peers on other GPUs write into
  /// this memory from their own streams, which nothing orders after a memset
  /// on ours, so the zeros must have landed before the address is shared.
  /// A private non-blocking stream keeps this from waiting on (or being
  /// ordered behind) kernels the user is running on the device.
  tleResult_t zeroFill(void *ptr, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(streamMutex_);
      if (!stream_)
        TLE_CUDA_TRY(
            cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    }
    TLE_CUDA_TRY(cudaMemsetAsync(ptr, 0, bytes, stream_));
    TLE_CUDA_TRY(cudaStreamSynchronize(stream_));
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
    }
    *mapped = peer.ptr;
    return tleSuccess;
  }

  int device_;
  bool multiProcess_;
  std::mutex streamMutex_;
  cudaStream_t stream_ = nullptr;
};

#undef TLE_CUDA_TRY

} // namespace

tleResult_t createCudaBackend(int device, bool multiProcess,
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
  out = std::make_unique<CudaBackend>(device, multiProcess);
  return tleSuccess;
}

} // namespace tle
