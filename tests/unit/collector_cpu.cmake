# The collector's CUDA-free parts (collectors/kpt_nvtx_stack.c: NVTX
# stacks and handle tables; collectors/kpt_window.c: capture windows):
# unit tests that build on any machine; test_inject_core: the collector's
# backend-neutral core (collectors/kpt_inject_core.h) under a fake backend.
list(APPEND KPT_UNIT_CUSTOM test_nvtx_stack test_window test_inject_core)
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

  add_executable(test_inject_core ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_inject_core.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_core.c ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_trace.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_path.c ${PROJECT_SOURCE_DIR}/collectors/kpt_nvtx_stack.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c)
  target_include_directories(test_inject_core PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
  target_compile_definitions(test_inject_core PRIVATE KPT_VERSION="${PROJECT_VERSION}")
  target_link_libraries(test_inject_core PRIVATE ${kpt_cpu_libs} PkgConfig::CMOCKA Threads::Threads dl)
  add_test(NAME unit.test_inject_core COMMAND test_inject_core)
  set_tests_properties(unit.test_inject_core PROPERTIES LABELS unit TIMEOUT 60)
  # the same binary on a sampled run (--on-demand): a process of its own
  add_test(NAME unit.test_inject_sampled COMMAND test_inject_core sampled)
  set_tests_properties(unit.test_inject_sampled PROPERTIES LABELS unit TIMEOUT 60)
endif()

# test_nvtx_inject: the collector's NVTX tool (collectors/kpt_nvtx_inject.c)
# under the real NVTX ABI, linked in (NVTX's static injection); nvtx_dyn_app:
# the same tool as a library NVTX loads through NVTX_INJECTION64_PATH. Both
# need the toolkit's nvtx3 headers (header-only), not a GPU nor the CUDA
# language; the core runs under a clock-only backend (nvtx_clock_tool.c).
list(APPEND KPT_UNIT_CUSTOM test_nvtx_inject)
find_path(KPT_NVTX3_INCLUDE nvtx3/nvToolsExt.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{CUDA_HOME}/include /usr/local/cuda/include)
if(CMOCKA_FOUND AND KPT_NVTX3_INCLUDE)
  set(kpt_nvtx_tool_srcs ${CMAKE_CURRENT_SOURCE_DIR}/unit/nvtx_clock_tool.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_nvtx_inject.c ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_core.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_trace.c ${PROJECT_SOURCE_DIR}/collectors/kpt_inject_path.c
    ${PROJECT_SOURCE_DIR}/collectors/kpt_nvtx_stack.c ${PROJECT_SOURCE_DIR}/collectors/kpt_window.c)
  add_executable(test_nvtx_inject ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_nvtx_inject.c ${kpt_nvtx_tool_srcs})
  add_library(kpt_nvtx_tool SHARED ${kpt_nvtx_tool_srcs})
  set_target_properties(kpt_nvtx_tool PROPERTIES C_VISIBILITY_PRESET hidden)
  foreach(t test_nvtx_inject kpt_nvtx_tool)
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/collectors)
    target_include_directories(${t} SYSTEM PRIVATE ${KPT_NVTX3_INCLUDE})
    target_compile_definitions(${t} PRIVATE KPT_VERSION="${PROJECT_VERSION}")
    target_link_libraries(${t} PRIVATE ${kpt_cpu_libs} Threads::Threads dl)
  endforeach()
  target_link_libraries(test_nvtx_inject PRIVATE PkgConfig::CMOCKA)
  add_test(NAME unit.test_nvtx_inject COMMAND test_nvtx_inject)
  set_tests_properties(unit.test_nvtx_inject PROPERTIES LABELS unit TIMEOUT 60)

  add_executable(nvtx_dyn_app ${CMAKE_CURRENT_SOURCE_DIR}/unit/nvtx_dyn_app.c)
  target_include_directories(nvtx_dyn_app SYSTEM PRIVATE ${KPT_NVTX3_INCLUDE})
  target_link_libraries(nvtx_dyn_app PRIVATE dl)
  add_dependencies(nvtx_dyn_app kpt_nvtx_tool)
  add_test(NAME unit.nvtx_dynamic_injection COMMAND nvtx_dyn_app)
  set_tests_properties(unit.nvtx_dynamic_injection PROPERTIES LABELS unit TIMEOUT 60
    ENVIRONMENT NVTX_INJECTION64_PATH=$<TARGET_FILE:kpt_nvtx_tool>)
elseif(CMOCKA_FOUND)
  message(STATUS "kptprof: no nvtx3 headers (CUDA toolkit): the NVTX tool's tests are not built")
endif()
