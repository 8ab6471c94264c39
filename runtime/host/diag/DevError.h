//===- DevError.h - Device error records in words ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Turns the ErrorRecord the device library writes (tle/detail/DevComm.h)
// into the public tleErrorInfo: the status it maps to and one line that
// says what happened in the user's terms (which rank, block and thread,
// which call, which argument and bound). Every code and bad-argument id of
// tle/abi.def has its wording here.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_RUNTIME_HOST_DEVERROR_H
#define TLE_RUNTIME_HOST_DEVERROR_H

#include "tle/detail/DevComm.h"
#include "tle/tle.h"

#include <cstdint>
#include <string>

namespace tle {

/// "0,2" for a set of ranks 0 and 2, "none" for the empty set.
std::string peerList(const PeerMask &mask);
/// The same set as the public tleErrorInfo carries it.
void copyPeers(const PeerMask &mask, tleErrorInfo &out);

/// Copies `text` into `out` (`size` >= 8 bytes); text that does not fit is
/// cut at a word boundary and ends in "...", so no word is cut in two
/// (DevErrorTest's LongMessageIsCutBetweenWords).
void fitMessage(const char *text, char *out, size_t size);

/// "tle.local_pointer (flagcxGetLocalPointerS)": the op or call the user
/// wrote and its entry point, for an abi::Fn id; "" for an unknown id.
std::string callName(uint32_t fn);
/// Whether `fn` waits on a word (flagcxDevWaitSignal, the counter and
/// shadow waits, and their Triton spellings), whose failure names the
/// word, not a barrier slot.
bool isSignalWait(uint32_t fn);

/// The status a device error code stands for.
tleResult_t resultOfDevError(uint32_t code);

/// Where the communicator that wrote a record sits: node `node` of
/// ranks of `ranksPerNode` ranks; ranksPerNode 0 for one node.
struct RecordNode {
  int node = 0;
  int ranksPerNode = 0;
};

/// Converts a completed ErrorRecord into the public form. With several
/// nodes its ranks (the node's in the record) become world ranks, named
/// "rank W (node n, local l)" in the message.
void describeErrorRecord(const ErrorRecord &record, tleErrorInfo &out,
                         RecordNode where = {});

/// Reads a completed record into `info` and clears it (tleCommGetError's
/// read); false, with `info.result == tleSuccess`, when none is complete.
bool takeErrorRecord(ErrorRecord &record, tleErrorInfo &info,
                     RecordNode where = {});

/// The last record takeErrorRecord read from `rec`, kept until a read of
/// it finds none: the job's report (JobGather.cpp) shows a rank whose own
/// host already took its record (tleCommGetError, or the emulator's launch,
/// which takes every record). False when there is none.
bool lastTakenRecord(const ErrorRecord &rec, ErrorRecord &out);
/// Forgets it (the record's memory is being freed).
void forgetTakenRecord(const ErrorRecord &rec);

} // namespace tle

#endif // TLE_RUNTIME_HOST_DEVERROR_H
