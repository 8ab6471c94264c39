//===- HostOrders.cpp - The emulator build's memory orders, one by one ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The input of the `device-host-orders` check (host-orders.check): every
// ordered operation of the host platform layer (tle/impl/PlatformHost.h)
// as an extern "C" function of its own, compiled to LLVM IR, so that the
// check reads the C++ memory order each one uses. The emulator runs every
// fiber on one OS thread and so can never show a missing order; this is
// where a relaxed-for-acquire slip in the host build is seen. The barrier
// code above this layer is checked by OrderTableTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "tle/impl/Platform.h"

using namespace tle::impl;

extern "C" {
uint32_t hostLoadAcquireSys(const uint32_t *p) { return loadAcquireSys(p); }
uint32_t hostLoadRelaxedSys(const uint32_t *p) { return loadRelaxedSys(p); }
void hostStoreReleaseSys(uint32_t *p, uint32_t v) { storeReleaseSys(p, v); }
void hostStoreRelaxedSys(uint32_t *p, uint32_t v) { storeRelaxedSys(p, v); }
void hostAddReleaseSys(uint32_t *p, uint32_t v) { addReleaseSys(p, v); }
void hostAddRelaxedSys(uint32_t *p, uint32_t v) { addRelaxedSys(p, v); }
void hostFenceAcqRelSys() { fenceAcqRelSys(); }
void hostFenceSeqCstSys() { fenceSeqCstSys(); }
uint32_t hostLoadRelaxedGpu(const uint32_t *p) { return loadRelaxedGpu(p); }
void hostStoreRelaxedGpu(uint32_t *p, uint32_t v) { storeRelaxedGpu(p, v); }
uint32_t hostFetchAddAcqRelGpu(uint32_t *p, uint32_t v) {
  return fetchAddAcqRelGpu(p, v);
}
bool hostCasRelaxedSys(uint32_t *p, uint32_t e, uint32_t d) {
  return casRelaxedSys(p, e, d);
}
}
