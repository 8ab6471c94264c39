// RUN: tle-opt %s --split-input-file --verify-diagnostics \
// RUN:   --tle-verify-host-kernels

// Ops without a host meaning are each reported at their location.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%comm: !llvm.ptr) kernel {
      // expected-error @below {{'nvvm.read.ptx.sreg.tid.x' is a GPU-specific op and cannot run on the CPU emulator (--target=host)}}
      %t = nvvm.read.ptx.sreg.tid.x : i32
      // expected-error @below {{'llvm.inline_asm' (inline assembly) cannot run on the CPU emulator (--target=host)}}
      %r = llvm.inline_asm has_side_effects "mov.u32 $0, %laneid;", "=r" : () -> i32
      gpu.return
    }
  }
}

// -----

// A kernel may not take the name of an emulator hook.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{symbol 'tleEmuSyncBlock' is reserved (it is an emulator hook)}}
    gpu.func @tleEmuSyncBlock(%comm: !llvm.ptr) kernel {
      gpu.return
    }
  }
}

// -----

// Names starting with __tle_ belong to the host lowering.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%comm: !llvm.ptr) kernel {
      gpu.return
    }
    // expected-error @below {{symbol '__tle_kernel.k' is reserved (names starting with '__tle_' are reserved for the host lowering)}}
    func.func @__tle_kernel.k(%comm: !llvm.ptr) {
      return
    }
  }
}

// -----

// A module may not define an entry point of the device library.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{symbol 'flagcxIntraBarrierSyncS' is reserved (it is a device ABI function, defined by the device library)}}
    llvm.func @flagcxIntraBarrierSyncS(%c: !llvm.ptr, %k: i32, %i: i32, %m: i1, %o: i32) {
      llvm.return
    }
  }
}

// -----

// Kernel names become symbols and one-line bundle metadata.
module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @below {{kernel name 'two words' is not a C identifier}}
    gpu.func @"two words"(%comm: !llvm.ptr) kernel {
      gpu.return
    }
  }
}

// -----

// A declaration of a hook or ABI function is fine: kernels call them.
module attributes {gpu.container_module} {
  gpu.module @m {
    llvm.func @tleEmuSyncBlock()
    gpu.func @k(%comm: !llvm.ptr) kernel {
      gpu.return
    }
  }
}
