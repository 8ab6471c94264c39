/*===- Interp.h - Device library entry points for Triton's interpreter -===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Under TRITON_INTERPRET=1 a Triton program runs on the CPU as one thread
 * of Python, one program after another. tle.language then calls these entry
 * points (through ctypes) instead of emitting calls into the device bitcode.
 * Each runs one function of the host build of the device library on the
 * calling OS thread as program `blockIdx` of a grid `gridDim` of one-thread
 * blocks (OffFiber.h): block syncs are no-ops, a wait sleeps between polls
 * against the real-time clock and the communicator's deadline, and where a
 * GPU would trap, the call returns the error record instead.
 *
 * Each entry point is X##Interp(program, <the arguments of X>, out,
 * outError) for a Triton entry point X of tle/abi.def, declared and defined
 * from that definition, so that a new Triton entry point gets its
 * interpreter twin with no code here and the Python side derives the
 * binding from X's signature. It returns tleSuccess and
 * X's result in `*out`, or the device library's failure:
 * `*outError` then holds the record, read and cleared as tleCommGetError
 * reads it (the same fields and message as after a failed GPU launch), and
 * the last error detail is the message prefixed with the entry point's name.
 * A failure without a record (a NULL, corrupt or foreign communicator or
 * buffer handle, which the library cannot trust) is tleInvalidComm. Results
 * are written only on success. Not for use inside an emulator launch.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TLE_HOST_EMU_INTERP_H
#define TLE_HOST_EMU_INTERP_H

#include "tle/abi.h"
#include "tle/tle.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Who calls: program `blockIdx` (tl.program_id) of `gridDim` programs. */
typedef struct tleInterpProgram {
  uint32_t blockIdx[3];
  uint32_t gridDim[3];
} tleInterpProgram;

/** For every Triton entry point X of tle/abi.def (TLE_ABI_TRITON_FUNCTION),
 *  `tleResult_t X##Interp(program, <X's parameters>, <X's result> *out,
 *  tleErrorInfo *outError)`, e.g. tleTritonBarrierInterp. */
#define TLE_ABI_TRITON_FUNCTION(Name, Result, What, ...)                       \
  TLE_API tleResult_t Name##Interp(const tleInterpProgram *program,            \
                                   TLE_ABI_MAP(TLE_ABI_CPARAM, __VA_ARGS__),   \
                                   TLE_ABI_CTYPE_##Result *out,                \
                                   tleErrorInfo *outError);
#include "tle/abi.def"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLE_HOST_EMU_INTERP_H */
