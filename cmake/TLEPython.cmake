# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What the Python wheel (tle-triton, python/pyproject.toml, built by
# scikit-build-core) takes from the build: install component Python, whose
# prefix is the package folder `tle/` in the wheel. The host library under
# the name the ctypes binding loads (lib/libtle.so), the device bitcode
# (lib/libtle_device.bc) that Triton kernels link, the license, and
# tle/_version.py with project()'s version, so that the package's version
# is derived like every other, and tle/_abi.py, the device ABI's encodings
# and rules for the front ends. python/tle/_paths.py finds the binaries
# there first.
configure_file(${PROJECT_SOURCE_DIR}/cmake/_version.py.in
  ${PROJECT_BINARY_DIR}/python/_version.py @ONLY)

# tle/_abi.py from abi.def and rules.def (python/tle/_abigen.py), written
# again whenever either changes. A source checkout generates the same text
# when it imports (tle._abigen.load), so this copy is the wheel's;
# python/tests/test_abi_module.py checks that the two agree.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(TLE_ABI_PY ${PROJECT_BINARY_DIR}/python/_abi.py)
add_custom_command(OUTPUT ${TLE_ABI_PY}
  COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/python/tle/_abigen.py
    ${TLE_DEVICE_INCLUDE_DIR}/tle/abi.def
    ${TLE_DEVICE_INCLUDE_DIR}/tle/rules.def ${TLE_ABI_PY}
  DEPENDS ${PROJECT_SOURCE_DIR}/python/tle/_abigen.py
    ${TLE_DEVICE_INCLUDE_DIR}/tle/abi.def ${TLE_DEVICE_INCLUDE_DIR}/tle/rules.def
  COMMENT "Generating tle/_abi.py from abi.def and rules.def"
  VERBATIM)
add_custom_target(tle_abi_py ALL DEPENDS ${TLE_ABI_PY})
# EXCLUDE_FROM_ALL: only the wheel's build installs this component
# (install.components in python/pyproject.toml); a plain `cmake --install`
# would otherwise write _version.py and LICENSE into the prefix's root.
install(FILES ${PROJECT_BINARY_DIR}/python/_version.py ${TLE_ABI_PY}
  ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION . COMPONENT Python
  EXCLUDE_FROM_ALL)
install(FILES $<TARGET_FILE:tle> DESTINATION lib RENAME libtle.so
  COMPONENT Python EXCLUDE_FROM_ALL)
if(TLE_ENABLE_BITCODE)
  install(FILES ${TLE_DEVICE_BC} DESTINATION lib COMPONENT Python
    EXCLUDE_FROM_ALL)
endif()
