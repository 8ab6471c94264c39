// RUN: tle-opt %s --convert-gpu-to-tle-emu | FileCheck %s

// Ids and dims become hook calls with the dimension as 0/1/2; gpu.barrier
// becomes tleEmuSyncBlock. The hooks are declared once, from tle/abi.def.

// CHECK-DAG: llvm.func @tleEmuThreadId(i32) -> i32
// CHECK-DAG: llvm.func @tleEmuBlockId(i32) -> i32
// CHECK-DAG: llvm.func @tleEmuBlockDim(i32) -> i32
// CHECK-DAG: llvm.func @tleEmuGridDim(i32) -> i32
// CHECK-DAG: llvm.func @tleEmuSyncBlock()
// CHECK-LABEL: func.func @body(
func.func @body() -> (index, index, index, index) {
  // CHECK: %[[X:.*]] = llvm.mlir.constant(0 : i32) : i32
  // CHECK: %[[T:.*]] = llvm.call @tleEmuThreadId(%[[X]]) : (i32) -> i32
  // CHECK: arith.index_castui %[[T]] : i32 to index
  %t = gpu.thread_id x
  // CHECK: %[[Y:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: llvm.call @tleEmuBlockId(%[[Y]])
  %b = gpu.block_id y
  // CHECK: %[[Z:.*]] = llvm.mlir.constant(2 : i32) : i32
  // CHECK: llvm.call @tleEmuBlockDim(%[[Z]])
  %d = gpu.block_dim z
  // CHECK: llvm.call @tleEmuGridDim(
  %g = gpu.grid_dim x
  // CHECK: llvm.call @tleEmuSyncBlock() : () -> ()
  gpu.barrier
  return %t, %b, %d, %g : index, index, index, index
}
