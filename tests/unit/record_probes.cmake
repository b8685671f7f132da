# collectors/kpt_record_merge.c's reader of the runs' calibration probes
# (kpt_record_probes_read): linked with the recorder's CUDA-free files as
# kptprof is.
list(APPEND KPT_UNIT_CUSTOM test_record_probes)
if(CMOCKA_FOUND)
  add_executable(test_record_probes ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_record_probes.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_ab.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_record.c ${PROJECT_SOURCE_DIR}/collectors/kpt_record_merge.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_record_project.c ${PROJECT_SOURCE_DIR}/collectors/kpt_devprobe.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_path.c ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c)
  target_include_directories(test_record_probes PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
  target_compile_definitions(test_record_probes PRIVATE KPT_VERSION="${PROJECT_VERSION}")
  target_link_libraries(test_record_probes PRIVATE ${kpt_cpu_libs} PkgConfig::CMOCKA dl m)
  add_test(NAME unit.test_record_probes COMMAND test_record_probes)
  set_tests_properties(unit.test_record_probes PROPERTIES LABELS unit TIMEOUT 60)
endif()
