// RUN: tle-opt %s --tle-cuda-pipeline="arch=sm_90 O=1" | FileCheck %s

// The team ops through tlec --target=cuda's MLIR half: a world barrier is
// FlagCX's unified barrier with team 2 (its ...At twin, with the op's
// call-site id last), an inter signal passes team 1, and the world rank
// query is flagcxDevCommGetRank.

// CHECK-DAG: llvm.func @tleDevBarrierSyncAt(!llvm.ptr, i32, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: llvm.func @tleDevSignalIncAt(!llvm.ptr, i32, i32, i32, i32, i32, i32, i32)
// CHECK-DAG: llvm.func @flagcxDevCommGetRank(!llvm.ptr) -> i32
// CHECK: llvm.func @k(%[[COMM:.*]]: !llvm.ptr
// CHECK-DAG: %[[C0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[C1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[C2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-DAG: %[[C3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK: %[[RANK:.*]] = llvm.call @flagcxDevCommGetRank(%[[COMM]])
// (comm, team world 2, slot, context 0, group block 2, acq_rel 3, system 0,
// site)
// CHECK-NEXT: llvm.call @tleDevBarrierSyncAt(%[[COMM]], %[[C2]], %[[RANK]], %[[C0]], %[[C2]], %[[C3]], %[[C0]], %{{.*}})
// (comm, team inter 1, peer, word, context 0, group block 2, system 0, site)
// CHECK-NEXT: llvm.call @tleDevSignalIncAt(%[[COMM]], %[[C1]], %[[RANK]], %[[RANK]], %[[C0]], %[[C2]], %[[C0]], %{{.*}})
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%comm: !llvm.ptr) kernel {
      %r = tle.team_rank %comm team world : !llvm.ptr
      tle.device_barrier sync %comm, %r team world : !llvm.ptr
      tle.signal inc %comm, %r, %r team inter : !llvm.ptr
      gpu.return
    }
  }
}
