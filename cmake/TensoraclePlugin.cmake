# tensoracle_add_cubin_plugin(NAME
#     SOURCES <host .cpp> ...             the plugin classes and TENSORACLE_PLUGIN_LIBRARY(...)
#     KERNELS <.cu> ...                   the kernels, compiled into the cubin bundle, not the library
#     ARCHITECTURES sm_90 ...             one cubin per kernel source and architecture
#     [BUNDLE_NAME name] [BUNDLE_VERSION v]   recorded in manifest.json (default: NAME, PROJECT_VERSION or 0)
#     [DECLARATION plugin.json]           also check, once the bundle is compiled, that it holds every
#                                         kernel this declaration needs (fails the build otherwise)
#     [NVCC_FLAGS flag ...])              extra nvcc flags for every cubin
#
# Builds two things side by side in the current binary directory:
#   lib<NAME>.so      the plugin library: a module with hidden visibility, so only its entry point
#                     (tensoracle_register_plugins_v1) is exported; it compiles against the header-only
#                     tensoracle::plugin_sdk and links no tensoracle code
#   <NAME>_bundle/    its cubin bundle, compiled by `tensoracle bundle compile` (docs/bundles.md):
#                     manifest.json and <arch>/<kernel source stem>.cubin
# The bundle's directory is the target's TENSORACLE_BUNDLE_DIR property (for install(DIRECTORY)).
# `tensoracle bundle inspect <NAME>_bundle --plugin lib<NAME>.so` checks the library's declared kernels
# against it. Works in tensoracle's own tree and, after find_package(tensoracle), in any project; the
# bundle compiler needs nvcc (found as docs/bundles.md says, e.g. $CUDA_HOME/bin/nvcc), not a GPU.
function(tensoracle_add_cubin_plugin name)
  cmake_parse_arguments(ARG "" "BUNDLE_NAME;BUNDLE_VERSION;DECLARATION" "SOURCES;KERNELS;ARCHITECTURES;NVCC_FLAGS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tensoracle_add_cubin_plugin(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required IN ITEMS SOURCES KERNELS ARCHITECTURES)
    if(NOT ARG_${required})
      message(FATAL_ERROR "tensoracle_add_cubin_plugin(${name}): ${required} is required")
    endif()
  endforeach()
  # The CLI of the tree being built, or of the installed SDK.
  if(TARGET tensoracle::cli)
    set(cli tensoracle::cli)
  else()
    message(FATAL_ERROR "tensoracle_add_cubin_plugin(${name}): the tensoracle CLI target (tensoracle::cli) is not "
                        "defined; find_package(tensoracle CONFIG REQUIRED) first")
  endif()
  if(NOT ARG_BUNDLE_NAME)
    set(ARG_BUNDLE_NAME ${name})
  endif()
  if(NOT ARG_BUNDLE_VERSION)
    set(ARG_BUNDLE_VERSION "${PROJECT_VERSION}")
    if(NOT ARG_BUNDLE_VERSION)
      set(ARG_BUNDLE_VERSION 0)
    endif()
  endif()

  set(bundle_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}_bundle")
  set(sources "")
  set(source_args "")
  foreach(kernel IN LISTS ARG_KERNELS)
    get_filename_component(kernel "${kernel}" ABSOLUTE)
    list(APPEND sources "${kernel}")
    list(APPEND source_args --src "${kernel}")
  endforeach()
  list(JOIN ARG_ARCHITECTURES "," archs)
  set(extra "")
  if(ARG_NVCC_FLAGS)
    set(extra -- ${ARG_NVCC_FLAGS})
  endif()
  # One nvcc at a time: the build tool already runs other compiles beside this one.
  add_custom_command(
    OUTPUT "${bundle_dir}/manifest.json"
    COMMAND $<TARGET_FILE:${cli}> bundle compile --name ${ARG_BUNDLE_NAME} --version ${ARG_BUNDLE_VERSION}
            ${source_args} --arch ${archs} --out "${bundle_dir}" -j 1 ${extra}
    DEPENDS ${sources} $<TARGET_FILE:${cli}>
    COMMENT "Compiling the cubin bundle of ${name} for ${archs}"
    VERBATIM)
  set(bundle_outputs "${bundle_dir}/manifest.json")
  if(ARG_DECLARATION)
    # A stamp written only when the check passes, so a failed check fails every build until fixed
    # (the bundle itself was written and is up to date).
    get_filename_component(declaration "${ARG_DECLARATION}" ABSOLUTE)
    set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${name}_bundle.checked")
    add_custom_command(
      OUTPUT "${stamp}"
      COMMAND $<TARGET_FILE:${cli}> bundle inspect "${bundle_dir}" --plugin "${declaration}"
      COMMAND ${CMAKE_COMMAND} -E touch "${stamp}"
      DEPENDS "${bundle_dir}/manifest.json" "${declaration}" $<TARGET_FILE:${cli}>
      COMMENT "Checking the cubin bundle of ${name} against ${ARG_DECLARATION}"
      VERBATIM)
    list(APPEND bundle_outputs "${stamp}")
  endif()
  # Not named like the bundle directory: Ninja would take the directory for this target.
  add_custom_target(${name}_compile_bundle DEPENDS ${bundle_outputs})

  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE tensoracle::plugin_sdk)
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    TENSORACLE_BUNDLE_DIR "${bundle_dir}")
  # Building the library builds its bundle: the two ship together.
  add_dependencies(${name} ${name}_compile_bundle)
endfunction()
