# tensoracle_add_layer(NAME SOURCES ... [DEPS ...] [PRIVATE_DEPS ...]) — the static library
# tensoracle_<NAME> for one layer of src/ (src/CMakeLists.txt lists their order). Every layer's
# library joins the umbrella target `tensoracle` and the installed export set (cmake/TensoracleInstall.cmake),
# as tensoracle::<NAME>.
function(tensoracle_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(tensoracle_${name} STATIC ${ARG_SOURCES})
  target_include_directories(tensoracle_${name}
    PUBLIC  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  # The warnings are for building tensoracle, not for its users: kept out of the export.
  target_link_libraries(tensoracle_${name} PUBLIC ${ARG_DEPS}
                        PRIVATE $<BUILD_INTERFACE:tensoracle_warnings> ${ARG_PRIVATE_DEPS})
  set_target_properties(tensoracle_${name} PROPERTIES EXPORT_NAME ${name})
  set_property(GLOBAL APPEND PROPERTY TENSORACLE_LAYER_TARGETS tensoracle_${name})
endfunction()
