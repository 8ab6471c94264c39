// RUN: tle-opt %s --convert-tle-to-llvm \
// RUN:   --gpu-lower-to-nvvm-pipeline="cubin-format=isa" | FileCheck %s
// RUN: tle-opt %s --convert-tle-to-llvm=abi=unified \
// RUN:   --gpu-lower-to-nvvm-pipeline="cubin-format=isa" \
// RUN:   | FileCheck %s --check-prefix=UNIFIED

// A kernel using every op, lowered by convert-tle-to-llvm and then MLIR's
// gpu-lower-to-nvvm-pipeline to PTX. The PTX is one escaped string in the
// gpu.binary's `assembly` (\0A is a newline, \09 a tab). The device
// functions stay external (the device library is linked later), and the
// barrier slot is the block id, a runtime register.

// CHECK: gpu.binary @kernels
// CHECK-DAG: .extern .func flagcxIntraBarrierSyncS\0A(\0A\09.param .b64 flagcxIntraBarrierSyncS_param_0,\0A\09.param .b32 flagcxIntraBarrierSyncS_param_1,\0A\09.param .b32 flagcxIntraBarrierSyncS_param_2,\0A\09.param .b32 flagcxIntraBarrierSyncS_param_3,\0A\09.param .b32 flagcxIntraBarrierSyncS_param_4\0A)
// CHECK-DAG: .extern .func tleIntraGridBarrierArriveS\0A(
// CHECK-DAG: .extern .func  (.param .b32 func_retval0) flagcxDevCommGetIntraRank\0A(
// CHECK-DAG: .extern .func  (.param .b32 func_retval0) flagcxDevCommGetIntraSize\0A(
// CHECK-DAG: .extern .func  (.param .b64 func_retval0) flagcxGetIntraPointerS\0A(
// CHECK: .visible .entry barrier(
// CHECK: mov.u32 \09[[BID:%r[0-9]+]], %ctaid.x;
// CHECK: call.uni (retval0), flagcxDevCommGetIntraRank, (param0);
// CHECK: call.uni (retval0), flagcxDevCommGetIntraSize, (param0);
// CHECK: call.uni (retval0), flagcxGetIntraPointerS, (param0, param1, param2);
// The block barrier: coopKind BLOCK (2), index = block id, no multimem,
// order ACQ_REL (3).
// CHECK: st.param.b32 \09[param2], [[BID]];
// CHECK-DAG: st.param.b32 \09[param1], 2;
// CHECK-DAG: st.param.b32 \09[param3], 0;
// CHECK-DAG: st.param.b32 \09[param4], 3;
// CHECK: call.uni flagcxIntraBarrierSyncS, (param0, param1, param2, param3, param4);
// The grid barrier: index = block id, no multimem, order RELEASE (2).
// CHECK: st.param.b32 \09[param1], [[BID]];
// CHECK-DAG: st.param.b32 \09[param2], 0;
// CHECK-DAG: st.param.b32 \09[param3], 2;
// CHECK: call.uni tleIntraGridBarrierArriveS, (param0, param1, param2, param3);

// UNIFIED: gpu.binary @kernels
// UNIFIED: .extern .func flagcxDevBarrierSync\0A(
// UNIFIED: call.uni flagcxDevBarrierSync, (param0, param1, param2, param3, param4, param5, param6);
// UNIFIED: call.uni tleIntraGridBarrierArriveS, (param0, param1, param2, param3);

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @barrier(%comm: !llvm.ptr, %buf: !llvm.ptr) kernel {
      %bid = gpu.block_id x
      %index = arith.index_cast %bid : index to i32
      %rank = tle.intra_rank %comm : !llvm.ptr
      %size = tle.intra_size %comm : !llvm.ptr
      // Write this rank's id into the next peer's buffer, then synchronize.
      %c1 = arith.constant 1 : i32
      %next = arith.addi %rank, %c1 : i32
      %peer = arith.remui %next, %size : i32
      %c0 = arith.constant 0 : i64
      %p = tle.intra_pointer %buf, %c0, %peer : !llvm.ptr
      llvm.store %rank, %p : i32, !llvm.ptr
      tle.device_intra_barrier sync %comm, %index : !llvm.ptr
      tle.device_intra_barrier arrive %comm, %index group grid order release : !llvm.ptr
      gpu.return
    }
  }
}
