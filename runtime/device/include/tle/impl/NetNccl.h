//===- NetNccl.h - Net words over NCCL GIN ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// kNetNcclGin's transport for Net.h, included only with TLE_WITH_NCCL_GIN:
// netAddGin(dc, worldPeer, word, value), netLoadGin(dc, word) and
// netResetGin(dc, word), with the contracts of netAdd, netLoad and
// netReset. To be written with tleCommInitFromNccl's network backend.
//
//===----------------------------------------------------------------------===//

#ifndef TLE_IMPL_NETNCCL_H
#define TLE_IMPL_NETNCCL_H

#endif // TLE_IMPL_NETNCCL_H
