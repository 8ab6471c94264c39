# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What the Python wheel (tle-triton, python/pyproject.toml, built by
# scikit-build-core) takes from the build: install component Python, whose
# prefix is the package folder `tle/` in the wheel. The host library under
# the name the ctypes binding loads (lib/libtle.so), the device bitcode
# (lib/libtle_device.bc) that Triton kernels link, the license, and
# tle/_version.py with project()'s version, so that the package's version
# is derived like every other. python/tle/_paths.py finds them there first.
configure_file(${PROJECT_SOURCE_DIR}/cmake/_version.py.in
  ${PROJECT_BINARY_DIR}/python/_version.py @ONLY)
# EXCLUDE_FROM_ALL: only the wheel's build installs this component
# (install.components in python/pyproject.toml); a plain `cmake --install`
# would otherwise write _version.py and LICENSE into the prefix's root.
install(FILES ${PROJECT_BINARY_DIR}/python/_version.py
  ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION . COMPONENT Python
  EXCLUDE_FROM_ALL)
install(FILES $<TARGET_FILE:tle> DESTINATION lib RENAME libtle.so
  COMPONENT Python EXCLUDE_FROM_ALL)
if(TLE_ENABLE_BITCODE)
  install(FILES ${TLE_DEVICE_BC} DESTINATION lib COMPONENT Python
    EXCLUDE_FROM_ALL)
endif()
