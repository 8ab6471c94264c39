// Ops without a host meaning are rejected by --target=host, each at its
// location and named; the run fails.
// RUN: not tlec --target=host %s 2>&1 | FileCheck %s

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%comm: !llvm.ptr) kernel {
      // CHECK: tlec-host-errors.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'nvvm.read.ptx.sreg.tid.x' is a GPU-specific op and cannot run on the CPU emulator (--target=host)
      %t = nvvm.read.ptx.sreg.tid.x : i32
      // CHECK: tlec-host-errors.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'llvm.inline_asm' (inline assembly) cannot run on the CPU emulator (--target=host)
      %r = llvm.inline_asm has_side_effects "mov.u32 $0, %laneid;", "=r" : () -> i32
      // CHECK: tlec-host-errors.mlir:[[@LINE+1]]:{{[0-9]+}}: error: 'gpu.shuffle' has no lowering for the CPU emulator (--target=host)
      %s, %ok = gpu.shuffle xor %t, %r, %r : i32
      gpu.return
    }
  }
}
