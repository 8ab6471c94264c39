/*===- Export.h - Symbol visibility of the TLE shared library -----*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * libtle.so is compiled with -fvisibility=hidden so that only its API is
 * exported: the C API in tle.h, the emulator's C++ API in emu.h, and the few
 * internal entry points other parts of TLE call across the library boundary.
 * Each of those declarations carries TLE_API. This header is valid C and C++
 * because tle.h includes it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TLE_DETAIL_EXPORT_H
#define TLE_DETAIL_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
/** Marks a declaration exported from libtle.so. */
#define TLE_API __attribute__((visibility("default")))
#else
#define TLE_API
#endif

#endif /* TLE_DETAIL_EXPORT_H */
