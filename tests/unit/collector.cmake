# Unit tests of the collector that need the CUPTI headers (not its
# libraries): built here, skipped by the generic loop.
list(APPEND KPT_UNIT_CUSTOM test_cupti_convert)
if(KPT_HAVE_CUDA AND CMOCKA_FOUND AND TARGET CUDA::cupti)
  add_executable(test_cupti_convert ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_cupti_convert.c
    ${PROJECT_SOURCE_DIR}/collectors/cupti/kpt_cupti_convert.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_path.c)
  target_include_directories(test_cupti_convert PRIVATE ${PROJECT_SOURCE_DIR}/collectors ${PROJECT_SOURCE_DIR}/collectors/cupti)
  # Headers only: the conversion code calls no CUPTI function.
  get_target_property(kpt_cupti_inc CUDA::cupti INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(test_cupti_convert SYSTEM PRIVATE ${kpt_cupti_inc} ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(test_cupti_convert PRIVATE ${kpt_cpu_libs} PkgConfig::CMOCKA)
  add_test(NAME unit.test_cupti_convert COMMAND test_cupti_convert)
  set_tests_properties(unit.test_cupti_convert PROPERTIES LABELS unit TIMEOUT 60)
endif()
