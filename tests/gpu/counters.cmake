# GPU tests of hardware counters (issue 8), label gpu, exit 77 without a GPU:
#   gpu.counters_copy    record --counters on the 512 MiB copy: DRAM bytes
#                        within 5% of the bytes it moves, one pass on Hopper
#                        for the default set, named sets, bad metric exit 2
#   gpu.nccl_counters    record --counters -- torchrun --nproc-per-node 2 of
#                        an NCCL job: both ranks' NCCL and compute kernels
#                        have counters (77 with fewer than 2 GPUs)
add_executable(counters_check ${CMAKE_CURRENT_LIST_DIR}/counters_check.c)
get_property(kpt_counters_check_libs GLOBAL PROPERTY KPT_CPU_LIBS)
target_link_libraries(counters_check PRIVATE ${kpt_counters_check_libs})
if(TARGET kpt-workloads AND TARGET kptinject)
  add_test(NAME gpu.counters_copy COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/counters_test.sh)
  set_tests_properties(gpu.counters_copy PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;KW=$<TARGET_FILE:kpt-workloads>;CHECK=$<TARGET_FILE:counters_check>")
endif()
if(TARGET kptinject AND TARGET kptprof)
  add_test(NAME gpu.nccl_counters COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/nccl_counters_test.sh)
  set_tests_properties(gpu.nccl_counters PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;SCRIPT=${CMAKE_CURRENT_LIST_DIR}/nvtx_nccl_steps.py;CHECK=$<TARGET_FILE:counters_check>")
endif()
