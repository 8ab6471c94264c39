// A kernel whose parameter a launcher cannot pass.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%comm: !llvm.ptr, %m: memref<4xi32>) kernel {
      gpu.return
    }
  }
}
