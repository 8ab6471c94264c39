// RUN: tle-opt %s --tle-cuda-pipeline="arch=sm_80 O=1" | FileCheck %s

// The MLIR half of tlec --target=cuda as one pipeline: tle ops are ABI
// calls, gpu ops NVVM ops, and the gpu.module carries the NVVM target that
// gpu-module-to-binary serializes with.

// CHECK: gpu.module @m [#nvvm.target<O = 1, chip = "sm_80">]
// CHECK-DAG: llvm.func @tleIntraBarrierSyncAt(!llvm.ptr, i32, i32, i1, i32, i32)
// CHECK: llvm.func @k(
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: llvm.call @tleIntraBarrierSyncAt(
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%comm: !llvm.ptr) kernel {
      %b = gpu.block_id x
      %i = arith.index_cast %b : index to i32
      tle.device_intra_barrier sync %comm, %i : !llvm.ptr
      gpu.return
    }
  }
}
