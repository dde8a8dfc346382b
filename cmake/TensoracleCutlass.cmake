# CUTLASS headers (PyPI nvidia-cutlass, unpacked into .deps/cutlass by scripts/setup) as
# tensoracle::cutlass. The CUDA backend's own quantized GEMMs (src/backends/cuda/cutlass/) are built
# from them; without them a CUDA build stops here with what is missing and how to get it.
find_path(TENSORACLE_CUTLASS_INCLUDE_DIR cutlass/cutlass.h HINTS ${PROJECT_SOURCE_DIR}/.deps/cutlass/include)
if(NOT TENSORACLE_CUTLASS_INCLUDE_DIR)
  message(FATAL_ERROR "TENSORACLE_BUILD_CUDA: cutlass/cutlass.h not found; run scripts/setup (it unpacks the "
                      "nvidia-cutlass headers into .deps/cutlass) or set TENSORACLE_CUTLASS_INCLUDE_DIR")
endif()
add_library(tensoracle_cutlass INTERFACE)
add_library(tensoracle::cutlass ALIAS tensoracle_cutlass)
target_include_directories(tensoracle_cutlass SYSTEM INTERFACE ${TENSORACLE_CUTLASS_INCLUDE_DIR})
