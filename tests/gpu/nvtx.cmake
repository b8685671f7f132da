# NVTX as programs use it and capture windows (issue 22), label gpu, exit
# 77 without a GPU:
#   gpu.nvtx_app             range paths with several domains, registered
#                            strings, start/end ranges across threads,
#                            NCCL's payload pops (nvtx_app.cu)
#   gpu.windows              which kernels each capture window records
#                            (window_app.cu)
#   gpu.nvtx_torchrun_nccl   a real two-rank NCCL job (77 with fewer than 2
#                            GPUs or no PyTorch)
if(KPT_HAVE_CUDA AND TARGET kptinject AND TARGET kptprof)
  # A CUDA program (tests/gpu/SRC) and the script that records and checks it.
  function(kpt_recorded_app_test test app src script)
    add_executable(${app} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/${src})
    target_link_libraries(${app} PRIVATE CUDA::cudart)
    if(TARGET CUDA::nvtx3)
      target_link_libraries(${app} PRIVATE CUDA::nvtx3)
    endif()
    add_test(NAME ${test} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/${script})
    set_tests_properties(${test} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;APP=$<TARGET_FILE:${app}>;CHECK=$<TARGET_FILE:kpt-collector-check>")
  endfunction()
  kpt_recorded_app_test(gpu.nvtx_app kpt-nvtx-app nvtx_app.cu nvtx_test.sh)
  kpt_recorded_app_test(gpu.windows kpt-window-app window_app.cu window_test.sh)
  add_test(NAME gpu.nvtx_torchrun_nccl COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvtx_nccl_test.sh)
  set_tests_properties(gpu.nvtx_torchrun_nccl PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;SCRIPT=${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvtx_nccl_steps.py;CHECK=$<TARGET_FILE:kpt-collector-check>")
endif()
