# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The installed package: TLEConfig.cmake and TLEConfigVersion.cmake (for
# find_package(TLE)), the export sets the targets joined (TLETargets: the
# runtime, TLE::tle, TLE::abi, TLE::device; TLECompilerTargets:
# TLE::TLEDialect, TLE::TLEToLLVM, TLE::TLEGPUToEmu, TLE::TLECompiler,
# TLE::bundle; TLEToolsTargets: TLE::tlerun, TLE::tlec, TLE::tle-opt) and
# tle.pc for pkg-config. Each export set is installed with the component
# its files are in (Development for the libraries' sets, Tools for the
# tools'), so that a split install (--component Runtime, then Development)
# gives a package whose every target's files exist. The version is
# project()'s. Included last by the top-level CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(TLE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/TLE)

install(EXPORT TLETargets NAMESPACE TLE:: DESTINATION ${TLE_INSTALL_CMAKEDIR}
  COMPONENT Development)
install(EXPORT TLEToolsTargets NAMESPACE TLE::
  DESTINATION ${TLE_INSTALL_CMAKEDIR} COMPONENT Tools)
if(TLE_ENABLE_COMPILER)
  install(EXPORT TLECompilerTargets NAMESPACE TLE::
    DESTINATION ${TLE_INSTALL_CMAKEDIR} COMPONENT Development)
  # The MLIR the libraries were built against, for the config's
  # find_dependency.
  set(TLE_PACKAGE_MLIR_DIR ${MLIR_DIR})
endif()
if(TLE_ENABLE_BITCODE)
  set(TLE_PACKAGE_HAS_BITCODE ON)
endif()

# PACKAGE_* variables make the paths relative to the installed config file,
# so the tree can be installed anywhere (cmake --install --prefix P).
set(TLE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
set(TLE_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
configure_package_config_file(cmake/TLEConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/TLEConfig.cmake
  INSTALL_DESTINATION ${TLE_INSTALL_CMAKEDIR}
  PATH_VARS TLE_INSTALL_INCLUDEDIR TLE_INSTALL_LIBDIR)
# 0.x releases promise nothing across minor versions: SameMinorVersion until
# 1.0, then SameMajorVersion (the SONAME's rule).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(compatibility SameMinorVersion)
else()
  set(compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/package/TLEConfigVersion.cmake
  COMPATIBILITY ${compatibility})
install(FILES ${PROJECT_BINARY_DIR}/package/TLEConfig.cmake
  ${PROJECT_BINARY_DIR}/package/TLEConfigVersion.cmake
  DESTINATION ${TLE_INSTALL_CMAKEDIR} COMPONENT Development)

# tle.pc finds its prefix from its own place (${pcfiledir}), for the same
# reason.
file(RELATIVE_PATH TLE_PC_TO_PREFIX
  ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TLE_PC_TO_PREFIX "${TLE_PC_TO_PREFIX}")
configure_file(cmake/tle.pc.in ${PROJECT_BINARY_DIR}/package/tle.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/tle.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
