// Calls a device function no library defines (a FlagCX-style name TLE does
// not have), beside one it does: tlerun must name the missing one and its
// kernel instead of the JIT's "Symbols not found".
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @flagcxDevNoSuchPut(!llvm.ptr, i32)
    llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i32
    gpu.func @ring(%comm: !llvm.ptr) kernel {
      %r = llvm.call @flagcxDevCommGetIntraRank(%comm) : (!llvm.ptr) -> i32
      llvm.call @flagcxDevNoSuchPut(%comm, %r) : (!llvm.ptr, i32) -> ()
      gpu.return
    }
  }
}
