//===- Errors.cpp - The error record and its fault word ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Where the device library records a failed wait and what the host reads
// (tleCommGetError), in host-visible memory; its `abort` word is the
// communicator's fault word (tleCommAbort, the watchdog; diag/Abort.h).
// DevComm: error, flags.
//
//===----------------------------------------------------------------------===//

#include "comm/Comm.h"
#include "comm/Handles.h"
#include "comm/Requirement.h"
#include "diag/DevError.h"
#include "emu/OffFiber.h"

#include <cstdio>

namespace tle {
namespace {

/// A device-side failure on a host thread of the program's own (the device
/// ABI called outside a launch) ends the process: first say what each
/// communicator's completed record holds, which no launch will return.
void reportRecordsOffFiber() {
  forEachComm([](tleComm_t, const CommState &c) {
    if (!c.errorHost ||
        __atomic_load_n(&c.errorHost->state, __ATOMIC_ACQUIRE) != 2)
      return;
    tleErrorInfo info;
    describeErrorRecord(*c.errorHost, info,
                        {c.node, c.nNodes > 1 ? c.size : 0});
    std::fprintf(stderr, "tle: %s\n", info.message);
  });
}

[[maybe_unused]] const bool reportInstalled =
    (emu::detail::offFiberReport = reportRecordsOffFiber, true);

void require(const CommState &, std::vector<Requirement> &out) {
  out.push_back({"error record", MemoryKind::HostVisible, sizeof(ErrorRecord)});
}

void publish(CommState &c, const std::vector<Placed> &mem, DevComm &d) {
  c.errorHost = static_cast<ErrorRecord *>(mem[0].host);
  c.errorDev = static_cast<ErrorRecord *>(mem[0].mem);
  c.faults->words[c.faultIndex].store(&c.errorHost->abort);
  d.error = c.errorDev;
  d.flags = c.config.onErrorReturn ? kDevCommOnErrorReturn : 0;
}

} // namespace

extern const CommFeature errorFeature = {"error record", require, publish};

} // namespace tle
