# What `cmake --install` puts under the prefix: the public headers, the core and the
# built-in backends (shared libraries), the apps (each app's CMakeLists.txt has its own
# install(TARGETS) line), the CMake package LlamaBackends (targets LlamaBackends::core,
# ::plugin and one per built-in backend) and the pkg-config file llama-backends.pc.
include(CMakePackageConfigHelpers)

set(LLAMA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/LlamaBackends)
get_property(builtin_backends GLOBAL PROPERTY LLAMA_BUILTIN_BACKENDS)
set(LLAMA_EXPORTED_BACKENDS "")
set(LLAMA_PC_BACKEND_LIBS "-Wl,--no-as-needed")
foreach(backend ${builtin_backends})
  get_target_property(name ${backend} EXPORT_NAME)
  get_target_property(output ${backend} OUTPUT_NAME)
  list(APPEND LLAMA_EXPORTED_BACKENDS ${name})
  string(APPEND LLAMA_PC_BACKEND_LIBS " -l${output}")
endforeach()

install(TARGETS llama_core llama_plugin_sdk ${builtin_backends} EXPORT LlamaBackendsTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Every public header: a new one under common/include/llama/ needs no line here.
install(DIRECTORY common/include/llama ${PROJECT_BINARY_DIR}/generated/include/llama
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT LlamaBackendsTargets NAMESPACE LlamaBackends:: DESTINATION ${LLAMA_CMAKE_DIR})

configure_package_config_file(cmake/LlamaBackendsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/LlamaBackendsConfig.cmake INSTALL_DESTINATION ${LLAMA_CMAKE_DIR})
# Before 1.0 a minor release may change the ABI: 0.4 accepts 0.4.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/LlamaBackendsConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/LlamaBackendsConfig.cmake
              ${PROJECT_BINARY_DIR}/LlamaBackendsConfigVersion.cmake
        DESTINATION ${LLAMA_CMAKE_DIR})

# pkg-config: relocatable (the prefix is found from the .pc file's own directory), so
# `cmake --install --prefix DIR` needs no reconfigure.
file(RELATIVE_PATH LLAMA_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" LLAMA_PC_TO_PREFIX "${LLAMA_PC_TO_PREFIX}")
# A sanitized build's libraries need the sanitizer runtime in the program too.
set(LLAMA_PC_LINK_FLAGS "")
if(LLAMA_SANITIZE)
  set(LLAMA_PC_LINK_FLAGS " -fsanitize=${LLAMA_SANITIZE}")
endif()
configure_file(cmake/llama-backends.pc.in ${PROJECT_BINARY_DIR}/llama-backends.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/llama-backends.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
