// The words the one-sided ops need, as tlec's metadata counts them: a put's
// attached signal (word 4) and counter (word 1) count like tle.signal's and
// the counter ops' indices, a helper's shadow wait on word 6 counts, and
// put_value's signal on word 2 counts; `counters` uses counter 3 and a
// runtime counter index, so its counter-words are decided at run time.
// `counter5` uses counter 5 and no signal: tlerun must still create six
// counter words.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func @helper(%comm: !llvm.ptr) {
      %w6 = arith.constant 6 : i32
      tle.shadow_wait %comm, %w6 : !llvm.ptr
      return
    }
    gpu.func @puts(%comm: !llvm.ptr, %mem: !llvm.ptr) kernel {
      %peer = arith.constant 1 : i32
      %w1 = arith.constant 1 : i32
      %w2 = arith.constant 2 : i32
      %w4 = arith.constant 4 : i32
      %off = arith.constant 0 : i64
      %n = arith.constant 64 : i64
      tle.put %comm, %mem[%off], %mem[%off], %n, %peer signal inc %w4 counter %w1 : !llvm.ptr
      tle.put_value %comm, %mem[%off], %n, %peer signal add %w2, %n : !llvm.ptr
      func.call @helper(%comm) : (!llvm.ptr) -> ()
      gpu.return
    }
    gpu.func @counter5(%comm: !llvm.ptr) kernel {
      %w5 = arith.constant 5 : i32
      %zero = arith.constant 0 : i64
      tle.reset_counter %comm, %w5 : !llvm.ptr
      tle.counter_wait %comm, %w5, %zero group thread : !llvm.ptr
      gpu.return
    }
    gpu.func @counters(%comm: !llvm.ptr, %c: i32) kernel {
      %w3 = arith.constant 3 : i32
      %n = arith.constant 1 : i64
      tle.counter_wait %comm, %w3, %n : !llvm.ptr
      tle.reset_counter %comm, %c : !llvm.ptr
      gpu.return
    }
  }
}
