# accord::defaults: warning flags and sanitizer build types that every target links.
# Build types: Debug, Release, RelWithDebInfo, Asan (ASan+UBSan), Tsan.
add_library(accord_defaults INTERFACE)
add_library(accord::defaults ALIAS accord_defaults)
target_compile_options(accord_defaults INTERFACE
  -Wall -Wextra -Wshadow -Wpedantic $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
  $<$<BOOL:${ACCORD_WERROR}>:-Werror>)

set(_accord_san_common "-O1 -g -fno-omit-frame-pointer")
set(CMAKE_CXX_FLAGS_ASAN "${_accord_san_common} -fsanitize=address,undefined -fno-sanitize-recover=undefined" CACHE STRING "" FORCE)
set(CMAKE_C_FLAGS_ASAN "${CMAKE_CXX_FLAGS_ASAN}" CACHE STRING "" FORCE)
set(CMAKE_EXE_LINKER_FLAGS_ASAN "-fsanitize=address,undefined" CACHE STRING "" FORCE)
set(CMAKE_SHARED_LINKER_FLAGS_ASAN "-fsanitize=address,undefined" CACHE STRING "" FORCE)
set(CMAKE_CXX_FLAGS_TSAN "${_accord_san_common} -fsanitize=thread" CACHE STRING "" FORCE)
set(CMAKE_C_FLAGS_TSAN "${CMAKE_CXX_FLAGS_TSAN}" CACHE STRING "" FORCE)
set(CMAKE_EXE_LINKER_FLAGS_TSAN "-fsanitize=thread" CACHE STRING "" FORCE)
set(CMAKE_SHARED_LINKER_FLAGS_TSAN "-fsanitize=thread" CACHE STRING "" FORCE)

# The sanitizer a plugin was built with travels in its query header (plugin_abi.h), so
# the host device can refuse a plugin whose runtime does not match the daemon's.
if(CMAKE_BUILD_TYPE STREQUAL "Asan")
  set(ACCORD_SANITIZER 1)
elseif(CMAKE_BUILD_TYPE STREQUAL "Tsan")
  set(ACCORD_SANITIZER 2)
else()
  set(ACCORD_SANITIZER 0)
endif()
target_compile_definitions(accord_defaults INTERFACE ACCORD_BUILD_SANITIZER=${ACCORD_SANITIZER})
