# How the project's shared libraries are built. The core and every built-in backend are
# shared libraries, so a program and the plugins it loads share one copy of each (one
# BackendRegistry per process). Sonames carry major.minor: before 1.0 a minor release
# may change the ABI.
set(LLAMA_SOVERSION "${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")

# llama_shared_library(TARGET OUTPUT_NAME): versioned soname (libOUTPUT_NAME.so.0.4);
# no semantic interposition, so calls inside the library stay direct and inlinable as
# they were in a static archive; every symbol resolved at link time (-z defs) except
# under sanitizers, whose runtime the program brings.
function(llama_shared_library target output_name)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${output_name}
                        VERSION ${PROJECT_VERSION} SOVERSION ${LLAMA_SOVERSION})
  target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  if(NOT LLAMA_SANITIZE)
    target_link_options(${target} PRIVATE LINKER:-z,defs)
  endif()
endfunction()

# llama_add_backend(NAME SOURCES...): the built-in backend NAME as the shared library
# libllama-backend-NAME.so, target llama_backend_NAME, exported as LlamaBackends::NAME.
# Its translation units register with a static BackendRegistrar when the library loads,
# so a program links it without referencing any symbol: --no-as-needed keeps it.
function(llama_add_backend name)
  set(target llama_backend_${name})
  add_library(${target} SHARED ${ARGN})
  llama_shared_library(${target} llama-backend-${name})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_link_libraries(${target} PUBLIC llama_core)
  target_link_options(${target} INTERFACE LINKER:--no-as-needed)
  set_property(GLOBAL APPEND PROPERTY LLAMA_BUILTIN_BACKENDS ${target})
endfunction()
