# Every third-party dependency is found here, and only here. scripts/setup installs them
# (Debian packages; the Python ones into .venv).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# libzip via pkg-config: Debian's CMake config for it requires the zipcmp tools package.
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
find_package(tomlplusplus 3 REQUIRED)
# nvml.h alone (PyPI nvidia-nvml-dev, unpacked into .deps/nvml by scripts/setup; a GPU machine finds
# it in the sysroot of scripts/fetch-gpu-deps): the timing harness opens NVML with dlopen at run time.
find_path(TENSORACLE_NVML_INCLUDE_DIR nvml.h HINTS ${PROJECT_SOURCE_DIR}/.deps/nvml/include)
if(NOT TENSORACLE_NVML_INCLUDE_DIR)
  message(FATAL_ERROR "nvml.h not found: run scripts/setup (it unpacks the nvidia-nvml-dev header into .deps/nvml) "
                      "or set TENSORACLE_NVML_INCLUDE_DIR")
endif()
if(TENSORACLE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(TENSORACLE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
if(TENSORACLE_BUILD_PYTHON)
  # The interpreter that runs the build (pip's, or the one named by Python_EXECUTABLE) decides
  # the module's ABI; nanobind comes from its site-packages (PyPI; scripts/setup puts it in .venv).
  find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module OPTIONAL_COMPONENTS Development.SABIModule)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE nanobind_ROOT RESULT_VARIABLE nanobind_found)
  if(NOT nanobind_found EQUAL 0)
    message(FATAL_ERROR "TENSORACLE_BUILD_PYTHON needs nanobind for ${Python_EXECUTABLE} "
                        "(pip install nanobind, or scripts/setup for .venv)")
  endif()
  find_package(nanobind CONFIG REQUIRED)
endif()
if(TENSORACLE_BUILD_CUDA)
  enable_language(CUDA)
  set(CMAKE_CUDA_ARCHITECTURES ${TENSORACLE_CUDA_ARCHS})
  find_package(CUDAToolkit REQUIRED)
  include(TensoracleCudnn)
  include(TensoracleCutlass)
endif()
