# GPU tests of the collector (label gpu; exit 77 without a GPU), and the
# launcher's CPU-side behaviour (label cli): error paths, merging real
# recordings, the committed H100 recordings still reading back exactly.
add_executable(kpt-collector-check ${CMAKE_CURRENT_SOURCE_DIR}/gpu/check_collector.c)
target_link_libraries(kpt-collector-check PRIVATE ${kpt_cpu_libs})
add_test(NAME cli.collector_data COMMAND kpt-collector-check app ${PROJECT_SOURCE_DIR}/tests/data/collector_app.kpt)
set_tests_properties(cli.collector_data PROPERTIES LABELS cli TIMEOUT 60)
if(KPT_HAVE_CUDA AND TARGET kptinject)
  add_executable(kpt-collector-app ${CMAKE_CURRENT_SOURCE_DIR}/gpu/collector_app.cu)
  target_link_libraries(kpt-collector-app PRIVATE CUDA::cudart)
  if(TARGET CUDA::nvtx3)
    target_link_libraries(kpt-collector-app PRIVATE CUDA::nvtx3)
  endif()
  add_test(NAME gpu.collector_app COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/collector_test.sh)
  set_tests_properties(gpu.collector_app PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;APP=$<TARGET_FILE:kpt-collector-app>;CHECK=$<TARGET_FILE:kpt-collector-check>;LAUNCH=$<$<TARGET_EXISTS:kpt-launch-bench>:$<TARGET_FILE:kpt-launch-bench>>")
  # record --counters on the plain program, cross-checked against ncu
  add_test(NAME gpu.counters_app COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/counters_app_test.sh)
  set_tests_properties(gpu.counters_app PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;APP=$<TARGET_FILE:kpt-collector-app>")
  # two torchrun ranks on one GPU: one recording, both ranks, one clock
  add_test(NAME gpu.torchrun_ranks COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/torchrun_test.sh)
  set_tests_properties(gpu.torchrun_ranks PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;SCRIPT=${CMAKE_CURRENT_SOURCE_DIR}/gpu/torchrun_ranks.py")
  add_test(NAME gpu.collector_torch COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/collector_torch_test.sh)
  set_tests_properties(gpu.collector_torch PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;CHECK=$<TARGET_FILE:kpt-collector-check>;SCRIPT=${CMAKE_CURRENT_SOURCE_DIR}/gpu/torch_workload.py")
endif()
if(TARGET kptprof)
  add_test(NAME cli.record_errors COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/record_errors.sh)
  set_tests_properties(cli.record_errors PROPERTIES LABELS cli TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>")
  add_test(NAME cli.record_merge COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/record_merge.sh)
  set_tests_properties(cli.record_merge PROPERTIES LABELS cli TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;CHECK=$<TARGET_FILE:kpt-collector-check>;KPT_DATA=${PROJECT_SOURCE_DIR}/tests/data")
endif()
# Ranks on two GPUs (issue 15): torchrun with NCCL under kptprof record.
if(TARGET kptprof AND TARGET kptinject)
  add_test(NAME gpu.ddp_2gpu COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/ddp_test.sh)
  set_tests_properties(gpu.ddp_2gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;SCRIPT=${PROJECT_SOURCE_DIR}/bench/collector/ddp_step.py")
endif()
