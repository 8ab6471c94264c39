// A grid barrier on slot 0 and another on slot 3 inside helper functions the
// kernel calls: the bundle metadata must see them through the call graph.
// (Both are grid barriers: a block barrier on one constant slot in a launch
// of several blocks would be two groups in one slot.)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @grid_helper(%comm: !llvm.ptr) {
      %c0 = arith.constant 0 : i32
      tle.device_intra_barrier sync %comm, %c0 group grid : !llvm.ptr
      return
    }
    func.func @slot_helper(%comm: !llvm.ptr) {
      %c3 = arith.constant 3 : i32
      tle.device_intra_barrier sync %comm, %c3 group grid : !llvm.ptr
      func.call @grid_helper(%comm) : (!llvm.ptr) -> ()
      return
    }
    gpu.func @k(%comm: !llvm.ptr) kernel {
      func.call @slot_helper(%comm) : (!llvm.ptr) -> ()
      func.call @grid_helper(%comm) : (!llvm.ptr) -> ()
      gpu.return
    }
  }
}
