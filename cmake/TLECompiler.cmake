# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The compiler half of TLE: the `tle` dialect, its conversions, tle-opt and
# tlec, built against an installed LLVM/MLIR 22 in the way of MLIR's
# out-of-tree template. Included from the top level after the runtime, so
# LLVM's global compile flags never reach the runtime's targets.
find_package(MLIR REQUIRED CONFIG HINTS ${TLE_LLVM_ROOT}/lib/cmake/mlir)
message(STATUS "Using MLIRConfig.cmake in: ${MLIR_DIR}")
message(STATUS "Using LLVMConfig.cmake in: ${LLVM_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})

include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

# Debian's MLIR config names an llvm-lit that does not exist.
set(LLVM_EXTERNAL_LIT ${TLE_LLVM_ROOT}/bin/lit CACHE FILEPATH "lit" FORCE)

include_directories(${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
include_directories(${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
# tle/abi.def and tle/abi.h: the device ABI the lowering calls.
include_directories(${TLE_DEVICE_INCLUDE_DIR})
link_directories(${LLVM_BUILD_LIBRARY_DIR})
# LLVM_DEFINITIONS is one space-separated string; passed as is it becomes a
# single mangled -D (e.g. _GLIBCXX_USE_CXX11_ABI="1 -D__STDC_...").
separate_arguments(TLE_LLVM_DEFINITIONS NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${TLE_LLVM_DEFINITIONS})

# Link TLE's libraries and tools against libMLIR.so when the installation has
# it (Debian does): one shared library links in seconds, where the static
# archives of every dialect and pass take minutes.
if(TARGET MLIR)
  set(MLIR_LINK_MLIR_DYLIB ON)
endif()

add_subdirectory(include)
add_subdirectory(lib)
add_subdirectory(test)

# The compiler libraries, installed and exported (TLE::TLEDialect, ...) for
# kernel compilers that embed the dialect: static archives that link
# libMLIR.so, so a consumer finds MLIR 22 first (TLEConfig.cmake's Compiler
# component does). Their headers include the TableGen'd .h.inc files from
# the build's include/ (installed beside them) and tle/abi.h (TLE::abi).
set(TLE_COMPILER_LIBRARIES TLEDialect TLEToLLVM TLETransforms TLEGPUToEmu
  TLECompiler)
foreach(lib IN LISTS TLE_COMPILER_LIBRARIES)
  target_include_directories(${lib} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
# The verifiers read the rules of tle/rules.def, the lowering the ABI.
target_link_libraries(TLEDialect PUBLIC tle_abi)
target_link_libraries(TLEToLLVM PUBLIC tle_abi)
install(TARGETS ${TLE_COMPILER_LIBRARIES} EXPORT TLECompilerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tle ${PROJECT_BINARY_DIR}/include/tle
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
  FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc" PATTERN "*.td"
  PATTERN "CMakeFiles" EXCLUDE)
