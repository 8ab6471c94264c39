//===- Interp.cpp - The device library called by Triton's interpreter -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Implements Interp.h: each entry point makes the calling OS thread a
// program (OffFiber.h) for the duration of one call of the host build of
// the device library, and turns an abort of that call into a status and the
// error record, where a GPU would trap. A handle that is not a live
// object's (a freed buffer's, a destroyed communicator's) is refused
// before the library reads it.
//
//===----------------------------------------------------------------------===//

#include "emu/Interp.h"

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "diag/DevError.h"
#include "diag/Error.h"
#include "emu/OffFiber.h"
#include "tle/detail/DevComm.h"
#include "tle/device.h"

#include <csetjmp>
#include <cstdio>

using tle::emu::detail::currentProgram;
using tle::emu::detail::OffFiberProgram;

namespace {

/// Runs `body` as `program`; false if the device library aborted it. No
/// object with a destructor may live in `body` across its device call: the
/// abort skips its frames (OffFiber.h).
template <typename Body>
bool runAsProgram(const tleInterpProgram &program, Body &body) {
  OffFiberProgram self{};
  for (int d = 0; d < 3; ++d) {
    self.blockIdx[d] = program.blockIdx[d];
    self.gridDim[d] = program.gridDim[d];
  }
  if (setjmp(self.abort) != 0) {
    currentProgram = nullptr;
    return false;
  }
  currentProgram = &self;
  body();
  currentProgram = nullptr;
  return true;
}

/// The record a failing call on `handle` (a communicator or a symmetric
/// buffer, told apart by their magic words as the library tells them)
/// writes, if the library trusts the handle; a communicator of several
/// nodes also says where it sits (`node`), so that the report names world
/// ranks as tleCommGetError's does. A buffer spans one node and has no
/// node of its own: its reports name the node's ranks.
tle::ErrorRecord *recordOf(int64_t handle, tle::RecordNode &node) {
  node = {};
  const auto *word = reinterpret_cast<const uint32_t *>(handle);
  if (!word)
    return nullptr;
  if (*word == tle::kDevCommMagic) {
    const auto *dc = reinterpret_cast<const tle::DevComm *>(handle);
    if (dc->version != tle::kDevCommVersion)
      return nullptr;
    if (dc->nNodes > 1)
      node = {dc->node, dc->size};
    return dc->error;
  }
  if (*word == tle::kSymMemMagic)
    return reinterpret_cast<const tle::SymMem *>(handle)->error;
  return nullptr;
}

tleResult_t checkProgram(const tleInterpProgram *program) {
  if (!program)
    return tle::fail(tleInvalidArgument, "program is NULL");
  for (int d = 0; d < 3; ++d)
    if (program->gridDim[d] == 0 || program->blockIdx[d] >= program->gridDim[d])
      return tle::fail(tleInvalidArgument,
                       "program (%u, %u, %u) is not in the grid (%u, %u, %u)",
                       program->blockIdx[0], program->blockIdx[1],
                       program->blockIdx[2], program->gridDim[0],
                       program->gridDim[1], program->gridDim[2]);
  return tleSuccess;
}

/// One entry point: checks, runs `fn` (returning the device function's
/// result) as the program, and stores the result in `*out`, or reports an
/// abort with the record `record()` names (read after the abort: a bad
/// pointer is recognised as the library recognised it).
template <typename R, typename Fn, typename Record>
tleResult_t call(const char *api, const tleInterpProgram *program,
                 int64_t handle, R *out, tleErrorInfo *outError, Fn fn,
                 Record record) {
  return tle::guard(api, [&] {
    if (tleResult_t r = checkProgram(program))
      return r;
    if (!out || !outError)
      return tle::fail(tleInvalidArgument, "%s is NULL",
                       out ? "outError" : "out");
    *outError = {};
    outError->result = tleSuccess;
    // A freed buffer's handle or a destroyed communicator's DevComm may
    // still hold its magic word (freed memory is not cleared by free()):
    // only the pointers of live objects are passed on. NULL is left to the
    // library, which refuses it as any GPU would.
    const void *p = reinterpret_cast<const void *>(handle);
    if (p && !tle::isLiveDevicePointer(p)) {
      const uint32_t *b = program->blockIdx, *g = program->gridDim;
      outError->result = tleInvalidComm;
      outError->rank = -1;
      outError->block = static_cast<int>(b[0] + g[0] * (b[1] + g[1] * b[2]));
      std::snprintf(outError->message, sizeof outError->message,
                    "block %d thread 0: %p is neither the DevComm of a live "
                    "communicator nor the handle of a live symmetric buffer "
                    "(destroyed, freed, or not a pointer TLE gave)",
                    outError->block, p);
      return tle::fail(tleInvalidComm, "%s", outError->message);
    }
    if (currentProgram)
      return tle::fail(tleInvalidArgument,
                       "a program is already running on this thread");
    R value{};
    auto body = [&] { value = fn(); };
    if (runAsProgram(*program, body)) {
      *out = value;
      return tleSuccess;
    }
    tle::RecordNode node;
    tle::ErrorRecord *rec = record(node);
    if (rec && tle::takeErrorRecord(*rec, *outError, node))
      return tle::fail(outError->result, "%s", outError->message);
    const uint32_t *b = program->blockIdx, *g = program->gridDim;
    outError->result = tleInvalidComm;
    outError->rank = -1;
    outError->block = static_cast<int>(b[0] + g[0] * (b[1] + g[1] * b[2]));
    std::snprintf(outError->message, sizeof outError->message,
                  "block %d thread 0: the device library stopped without an "
                  "error record: a NULL, corrupt or foreign communicator or "
                  "symmetric buffer pointer",
                  outError->block);
    return tle::fail(tleInvalidComm, "%s", outError->message);
  });
}

} // namespace

extern "C" {

#define TLE_ABI_PARAM_NAME(Type, name) name
#define TLE_ABI_FIRST_PARAM(first, ...) TLE_ABI_PARAM_NAME first
#define TLE_ABI_TRITON_FUNCTION(Name, Result, What, ...)                       \
  TLE_API tleResult_t Name##Interp(const tleInterpProgram *program,            \
                                   TLE_ABI_MAP(TLE_ABI_CPARAM, __VA_ARGS__),   \
                                   TLE_ABI_CTYPE_##Result *out,                \
                                   tleErrorInfo *outError) {                   \
    return call(                                                               \
        #Name "Interp", program, TLE_ABI_FIRST_PARAM(__VA_ARGS__), out,        \
        outError,                                                              \
        [&] { return Name(TLE_ABI_MAP(TLE_ABI_PARAM_NAME, __VA_ARGS__)); },    \
        [&](tle::RecordNode &node) {                                           \
          return recordOf(TLE_ABI_FIRST_PARAM(__VA_ARGS__), node);             \
        });                                                                    \
  }
#include "tle/abi.def"

} // extern "C"
