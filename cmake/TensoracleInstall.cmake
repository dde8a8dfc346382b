# `cmake --install BUILD --prefix P` makes P an SDK for model packages and plugin libraries built as
# separate projects (docs/plugins.md, examples/sdk_consumer/):
#   P/include/tensoracle/            the public headers (version.h included)
#   P/lib/libtensoracle_<layer>.a    the layers' static libraries: a model package links them
#                                    privately (tensoracle::tensoracle), as the in-tree examples do
#   P/bin/tensoracle                 the CLI (tensoracle::cli), which also compiles plugin bundles
#   P/lib/libtensoracle_plugins.so   the bundled plugin library, with its parameter headers in
#                                    P/include/tensoracle_plugins/ (installed by plugins/CMakeLists.txt)
#   P/lib/cmake/tensoracle/          tensoracleConfig.cmake + version file, the exported targets
#                                    (tensoracle::tensoracle, the header-only tensoracle::plugin_sdk,
#                                    tensoracle::cli, tensoracle::<layer>) and TensoraclePlugin.cmake
# Every path in the installed config is relative to P (configure_package_config_file), so P can move.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TENSORACLE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tensoracle")

get_property(tensoracle_layer_targets GLOBAL PROPERTY TENSORACLE_LAYER_TARGETS)
set(tensoracle_install_targets tensoracle tensoracle_plugin_sdk tensoracle_cli ${tensoracle_layer_targets})
if(TARGET tensoracle_onnx_proto)
  list(APPEND tensoracle_install_targets tensoracle_onnx_proto)
endif()
install(TARGETS ${tensoracle_install_targets}
  EXPORT tensoracleTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tensoracle DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/tensoracle/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tensoracle)
install(EXPORT tensoracleTargets NAMESPACE tensoracle:: DESTINATION ${TENSORACLE_INSTALL_CMAKEDIR})

# What the config must find again for the static layers' own dependencies (the exported targets
# name them): it knows which optional parts this build has.
set(TENSORACLE_INSTALLED_WITH_ONNX ${TENSORACLE_BUILD_ONNX})
set(TENSORACLE_INSTALLED_WITH_CUDA ${TENSORACLE_BUILD_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tensoracleConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tensoracleConfig.cmake INSTALL_DESTINATION ${TENSORACLE_INSTALL_CMAKEDIR})
# A model package must be rebuilt with the tensoracle it runs with (the loader checks the exact
# version, docs/model-packages.md), so only the same version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensoracleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/tensoracleConfig.cmake ${PROJECT_BINARY_DIR}/tensoracleConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TensoraclePlugin.cmake
        DESTINATION ${TENSORACLE_INSTALL_CMAKEDIR})
