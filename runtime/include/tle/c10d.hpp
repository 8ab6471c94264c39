//===- c10d.hpp - A TLE communicator from a PyTorch process group ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// For C++ code that already builds against PyTorch (a torch extension, a C++
// trainer): the NCCL communicator of a c10d process group becomes a TLE
// communicator through tleCommInitFromNccl, so TLE's exchanges ride on the
// group's NCCL and no second bootstrap is needed. Header-only on purpose:
// libtle knows nothing of PyTorch, and this file compiles only where
// PyTorch's headers are (it is not installed into libtle's include path
// requirements). The NCCL functions are the ones PyTorch linked, found in
// the process by libtle. See docs/runtime.md, "Communicators from NCCL and
// PyTorch".
//
//===----------------------------------------------------------------------===//

#ifndef TLE_C10D_HPP
#define TLE_C10D_HPP

#include "tle/tle.hpp"

// PyTorch declares ProcessGroupNCCL only under USE_C10D_NCCL, which its own
// build defines and extensions do not; this header needs an NCCL-enabled
// PyTorch anyway (its nccl.h must be on the include path, too).
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif

#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace tle {

/// This rank's TLE communicator over `group`'s NCCL communicator on CUDA
/// device `device`. Collective over the group. The group's communicator
/// must exist (PyTorch creates it at init_process_group with a device_id,
/// else at the group's first collective on the device: run one first).
/// `config` NULL: the defaults with the CUDA backend.
inline Comm commFromProcessGroup(c10d::ProcessGroup &group, int device,
                                 const tleConfig_t *config = nullptr) {
  c10::cuda::CUDAGuard onDevice(static_cast<c10::DeviceIndex>(device));
  auto backend = group.getBackend(c10::DeviceType::CUDA);
  auto *nccl = dynamic_cast<c10d::ProcessGroupNCCL *>(backend.get());
  if (!nccl)
    throw Error(tleInvalidArgument,
                "commFromProcessGroup: the group's CUDA backend is not "
                "ProcessGroupNCCL");
  // The communicator of the current device (the guard's).
  void *comm = reinterpret_cast<void *>(nccl->getCommPtr());
  if (!comm)
    throw Error(tleInvalidArgument,
                "commFromProcessGroup: the group has no NCCL communicator on "
                "this device yet (run a collective on it first)");
  return Comm::initFromNccl(comm, nullptr, config);
}

} // namespace tle

#endif // TLE_C10D_HPP
