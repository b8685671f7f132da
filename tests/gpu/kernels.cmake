# Tests of the memory and FP8 kernels and the kpt-workloads runner (issue 4).
#   unit.test_kpt_ref        the plain-C references (no CUDA needed; built here
#                            from kernels/ref/ because that folder is only
#                            added with a CUDA toolkit)
#   cli.kernels_list         kpt-workloads --list / kptprof workloads (no GPU)
#   gpu.kernels_check        every kernel at awkward sizes vs its CPU reference
#   gpu.kernels_check_suites the quick, default and seed suites' memory and FP8 checks
#   gpu.kernels_run          timing runs, --cold, --plant makes real work
#   gpu.kernels_paths        on a 9.0 GPU, the sm_90a kernels are what runs
#                            (recorded with kptprof, per workload range)
list(APPEND KPT_UNIT_CUSTOM test_kpt_ref)
if(CMOCKA_FOUND)
  add_executable(test_kpt_ref ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_kpt_ref.c
    ${PROJECT_SOURCE_DIR}/kernels/ref/kpt_ref_fp8.c ${PROJECT_SOURCE_DIR}/kernels/ref/kpt_ref_memory.c)
  target_include_directories(test_kpt_ref PRIVATE ${PROJECT_SOURCE_DIR}/kernels/ref)
  target_link_libraries(test_kpt_ref PRIVATE PkgConfig::CMOCKA m)
  add_test(NAME unit.test_kpt_ref COMMAND test_kpt_ref)
  set_tests_properties(unit.test_kpt_ref PROPERTIES LABELS unit TIMEOUT 60)
endif()
if(TARGET kpt-workloads)
  set(kpt_kw $<TARGET_FILE:kpt-workloads>)
  add_test(NAME cli.kernels_list COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/kernels_list.sh)
  set_tests_properties(cli.kernels_list PROPERTIES LABELS cli TIMEOUT 60 SKIP_RETURN_CODE 77
    ENVIRONMENT "KW=${kpt_kw};KPTPROF=$<TARGET_FILE:kptprof>")
  add_test(NAME gpu.kernels_check COMMAND ${kpt_kw} --check --suite check)
  add_test(NAME gpu.kernels_check_suites COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/kernels_check_suites.sh)
  add_test(NAME gpu.kernels_run COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/kernels_run.sh)
  add_test(NAME gpu.kernels_paths COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/kernels_paths.sh)
  set_tests_properties(gpu.kernels_run gpu.kernels_check_suites PROPERTIES ENVIRONMENT "KW=${kpt_kw}")
  set_tests_properties(gpu.kernels_paths PROPERTIES ENVIRONMENT "KW=${kpt_kw};KPTPROF=$<TARGET_FILE:kptprof>")
  set_tests_properties(gpu.kernels_check gpu.kernels_check_suites gpu.kernels_run gpu.kernels_paths PROPERTIES
    LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
