# Warnings for tensoracle's own targets (not for dependencies).
add_library(tensoracle_warnings INTERFACE)
target_compile_options(tensoracle_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough>)
