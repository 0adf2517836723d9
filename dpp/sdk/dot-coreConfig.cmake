# dot-core's CMake package: find_package(dot-core REQUIRED COMPONENTS plugin)
# gives the imported target dot-core::plugin, the C++ plugin runtime
# (docs/writing-plugins.md). plugin is the only component; asking for
# another one fails as find_package says a missing component should.
include(CMakeFindDependencyMacro)

foreach(dot_core_component IN LISTS ${CMAKE_FIND_PACKAGE_NAME}_FIND_COMPONENTS)
  if(NOT dot_core_component STREQUAL "plugin")
    set(${CMAKE_FIND_PACKAGE_NAME}_${dot_core_component}_FOUND FALSE)
    if(${CMAKE_FIND_PACKAGE_NAME}_FIND_REQUIRED_${dot_core_component})
      set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
      set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
        "dot-core has no component \"${dot_core_component}\" (it has: plugin)")
      return()
    endif()
  endif()
endforeach()

# What the runtime's objects use: simdjson (strict JSON), libcrypto (SHA-256),
# linked statically as dot-core's own plugins link it.
find_dependency(simdjson)
set(OPENSSL_USE_STATIC_LIBS TRUE)
find_dependency(OpenSSL COMPONENTS Crypto)

include(${CMAKE_CURRENT_LIST_DIR}/dot-core-plugin-targets.cmake)
set(${CMAKE_FIND_PACKAGE_NAME}_plugin_FOUND TRUE)
