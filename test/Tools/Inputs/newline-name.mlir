// A kernel name with a newline and a bundle key in it (it used to produce
// a bundle whose metadata the name rewrote).
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @"k\0Acode 0"(%comm: !llvm.ptr) kernel {
      gpu.return
    }
  }
}
