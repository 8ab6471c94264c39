// RUN: tle-opt %s --split-input-file --verify-diagnostics \
// RUN:   --tle-flatten-gpu-modules | FileCheck %s

// Kernels become func.funcs named __tle_kernel.NAME, marked with their name
// and parameter types; helpers keep their names; ABI declarations that two
// gpu.modules share are kept once; the container attribute goes.

// CHECK-LABEL: module {
// CHECK-NOT: gpu.module
// CHECK-DAG: llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i32
// CHECK-DAG: func.func @helper(%{{.*}}: i32) -> i32
// CHECK-DAG: func.func @__tle_kernel.k(%{{.*}}: !llvm.ptr, %{{.*}}: index, %{{.*}}: f32) attributes {tle.emu_kernel = "k", tle.emu_params = "ptr,index,f32"}
// CHECK-DAG: func.func @__tle_kernel.j(%{{.*}}: !llvm.ptr) attributes {tle.emu_kernel = "j", tle.emu_params = "ptr"}
module attributes {gpu.container_module} {
  gpu.module @a {
    llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i32
    func.func @helper(%x: i32) -> i32 {
      return %x : i32
    }
    gpu.func @k(%comm: !llvm.ptr, %n: index, %f: f32) kernel {
      gpu.return
    }
  }
  gpu.module @b {
    llvm.func @flagcxDevCommGetIntraRank(!llvm.ptr) -> i32
    gpu.func @j(%comm: !llvm.ptr) kernel {
      // CHECK: return
      gpu.return
    }
  }
}

// -----

// Two definitions of one symbol in different gpu.modules.
module attributes {gpu.container_module} {
  gpu.module @a {
    func.func @helper() {
      return
    }
  }
  gpu.module @b {
    // expected-error @below {{symbol 'helper' is defined twice}}
    func.func @helper() {
      return
    }
  }
}
