// Every thread takes a 96 KiB stack frame and writes near its lowest byte:
// past the end of the emulator's default 64 KiB fiber stack, into the guard
// region below it; fine with --stack-bytes 256K. (The index is the thread
// id so that the frame cannot be optimized down to one byte.)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @big_frame(%comm: !llvm.ptr) kernel {
      %bytes = llvm.mlir.constant(98304 : i64) : i64
      %frame = llvm.alloca %bytes x i8 : (i64) -> !llvm.ptr
      %tid = gpu.thread_id x
      %index = arith.index_cast %tid : index to i64
      %p = llvm.getelementptr %frame[%index] : (!llvm.ptr, i64) -> !llvm.ptr, i8
      %byte = llvm.mlir.constant(1 : i8) : i8
      llvm.store volatile %byte, %p : i8, !llvm.ptr
      gpu.return
    }
  }
}
