// A kernel named like an emulator hook (it used to crash tlec --target=host
// and tlerun).
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @tleEmuSyncBlock(%comm: !llvm.ptr) kernel {
      gpu.return
    }
  }
}
