# The collector's CUDA-free parts (collectors/kpt_nvtx_stack.c: NVTX
# stacks and handle tables): unit tests that build on any machine.
list(APPEND KPT_UNIT_CUSTOM test_nvtx_stack)
if(CMOCKA_FOUND)
  find_package(Threads REQUIRED)
  add_executable(test_nvtx_stack ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_nvtx_stack.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_nvtx_stack.c)
  target_include_directories(test_nvtx_stack PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
  target_link_libraries(test_nvtx_stack PRIVATE PkgConfig::CMOCKA Threads::Threads)
  add_test(NAME unit.test_nvtx_stack COMMAND test_nvtx_stack)
  set_tests_properties(unit.test_nvtx_stack PROPERTIES LABELS unit TIMEOUT 60)

endif()
