// A kernel in the host lowering's reserved namespace next to the kernel
// whose body name it imitates (`--kernel __tle_kernel_k` used to run k's
// body with the wrong arguments).
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%comm: !llvm.ptr) kernel {
      gpu.return
    }
    gpu.func @__tle_kernel_k(%comm: !llvm.ptr, %x: i32) kernel {
      gpu.return
    }
  }
}
