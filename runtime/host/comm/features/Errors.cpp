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
#include "comm/Requirement.h"

namespace tle {
namespace {

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
