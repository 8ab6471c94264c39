// RUN: tle-opt %s --tle-host-pipeline | FileCheck %s
// RUN: tle-opt %s --tle-host-pipeline=abi=unified \
// RUN:   | FileCheck %s --check-prefix=UNIFIED

// The whole host lowering registered as one pipeline: tle ops call the ABI,
// gpu ids call the emulator hooks, everything is in the LLVM dialect, and
// the kernel has its packed entry and parameter list.

// CHECK-NOT: gpu.module
// CHECK-DAG: llvm.func @tleEmuBlockId(i32) -> i32
// CHECK-DAG: llvm.func @tleIntraBarrierSyncAt(!llvm.ptr, i32, i32, i1, i32, i32)
// CHECK-DAG: llvm.call @tleEmuSite(
// CHECK-DAG: llvm.func internal @__tle_kernel.k(
// CHECK-DAG: llvm.func @__tle_entry.k(
// CHECK-DAG: llvm.mlir.global external constant @__tle_params.k("ptr,i32\00")
// UNIFIED-DAG: llvm.func @tleDevBarrierSyncAt(!llvm.ptr, i32, i32, i32, i32, i32, i32, i32)
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%comm: !llvm.ptr, %n: i32) kernel {
      %b = gpu.block_id x
      %i = arith.index_cast %b : index to i32
      tle.device_intra_barrier sync %comm, %i : !llvm.ptr
      gpu.return
    }
  }
}
