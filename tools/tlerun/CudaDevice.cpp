//===- CudaDevice.cpp - tlerun on the node's GPUs -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs a PTX kernel on one GPU per rank with the CUDA driver API: the module
// is JIT-loaded by the driver (cuModuleLoadDataEx) in each device's primary
// context, the context the runtime API (and so TLE's CUDA backend) uses, and
// a `group grid` kernel goes through cuLaunchCooperativeKernel so that all of
// its blocks are co-resident. All ranks are launched before any is waited
// for, since the kernels wait for each other. Built only with TLE_ENABLE_CUDA;
// otherwise createCudaDevice reports that.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#ifdef TLE_TLERUN_CUDA

#include <cuda.h>

#include <chrono>
#include <thread>
#include <vector>

using namespace tle::run;

namespace {
/// "cuFoo failed: CUDA_ERROR_...: description".
std::string cuError(const char *call, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  return std::string(call) + " failed: " + (name ? name : "?") + ": " +
         (text ? text : "?");
}

class CudaDevice final : public Device {
public:
  ~CudaDevice() override {
    for (Rank &rank : ranks) {
      if (!rank.context)
        continue;
      cuCtxSetCurrent(rank.context);
      if (rank.stream)
        cuStreamDestroy(rank.stream);
      if (rank.module)
        cuModuleUnload(rank.module);
      cuDevicePrimaryCtxRelease(rank.device);
    }
  }

  tleBackend_t backend() const override { return tleBackendCuda; }

  tle::TraceClock traceClock() const override {
    return tle::TraceClock::Nanoseconds;
  }

  bool startTrace(std::string &error) override {
    for (tleComm_t comm : comms)
      if (tleResult_t r = tleCommTraceStart(comm, kTraceEvents);
          r != tleSuccess) {
        error = std::string("tleCommTraceStart: ") + tleGetErrorString(r) +
                ": " + tleGetLastErrorDetail();
        return false;
      }
    return true;
  }

  std::string traceLaunch(uint64_t launch, uint64_t,
                          std::string &marker) override {
    std::string events;
    uint64_t first = 0;
    if (tle::traceTakeEvents(comms.data(), static_cast<int>(comms.size()),
                             launch, traceOrigin, events, first) != tleSuccess)
      return "";
    marker = tle::traceLaunchMarker(launch, tle::TraceClock::Nanoseconds,
                                    first ? first : traceOrigin, traceOrigin);
    return events;
  }

  bool load(const LoadedKernel &kernel, const tleComm_t *comms, int nRanks,
            std::string &error) override {
    if (kernel.ptx.empty()) {
      error = "kernel '" + kernel.meta.name +
              "' has no PTX (pass a cuda bundle from tlec --target=cuda)";
      return false;
    }
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) {
      error = cuError("cuInit", r);
      return false;
    }
    this->comms.assign(comms, comms + nRanks);
    ranks.resize(nRanks);
    for (int i = 0; i < nRanks; ++i) {
      Rank &rank = ranks[i];
      // tleCommInitAll with no device list puts rank i on device i.
      if (CUresult r = cuDeviceGet(&rank.device, i); r != CUDA_SUCCESS) {
        error = cuError("cuDeviceGet", r) + " (rank " + std::to_string(i) +
                ": does the node have enough GPUs?)";
        return false;
      }
      CUresult r = cuDevicePrimaryCtxRetain(&rank.context, rank.device);
      if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(rank.context);
      if (r != CUDA_SUCCESS) {
        error = cuError("cuDevicePrimaryCtxRetain", r);
        return false;
      }
      char log[8192] = {0};
      CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER,
                             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
      void *vals[] = {log, reinterpret_cast<void *>(sizeof(log))};
      if (CUresult r = cuModuleLoadDataEx(&rank.module, kernel.ptx.c_str(), 2,
                                          keys, vals);
          r != CUDA_SUCCESS) {
        error = cuError("cuModuleLoadDataEx", r) + "\n" + log;
        return false;
      }
      if (CUresult r = cuModuleGetFunction(&rank.function, rank.module,
                                           kernel.meta.name.c_str());
          r != CUDA_SUCCESS) {
        error = cuError("cuModuleGetFunction", r);
        return false;
      }
      if (CUresult r = cuStreamCreate(&rank.stream, CU_STREAM_NON_BLOCKING);
          r != CUDA_SUCCESS) {
        error = cuError("cuStreamCreate", r);
        return false;
      }
    }
    return true;
  }

