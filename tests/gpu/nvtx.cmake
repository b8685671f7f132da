# NVTX as programs use it (issue 22): range paths with several domains,
# registered strings, start/end ranges across threads, NCCL's payload pops
# (label gpu; exit 77 without a GPU). gpu.nvtx_torchrun_nccl: the same on a
# real two-rank NCCL job (77 with fewer than 2 GPUs or no PyTorch).
if(KPT_HAVE_CUDA AND TARGET kptinject AND TARGET kptprof)
  add_executable(kpt-nvtx-app ${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvtx_app.cu)
  target_link_libraries(kpt-nvtx-app PRIVATE CUDA::cudart)
  if(TARGET CUDA::nvtx3)
    target_link_libraries(kpt-nvtx-app PRIVATE CUDA::nvtx3)
  endif()
  add_test(NAME gpu.nvtx_app COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvtx_test.sh)
  set_tests_properties(gpu.nvtx_app PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;APP=$<TARGET_FILE:kpt-nvtx-app>;CHECK=$<TARGET_FILE:kpt-collector-check>")
  add_test(NAME gpu.nvtx_torchrun_nccl COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvtx_nccl_test.sh)
  set_tests_properties(gpu.nvtx_torchrun_nccl PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;SCRIPT=${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvtx_nccl_steps.py;CHECK=$<TARGET_FILE:kpt-collector-check>")
endif()
# capture windows (issue 22, point 1): which kernels each mode records
if(KPT_HAVE_CUDA AND TARGET kptinject AND TARGET kptprof)
  add_executable(kpt-window-app ${CMAKE_CURRENT_SOURCE_DIR}/gpu/window_app.cu)
  target_link_libraries(kpt-window-app PRIVATE CUDA::cudart)
  if(TARGET CUDA::nvtx3)
    target_link_libraries(kpt-window-app PRIVATE CUDA::nvtx3)
  endif()
  add_test(NAME gpu.windows COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/window_test.sh)
  set_tests_properties(gpu.windows PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "KPTPROF=$<TARGET_FILE:kptprof>;APP=$<TARGET_FILE:kpt-window-app>;CHECK=$<TARGET_FILE:kpt-collector-check>")
endif()
