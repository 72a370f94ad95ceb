# Precompiled headers, for the tests: every test source parses Catch2's single
# header and nlohmann-json, seconds a source. One target builds the header and
# the others reuse it (docs/building.md has the measurements). The libraries and
# apps have none: a forced include changed what an unqualified call finds in the
# core (std::quoted through <iomanip>), and for the apps it saved nothing measurable.
#
# GCC only: a header GCC precompiled for one target serves targets that add
# definitions of their own, where clang refuses it. -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON
# turns them off; scripts/test-sanitized.sh does, so CI also compiles every test
# source without them and a missing #include still fails there.
set(LLAMA_PCH OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT CMAKE_DISABLE_PRECOMPILE_HEADERS)
  set(LLAMA_PCH ON)
endif()

# llama_precompile(TARGET HEADER [SKIP source...]): TARGET builds HEADER's
# precompiled form; the SKIP sources compile without it.
function(llama_precompile target header)
  cmake_parse_arguments(ARG "" "" "SKIP" ${ARGN})
  if(NOT LLAMA_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${header})
  if(ARG_SKIP)
    set_source_files_properties(${ARG_SKIP} TARGET_DIRECTORY ${target}
                                PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()

# llama_reuse_precompiled(TARGET FROM): TARGET's sources use FROM's precompiled
# header. TARGET must compile with FROM's flags and at least its definitions.
function(llama_reuse_precompiled target from)
  if(LLAMA_PCH)
    target_precompile_headers(${target} REUSE_FROM ${from})
  endif()
endfunction()
