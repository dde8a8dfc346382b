# tensoracle_add_layer(NAME SOURCES ... [DEPS ...]) — a static library for one layer of src/.
function(tensoracle_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(tensoracle_${name} STATIC ${ARG_SOURCES})
  target_include_directories(tensoracle_${name}
    PUBLIC  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(tensoracle_${name} PUBLIC ${ARG_DEPS} PRIVATE tensoracle_warnings ${ARG_PRIVATE_DEPS})
endfunction()
