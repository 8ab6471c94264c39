//===- Fiber.cpp - The emulator's fiber switch on x86-64 ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// tle_emu_switch_fiber (Fiber.h): the System V x86-64 switch, in Boost's
// jump_fcontext layout. The context is 0x40 bytes at the suspended stack
// pointer: MXCSR and the x87 control word, r12-r15, rbx, rbp, and the
// return address its call pushed. It returns {the context it left, word}
// in rax:rdx to a resumed switch, and passes the same in rdi:rsi to a fresh
// context's entry (make_fcontext's trampoline reads those), both through
// the final `ret`. Like the jump_fcontext of Debian's Boost, it does not
// keep a CET shadow stack: a process that turns shadow stacks on cannot
// run the emulator.
//
//===----------------------------------------------------------------------===//

#include "emu/Fiber.h"

#if defined(__x86_64__) && defined(__ELF__)
asm(R"(
    .pushsection .text
    .globl  tle_emu_switch_fiber
    .hidden tle_emu_switch_fiber
    .type   tle_emu_switch_fiber, @function
    .p2align 4
tle_emu_switch_fiber:
    leaq    -0x38(%rsp), %rsp
    stmxcsr (%rsp)
    fnstcw  0x4(%rsp)
    movq    %r12, 0x8(%rsp)
    movq    %r13, 0x10(%rsp)
    movq    %r14, 0x18(%rsp)
    movq    %r15, 0x20(%rsp)
    movq    %rbx, 0x28(%rsp)
    movq    %rbp, 0x30(%rsp)
    movq    %rsp, %rax
    movq    %rdi, %rsp
    ldmxcsr (%rsp)
    fldcw   0x4(%rsp)
    movq    0x8(%rsp), %r12
    movq    0x10(%rsp), %r13
    movq    0x18(%rsp), %r14
    movq    0x20(%rsp), %r15
    movq    0x28(%rsp), %rbx
    movq    0x30(%rsp), %rbp
    leaq    0x38(%rsp), %rsp
    movq    %rsi, %rdx
    movq    %rax, %rdi
    ret
    .size   tle_emu_switch_fiber, . - tle_emu_switch_fiber
    .popsection
)");
#endif
