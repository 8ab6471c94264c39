// Stores each scalar parameter, converted to f64, into out[0..8] of this
// rank (one thread), so tlerun's --arg can be checked for every parameter
// type tlec accepts; the pointer %out sits between scalars on purpose.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scalars(%comm: !llvm.ptr, %a: i1, %b: i8, %out: !llvm.ptr,
                      %c: i16, %d: i32, %e: i64, %f: f16, %g: f32, %h: f64,
                      %i: index) kernel {
      %a64 = arith.extui %a : i1 to i64
      %va = arith.sitofp %a64 : i64 to f64
      %vb = arith.sitofp %b : i8 to f64
      %vc = arith.sitofp %c : i16 to f64
      %vd = arith.sitofp %d : i32 to f64
      %ve = arith.sitofp %e : i64 to f64
      %vf = arith.extf %f : f16 to f64
      %vg = arith.extf %g : f32 to f64
      %i64 = arith.index_cast %i : index to i64
      %vi = arith.sitofp %i64 : i64 to f64
      %o0 = arith.constant 0 : i64
      %o1 = arith.constant 8 : i64
      %o2 = arith.constant 16 : i64
      %o3 = arith.constant 24 : i64
      %o4 = arith.constant 32 : i64
      %o5 = arith.constant 40 : i64
      %o6 = arith.constant 48 : i64
      %o7 = arith.constant 56 : i64
      %o8 = arith.constant 64 : i64
      %p0 = tle.local_pointer %out, %o0 : !llvm.ptr
      llvm.store %va, %p0 : f64, !llvm.ptr
      %p1 = tle.local_pointer %out, %o1 : !llvm.ptr
      llvm.store %vb, %p1 : f64, !llvm.ptr
      %p2 = tle.local_pointer %out, %o2 : !llvm.ptr
      llvm.store %vc, %p2 : f64, !llvm.ptr
      %p3 = tle.local_pointer %out, %o3 : !llvm.ptr
      llvm.store %vd, %p3 : f64, !llvm.ptr
      %p4 = tle.local_pointer %out, %o4 : !llvm.ptr
      llvm.store %ve, %p4 : f64, !llvm.ptr
      %p5 = tle.local_pointer %out, %o5 : !llvm.ptr
      llvm.store %vf, %p5 : f64, !llvm.ptr
      %p6 = tle.local_pointer %out, %o6 : !llvm.ptr
      llvm.store %vg, %p6 : f64, !llvm.ptr
      %p7 = tle.local_pointer %out, %o7 : !llvm.ptr
      llvm.store %h, %p7 : f64, !llvm.ptr
      %p8 = tle.local_pointer %out, %o8 : !llvm.ptr
      llvm.store %vi, %p8 : f64, !llvm.ptr
      gpu.return
    }
  }
}
