# cuDNN (library + headers) and the cudnn-frontend headers (PyPI nvidia-cudnn-frontend, unpacked
# into .deps/cudnn-frontend by scripts/setup) as one target, tensoracle::cudnn. The CUDA backend
# needs both; without them a CUDA build stops here with what is missing and how to get it.
find_library(TENSORACLE_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
find_path(TENSORACLE_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
find_path(TENSORACLE_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
  HINTS ${PROJECT_SOURCE_DIR}/.deps/cudnn-frontend/include)
if(NOT TENSORACLE_CUDNN_LIBRARY OR NOT TENSORACLE_CUDNN_INCLUDE_DIR)
  message(FATAL_ERROR "TENSORACLE_BUILD_CUDA: cuDNN not found (library: ${TENSORACLE_CUDNN_LIBRARY}, "
                      "cudnn.h: ${TENSORACLE_CUDNN_INCLUDE_DIR}); install cuDNN 9 or set TENSORACLE_CUDNN_LIBRARY "
                      "and TENSORACLE_CUDNN_INCLUDE_DIR")
endif()
if(NOT TENSORACLE_CUDNN_FRONTEND_INCLUDE_DIR)
  message(FATAL_ERROR "TENSORACLE_BUILD_CUDA: cudnn_frontend.h not found; run scripts/setup (it unpacks the "
                      "nvidia-cudnn-frontend headers into .deps/cudnn-frontend) or set TENSORACLE_CUDNN_FRONTEND_INCLUDE_DIR")
endif()
add_library(tensoracle_cudnn INTERFACE)
add_library(tensoracle::cudnn ALIAS tensoracle_cudnn)
target_include_directories(tensoracle_cudnn SYSTEM INTERFACE ${TENSORACLE_CUDNN_INCLUDE_DIR} ${TENSORACLE_CUDNN_FRONTEND_INCLUDE_DIR})
# The frontend compiles some of its own engines at run time with NVRTC.
target_link_libraries(tensoracle_cudnn INTERFACE ${TENSORACLE_CUDNN_LIBRARY} CUDA::nvrtc)
# The frontend's JSON helpers would bring their own copy of nlohmann/json; plans are recorded by
# our own code instead.
target_compile_definitions(tensoracle_cudnn INTERFACE CUDNN_FRONTEND_SKIP_JSON_LIB=1)
