//===- DeviceHost.cpp - The device library, built for the CPU emulator ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The host build of the device library: the ABI functions of tle/device.h
// as ordinary exported C functions, for kernels that run inside the CPU
// emulator (C++ kernel bodies and `tlec --target=host` output). They reach
// the emulator through the EmuHooks symbols, which libtle's emulator
// defines; this file only instantiates the one shared implementation.
//
//===----------------------------------------------------------------------===//

#define TLE_DEVICE_EXPORT 1
// TLE_HOST_IN_LIBTLE comes from the tle_device_host target (the object
// built into libtle, runtime/device/CMakeLists.txt), not from here: other
// builds of this file (the mutants' test binaries) link libtle from outside
// and count through its hook.
#include "tle/device.h"
