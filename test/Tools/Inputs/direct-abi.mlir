// The device ABI called directly, as IR built for FlagCX does, with no
// dialect op: a grid barrier on slot 2 (tleIntraGridBarrierSyncS), a
// unified barrier on slot 3 and a signal on word 5 to this rank itself,
// waited for (those two by block 0 only: one group per slot). The bundle must count them as the ops they lower from: a
// cooperative launch, 4 slots, 6 signal words.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @tleIntraGridBarrierSyncS(!llvm.ptr, i32, i1, i32)
    llvm.func @flagcxDevBarrierSync(!llvm.ptr, i32, i32, i32, i32, i32, i32)
    llvm.func @flagcxDevSignalInc(!llvm.ptr, i32, i32, i32, i32, i32, i32)
    llvm.func @flagcxDevWaitSignal(!llvm.ptr, i32, i64, i32, i32, i32, i32)
    llvm.func @flagcxDevResetSignal(!llvm.ptr, i32, i32)
    llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i32
    gpu.func @direct(%comm: !llvm.ptr) kernel {
      %c0 = arith.constant 0 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c5 = arith.constant 5 : i32
      %block = arith.constant 2 : i32
      %acqrel = arith.constant 3 : i32
      %acquire = arith.constant 1 : i32
      %bits = arith.constant 64 : i32
      %false = arith.constant false
      %one64 = arith.constant 1 : i64
      llvm.call @tleIntraGridBarrierSyncS(%comm, %c2, %false, %acqrel) : (!llvm.ptr, i32, i1, i32) -> ()
      %bid = gpu.block_id x
      %b0 = arith.constant 0 : index
      %first = arith.cmpi eq, %bid, %b0 : index
      scf.if %first {
        llvm.call @flagcxDevBarrierSync(%comm, %c0, %c3, %c0, %block, %acqrel, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
        %me = llvm.call @flagcxDevCommGetIntraRank(%comm) : (!llvm.ptr) -> i32
        llvm.call @flagcxDevSignalInc(%comm, %c0, %me, %c5, %c0, %block, %c0) : (!llvm.ptr, i32, i32, i32, i32, i32, i32) -> ()
        llvm.call @flagcxDevWaitSignal(%comm, %c5, %one64, %bits, %c0, %block, %acquire) : (!llvm.ptr, i32, i64, i32, i32, i32, i32) -> ()
        llvm.call @flagcxDevResetSignal(%comm, %c0, %c5) : (!llvm.ptr, i32, i32) -> ()
      }
      llvm.call @tleIntraGridBarrierSyncS(%comm, %c2, %false, %acqrel) : (!llvm.ptr, i32, i1, i32) -> ()
      gpu.return
    }
  }
}
