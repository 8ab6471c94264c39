//===- CudaBackendStub.cpp - createCudaBackend without CUDA -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiled instead of the real CUDA backend (runtime/host/cuda) when the
// library is built without CUDA, so that asking for tleBackendCuda (or for
// GPU memory from tleShareableAlloc) fails with a clear status instead of a
// link error.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Error.h"

namespace tle {

tleResult_t createCudaBackend(int device, bool multiProcess,
                              const CudaBackendOptions &options,
                              std::unique_ptr<Backend> &out) {
  (void)device;
  (void)multiProcess;
  (void)options;
  out.reset();
  return fail(tleNotSupported,
              "this libtle was built without CUDA (TLE_ENABLE_CUDA=OFF)");
}

tleResult_t allocCudaShareable(int device, size_t bytes, void **out) {
  (void)bytes;
  *out = nullptr;
  return fail(tleNotSupported,
              "GPU memory for device %d: this libtle was built without CUDA "
              "(TLE_ENABLE_CUDA=OFF)",
              device);
}

tleResult_t freeCudaShareable(int device, void *ptr) {
  (void)device;
  (void)ptr;
  return fail(tleNotSupported,
              "this libtle was built without CUDA (TLE_ENABLE_CUDA=OFF)");
}

} // namespace tle
