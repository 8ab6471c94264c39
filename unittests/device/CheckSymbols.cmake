# Fails unless every symbol in SYMBOLS (comma-separated) is a defined,
# external function of the bitcode BC, as listed by llvm-nm NM.
execute_process(COMMAND ${NM} --defined-only --extern-only ${BC}
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llvm-nm failed on ${BC}")
endif()
string(REPLACE "," ";" symbols "${SYMBOLS}")
set(missing "")
foreach(sym IN LISTS symbols)
  if(NOT out MATCHES "[ \t]T ${sym}\n")
    list(APPEND missing ${sym})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "not exported by ${BC}: ${missing}")
endif()
list(LENGTH symbols n)
message(STATUS "all ${n} ABI symbols exported")
