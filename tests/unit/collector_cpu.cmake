# The collector's CUDA-free parts (collectors/kpt_nvtx_stack.c: NVTX
# stacks and handle tables; collectors/kpt_window.c: capture windows):
# unit tests that build on any machine.
list(APPEND KPT_UNIT_CUSTOM test_nvtx_stack test_window)
if(CMOCKA_FOUND)
  find_package(Threads REQUIRED)
  add_executable(test_nvtx_stack ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_nvtx_stack.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_nvtx_stack.c)
  target_include_directories(test_nvtx_stack PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
  target_link_libraries(test_nvtx_stack PRIVATE PkgConfig::CMOCKA Threads::Threads)
  add_test(NAME unit.test_nvtx_stack COMMAND test_nvtx_stack)
  set_tests_properties(unit.test_nvtx_stack PROPERTIES LABELS unit TIMEOUT 60)

  add_executable(test_window ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_window.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c)
  target_include_directories(test_window PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
  target_link_libraries(test_window PRIVATE ${kpt_cpu_libs} PkgConfig::CMOCKA m)
  add_test(NAME unit.test_window COMMAND test_window)
  set_tests_properties(unit.test_window PROPERTIES LABELS unit TIMEOUT 60)
endif()