  bool write(int rank, void *dst, const void *src, size_t bytes,
             std::string &error) override {
    cuCtxSetCurrent(ranks[rank].context);
    if (CUresult r =
            cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes);
        r != CUDA_SUCCESS) {
      error = cuError("cuMemcpyHtoD", r);
      return false;
    }
    return true;
  }

  bool read(int rank, void *dst, const void *src, size_t bytes,
            std::string &error) override {
    cuCtxSetCurrent(ranks[rank].context);
    if (CUresult r =
            cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes);
        r != CUDA_SUCCESS) {
      error = cuError("cuMemcpyDtoH", r);
      return false;
    }
    return true;
  }

  LaunchOutcome launch(const LaunchShape &shape,
                       void **const *argsPerRank) override {
    LaunchOutcome outcome;
    auto fail = [&](tleResult_t result, std::string message) {
      outcome.result = result;
      outcome.message += message + "\n";
      return outcome;
    };
    if (shape.cooperative)
      if (std::string why = checkCooperative(shape); !why.empty())
        return fail(tleInvalidArgument, why);
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < ranks.size(); ++i) {
      Rank &rank = ranks[i];
      cuCtxSetCurrent(rank.context);
      CUresult r =
          shape.cooperative
              ? cuLaunchCooperativeKernel(
                    rank.function, shape.grid.x, shape.grid.y, shape.grid.z,
                    shape.block.x, shape.block.y, shape.block.z, 0, rank.stream,
                    argsPerRank[i])
              : cuLaunchKernel(rank.function, shape.grid.x, shape.grid.y,
                               shape.grid.z, shape.block.x, shape.block.y,
                               shape.block.z, 0, rank.stream, argsPerRank[i],
                               nullptr);
      if (r != CUDA_SUCCESS)
        return fail(tleLaunchFailure,
                    "rank " + std::to_string(i) + ": " +
                        cuError(shape.cooperative ? "cuLaunchCooperativeKernel"
                                                  : "cuLaunchKernel",
                                r));
    }
    std::vector<bool> done(ranks.size(), false);
    size_t remaining = ranks.size();
    while (remaining) {
      for (size_t i = 0; i < ranks.size(); ++i) {
        if (done[i])
          continue;
        cuCtxSetCurrent(ranks[i].context);
        CUresult r = cuStreamQuery(ranks[i].stream);
        if (r == CUDA_ERROR_NOT_READY)
          continue;
        done[i] = true;
        --remaining;
        if (r != CUDA_SUCCESS) {
          outcome.result = tleLaunchFailure;
          outcome.message += "rank " + std::to_string(i) + ": " +
                             cuError("the kernel", r) + "\n";
        }
      }
      auto elapsed = std::chrono::steady_clock::now() - start;
      if (remaining && shape.watchdogMs &&
          elapsed > std::chrono::milliseconds(shape.watchdogMs)) {
        outcome.result = tleTimeout;
        outcome.message += "the launch did not finish within " +
                           std::to_string(shape.watchdogMs) +
                           " ms on the host watchdog\n";
        break;
      }
      if (remaining)
        std::this_thread::yield();
    }
    outcome.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    // The device library records barrier failures (timeout, slot out of
    // range, bad comm) before it traps; that record is the diagnosis.
    for (tleComm_t comm : comms) {
      // tleCommGetError returns the recorded failure as its own status, so
      // info.result, not the return value, says whether there was one.
      tleErrorInfo info{};
      tleCommGetError(comm, &info);
      if (info.result != tleSuccess) {
        if (outcome.result == tleSuccess || outcome.result == tleLaunchFailure)
          outcome.result = info.result;
        outcome.message += std::string(info.message) + "\n";
        outcome.records.push_back(info);
      }
    }
    return outcome;
  }

private:
  struct Rank {
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    CUstream stream = nullptr;
  };

  /// "" when every rank can hold the whole grid at once, else why not.
  std::string checkCooperative(const LaunchShape &shape) {
    for (size_t i = 0; i < ranks.size(); ++i) {
      int supported = 0, sms = 0, perSM = 0;
      cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
                           ranks[i].device);
      cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                           ranks[i].device);
      cuCtxSetCurrent(ranks[i].context);
      cuOccupancyMaxActiveBlocksPerMultiprocessor(
          &perSM, ranks[i].function, static_cast<int>(shape.block.total()), 0);
      if (!supported)
        return "rank " + std::to_string(i) +
               ": the GPU does not support cooperative launches, which a "
               "`group grid` barrier needs";
      if (uint64_t(perSM) * sms < shape.grid.total())
        return "rank " + std::to_string(i) +
               ": a `group grid` barrier needs "
               "all " +
               std::to_string(shape.grid.total()) +
               " blocks resident, but only " + std::to_string(perSM * sms) +
               " fit (" + std::to_string(sms) + " SMs x " +
               std::to_string(perSM) + ")";
    }
    return "";
  }

  /// Events each rank's trace ring keeps (the latest ones of a launch).
  static constexpr uint32_t kTraceEvents = 1u << 20;

  std::vector<Rank> ranks;
  std::vector<tleComm_t> comms;
  /// The first traced event's %globaltimer: ts 0 of the trace.
  uint64_t traceOrigin = 0;
};
} // namespace

std::unique_ptr<Device> tle::run::createCudaDevice(std::string &) {
  return std::make_unique<CudaDevice>();
}

#else

std::unique_ptr<tle::run::Device>
tle::run::createCudaDevice(std::string &error) {
  error = "--target cuda: this tlerun was built without CUDA "
          "(configure with -DTLE_ENABLE_CUDA=ON, e.g. cmake --preset gpu)";
  return nullptr;
}

#endif
