# The ONNX importer's schema: onnx-ml.proto from the PyPI onnx wheel (scripts/setup copies it to
# .deps/onnx; scripts/fetch-gpu-deps puts it in the sysroot's onnx/), compiled with Debian's protoc
# into tensoracle_onnx_proto. TENSORACLE_BUILD_ONNX defaults to ON when protobuf and the proto are
# both found, and says what is missing otherwise.
find_package(Protobuf QUIET)
set(TENSORACLE_ONNX_PROTO "${PROJECT_SOURCE_DIR}/.deps/onnx/onnx-ml.proto" CACHE FILEPATH
    "onnx-ml.proto from the onnx wheel (scripts/setup copies it here)")
set(tensoracle_onnx_missing "")
if(NOT Protobuf_FOUND OR NOT Protobuf_PROTOC_EXECUTABLE)
  string(APPEND tensoracle_onnx_missing " protobuf (Debian: libprotobuf-dev protobuf-compiler)")
endif()
if(NOT EXISTS "${TENSORACLE_ONNX_PROTO}")
  string(APPEND tensoracle_onnx_missing " ${TENSORACLE_ONNX_PROTO}")
endif()
if(tensoracle_onnx_missing STREQUAL "")
  set(tensoracle_onnx_default ON)
else()
  set(tensoracle_onnx_default OFF)
endif()
option(TENSORACLE_BUILD_ONNX "Build the ONNX importer (needs protobuf and onnx-ml.proto; scripts/setup installs both)"
       ${tensoracle_onnx_default})
if(TENSORACLE_BUILD_ONNX AND NOT tensoracle_onnx_missing STREQUAL "")
  message(FATAL_ERROR "TENSORACLE_BUILD_ONNX is ON but these are missing:${tensoracle_onnx_missing}; run scripts/setup")
elseif(NOT TENSORACLE_BUILD_ONNX)
  message(STATUS "ONNX import: off (missing:${tensoracle_onnx_missing}; scripts/setup installs them)")
  return()
endif()
message(STATUS "ONNX import: on (protobuf ${Protobuf_VERSION}, ${TENSORACLE_ONNX_PROTO})")

set(tensoracle_onnx_generated "${PROJECT_BINARY_DIR}/generated/onnx")
get_filename_component(tensoracle_onnx_proto_dir "${TENSORACLE_ONNX_PROTO}" DIRECTORY)
add_custom_command(
  OUTPUT "${tensoracle_onnx_generated}/onnx-ml.pb.cc" "${tensoracle_onnx_generated}/onnx-ml.pb.h"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${tensoracle_onnx_generated}"
  COMMAND ${Protobuf_PROTOC_EXECUTABLE} --cpp_out=${tensoracle_onnx_generated} -I "${tensoracle_onnx_proto_dir}"
          "${TENSORACLE_ONNX_PROTO}"
  DEPENDS "${TENSORACLE_ONNX_PROTO}"
  COMMENT "protoc: onnx-ml.proto")
add_library(tensoracle_onnx_proto STATIC "${tensoracle_onnx_generated}/onnx-ml.pb.cc")
# The generated code is protoc's: its warnings are not this project's.
target_compile_options(tensoracle_onnx_proto PRIVATE -w)
target_include_directories(tensoracle_onnx_proto SYSTEM PUBLIC "$<BUILD_INTERFACE:${tensoracle_onnx_generated}>")
# Installed with the layers (the onnx layer links it); its headers stay in the build tree.
set_target_properties(tensoracle_onnx_proto PROPERTIES EXPORT_NAME onnx_proto)
target_link_libraries(tensoracle_onnx_proto PUBLIC protobuf::libprotobuf-lite)
