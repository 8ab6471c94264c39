//===- Interp.cpp - The device library called by Triton's interpreter -----===//
//
// Implements Interp.h: each entry point makes the calling OS thread a
// program (OffFiber.h) for the duration of one call of the host build of
// the device library, and turns an abort of that call into a status and the
// error record, where a GPU would trap.
//
//===----------------------------------------------------------------------===//

#include "emu/Interp.h"

#include "Comm.h"
#include "Error.h"
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

/// The record a failing call on `comm` writes, if the library trusts it.
tle::ErrorRecord *commRecord(int64_t comm) {
  const auto *dc = reinterpret_cast<const tle::DevComm *>(comm);
  if (!dc || dc->magic != tle::kDevCommMagic ||
      dc->version != tle::kDevCommVersion)
    return nullptr;
  return dc->error;
}

/// The same for a symmetric buffer's handle.
tle::ErrorRecord *memRecord(int64_t mem) {
  const auto *m = reinterpret_cast<const tle::SymMem *>(mem);
  if (!m || m->magic != tle::kSymMemMagic)
    return nullptr;
  return m->error;
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
tleResult_t call(const char *api, const tleInterpProgram *program, R *out,
                 tleErrorInfo *outError, Fn fn, Record record) {
  return tle::guard(api, [&] {
    if (tleResult_t r = checkProgram(program))
      return r;
    if (!out || !outError)
      return tle::fail(tleInvalidArgument, "%s is NULL",
                       out ? "outError" : "out");
    *outError = {};
    outError->result = tleSuccess;
    if (currentProgram)
      return tle::fail(tleInvalidArgument,
                       "a program is already running on this thread");
    R value{};
    auto body = [&] { value = fn(); };
    if (runAsProgram(*program, body)) {
      *out = value;
      return tleSuccess;
    }
    tle::ErrorRecord *rec = record();
    if (rec && tle::takeErrorRecord(*rec, *outError))
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

TLE_API tleResult_t tleInterpTritonBarrier(const tleInterpProgram *program,
                                           int64_t comm, int32_t barrierKind,
                                           int32_t groupKind, int32_t index,
                                           int32_t order, int32_t *out,
                                           tleErrorInfo *outError) {
  return call(
      "tleInterpTritonBarrier", program, out, outError,
      [&] {
        return tleTritonBarrier(comm, barrierKind, groupKind, index, order);
      },
      [&] { return commRecord(comm); });
}

TLE_API tleResult_t tleInterpTritonIntraRank(const tleInterpProgram *program,
                                             int64_t comm, int32_t *out,
                                             tleErrorInfo *outError) {
  return call(
      "tleInterpTritonIntraRank", program, out, outError,
      [&] { return tleTritonIntraRank(comm); },
      [&] { return commRecord(comm); });
}

TLE_API tleResult_t tleInterpTritonIntraSize(const tleInterpProgram *program,
                                             int64_t comm, int32_t *out,
                                             tleErrorInfo *outError) {
  return call(
      "tleInterpTritonIntraSize", program, out, outError,
      [&] { return tleTritonIntraSize(comm); },
      [&] { return commRecord(comm); });
}

TLE_API tleResult_t tleInterpTritonLocalPointer(const tleInterpProgram *program,
                                                int64_t mem, int64_t offset,
                                                int64_t *out,
                                                tleErrorInfo *outError) {
  return call(
      "tleInterpTritonLocalPointer", program, out, outError,
      [&] { return tleTritonLocalPointer(mem, offset); },
      [&] { return memRecord(mem); });
}

TLE_API tleResult_t tleInterpTritonIntraPointer(const tleInterpProgram *program,
                                                int64_t mem, int64_t offset,
                                                int32_t peer, int64_t *out,
                                                tleErrorInfo *outError) {
  return call(
      "tleInterpTritonIntraPointer", program, out, outError,
      [&] { return tleTritonIntraPointer(mem, offset, peer); },
      [&] { return memRecord(mem); });
}

} // extern "C"
