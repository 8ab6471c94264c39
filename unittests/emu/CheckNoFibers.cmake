# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fails unless every function that libtle LIB exports from an emulator
# source built only with fibers (the objects OBJS other than those of BOTH,
# TLE_EMU_SHARED_SOURCES, which both builds compile) is also defined by
# NOFIBERS, the object of NoFibers.cpp that replaces them where
# Boost.Context is missing (the GPU machines' CUDA build). A symbol missing
# there fails no CPU build (libtle links with undefined symbols allowed)
# but breaks the link of every tool that calls it in the build without
# fibers.
cmake_policy(SET CMP0057 NEW)
function(defined_symbols out)
  set(all "")
  foreach(obj IN LISTS ARGN)
    execute_process(COMMAND ${NM} --defined-only --extern-only ${obj}
      OUTPUT_VARIABLE text RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${NM} failed on ${obj}")
    endif()
    string(REGEX MATCHALL "[ \t][TDBRVW] [^\n]+" rows "${text}")
    foreach(row IN LISTS rows)
      string(REGEX REPLACE "^[ \t][TDBRVW] " "" sym "${row}")
      list(APPEND all "${sym}")
    endforeach()
  endforeach()
  set(${out} "${all}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${NM} -D --defined-only ${LIB}
  OUTPUT_VARIABLE text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D failed on ${LIB}")
endif()
string(REGEX MATCHALL "[ \t][TW] [^\n]+" rows "${text}")
set(exported "")
foreach(row IN LISTS rows)
  string(REGEX REPLACE "^[ \t][TW] " "" sym "${row}")
  list(APPEND exported "${sym}")
endforeach()

string(REPLACE ".cpp" "" BOTH "${BOTH}")
set(fiberOnly "")
foreach(obj IN LISTS OBJS)
  get_filename_component(name ${obj} NAME)
  string(REGEX REPLACE "\\.cpp\\.o(bj)?$" "" name "${name}")
  if(NOT name IN_LIST BOTH)
    list(APPEND fiberOnly ${obj})
  endif()
endforeach()
list(LENGTH fiberOnly n)
if(n EQUAL 0)
  message(FATAL_ERROR "no fiber-only emulator objects among ${OBJS}")
endif()
defined_symbols(fiberDefs ${fiberOnly})
defined_symbols(replaced ${NOFIBERS})

set(need "")
foreach(sym IN LISTS fiberDefs)
  if(sym IN_LIST exported)
    list(APPEND need ${sym})
  endif()
endforeach()
list(LENGTH need n)
if(n EQUAL 0)
  message(FATAL_ERROR "libtle exports nothing from the fiber-only objects")
endif()
set(missing "")
foreach(sym IN LISTS need)
  if(NOT sym IN_LIST replaced)
    list(APPEND missing ${sym})
  endif()
endforeach()
if(missing)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "exported by libtle from the emulator's fiber-only "
    "sources but not defined by NoFibers.cpp (the build without "
    "Boost.Context would fail to link its callers):\n  ${missing}")
endif()
message(STATUS "${n} exported emulator symbols, all defined without fibers")
