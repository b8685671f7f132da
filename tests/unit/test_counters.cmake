# test_counters makes synthetic recordings in-process (kpt_synth), so it is
# built here rather than by the generic unit loop.
include(${PROJECT_SOURCE_DIR}/tests/synth/synth.cmake)
if(CMOCKA_FOUND)
  list(APPEND KPT_UNIT_CUSTOM test_counters)
  add_executable(test_counters ${CMAKE_CURRENT_LIST_DIR}/test_counters.c)
  get_property(kpt_counters_test_libs GLOBAL PROPERTY KPT_CPU_LIBS)
  target_link_libraries(test_counters PRIVATE ${kpt_counters_test_libs} kpt_synth PkgConfig::CMOCKA)
  target_compile_definitions(test_counters PRIVATE KPT_SRC_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME unit.test_counters COMMAND test_counters)
  set_tests_properties(unit.test_counters PROPERTIES LABELS unit TIMEOUT 300)
endif()
