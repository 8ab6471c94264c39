# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Rewrites the device bitcode's function attributes so that a consumer can
# inline the library into its kernels: clang stamps every function with
# "target-cpu", "target-features" and, for the flush-to-zero build,
# "denormal-fp-math(-f32)", and LLVM's inliner refuses to inline a function
# whose attributes of these kinds differ from the caller's. Kernels that
# Triton and MLIR emit carry none of them (the target machine supplies CPU
# and features for the whole module), so the library must carry none either:
# Triton 3.6 otherwise kept tleTritonBarrier an out-of-line call, which also
# kept the communicator's loads inside every loop. The library does no
# floating point, so dropping its denormal mode changes nothing in it.
#   cmake -DDIS=llvm-dis -DAS=llvm-as -DIN=raw.bc -DOUT=lib.bc -P this
execute_process(COMMAND ${DIS} ${IN} -o ${OUT}.ll RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llvm-dis failed on ${IN}")
endif()
file(READ ${OUT}.ll ir)
string(REGEX REPLACE " \"(target-cpu|target-features|denormal-fp-math|denormal-fp-math-f32)\"=\"[^\"]*\"" "" ir "${ir}")
file(WRITE ${OUT}.ll "${ir}")
execute_process(COMMAND ${AS} ${OUT}.ll -o ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llvm-as failed on ${OUT}.ll")
endif()
file(REMOVE ${OUT}.ll)
