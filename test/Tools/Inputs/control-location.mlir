// A signal wait that never completes, located in a file whose name holds a
// newline and an escape byte: the deadlock report must print them escaped,
// on one line, not raw.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @never(%comm: !llvm.ptr) kernel {
      %one = arith.constant 1 : i32
      %one64 = arith.constant 1 : i64
      tle.signal_wait %comm, %one, %one64 : !llvm.ptr loc("evil\0Aline\1B[2J.mlir":3:4)
      gpu.return
    }
  }
}
