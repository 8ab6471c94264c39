// RUN: tle-opt %s --split-input-file --convert-tle-to-llvm | FileCheck %s

// Where callees are declared, how handles are converted, and that the pass
// leaves every other op alone. Exact call arguments are checked on LLVM IR
// in barrier-*.mlir and queries.mlir.

// Ops inside a func.func: the callee is declared once in the module and
// reused by every call; func, arith and return are untouched.
// CHECK-LABEL: module {
// CHECK: llvm.func @flagcxIntraBarrierSyncS(!llvm.ptr, i32, i32, i1, i32)
// CHECK-NOT: llvm.func @flagcxIntraBarrierSyncS
// CHECK-LABEL: func.func @in_func(
// CHECK-SAME: %[[COMM:.*]]: !llvm.ptr, %[[I:.*]]: index)
// CHECK: %[[INDEX:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: llvm.call @flagcxIntraBarrierSyncS(%[[COMM]], %{{.*}}, %[[INDEX]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i1, i32) -> ()
// CHECK: llvm.call @flagcxIntraBarrierSyncS(%[[COMM]], %{{.*}}, %[[INDEX]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i1, i32) -> ()
// CHECK-NOT: tle.
// CHECK: return
func.func @in_func(%comm: !llvm.ptr, %i: index) {
  %index = arith.index_cast %i : index to i32
  tle.device_intra_barrier sync %comm, %index : !llvm.ptr
  tle.device_intra_barrier sync %comm, %index : !llvm.ptr
  return
}

// -----

// Ops inside a gpu.func kernel: the callee is declared in the gpu.module
// (the nearest symbol table), not in the host module.
// CHECK-LABEL: module attributes {gpu.container_module} {
// CHECK-NOT: llvm.func @flagcx
// CHECK: gpu.module @kernels {
// CHECK-DAG: llvm.func @flagcxIntraBarrierArriveS(!llvm.ptr, i32, i32, i1, i32)
// CHECK-DAG: llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i32
// CHECK: gpu.func @kernel(%[[COMM:.*]]: !llvm.ptr<1>) kernel
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[INDEX:.*]] = arith.index_cast %[[BID]] : index to i32
// CHECK: %[[GENERIC:.*]] = llvm.addrspacecast %[[COMM]] : !llvm.ptr<1> to !llvm.ptr
// CHECK: llvm.call @flagcxIntraBarrierArriveS(%[[GENERIC]], %{{.*}}, %[[INDEX]], %{{.*}}, %{{.*}})
// CHECK: llvm.call @flagcxDevCommGetIntraRank(%{{.*}}) : (!llvm.ptr) -> i32
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%comm: !llvm.ptr<1>) kernel {
      %bid = gpu.block_id x
      %index = arith.index_cast %bid : index to i32
      tle.device_intra_barrier arrive %comm, %index order release : !llvm.ptr<1>
      %r = tle.intra_rank %comm : !llvm.ptr<1>
      gpu.return
    }
  }
}

// -----

// An i64 communicator becomes a pointer by inttoptr, in an llvm.func.
// CHECK-LABEL: llvm.func @in_llvm_func(
// CHECK-SAME: %[[RAW:.*]]: i64, %[[INDEX:.*]]: i32)
// CHECK: %[[COMM:.*]] = llvm.inttoptr %[[RAW]] : i64 to !llvm.ptr
// CHECK: llvm.call @tleIntraGridBarrierWaitS(%[[COMM]], %[[INDEX]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i1, i32) -> ()
llvm.func @in_llvm_func(%comm: i64, %index: i32) {
  tle.device_intra_barrier wait %comm, %index group grid : i64
  llvm.return
}

// -----

// A callee the module already declares is reused, not redeclared.
// CHECK-LABEL: module {
// CHECK-COUNT-1: llvm.func @flagcxDevCommGetIntraSize(!llvm.ptr) -> i32
// CHECK-NOT: llvm.func @flagcxDevCommGetIntraSize
// CHECK: llvm.call @flagcxDevCommGetIntraSize
llvm.func @flagcxDevCommGetIntraSize(!llvm.ptr) -> i32
func.func @predeclared(%comm: !llvm.ptr) -> i32 {
  %n = tle.intra_size %comm : !llvm.ptr
  return %n : i32
}
