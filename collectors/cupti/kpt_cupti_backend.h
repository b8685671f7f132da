/* kpt_cupti_backend.h - what the files of the CUPTI backend
 * (collectors/cupti/) share; internal to libkptinject.so. The backend's
 * row of struct kpt_backend_ops is in kpt_cupti_backend.c; the core it
 * plugs into is kpt_inject_core.h.
 */
#ifndef KPT_CUPTI_BACKEND_H
#define KPT_CUPTI_BACKEND_H

#include <cupti.h>

#include "kpt_inject_core.h"

#define KPT_EXPORT __attribute__((visibility("default")))

/* The CUDA injection entry point (kpt_cupti_backend.c): starts the core
 * with the CUPTI backend, once; NVTX's entry points call it first. */
KPT_EXPORT int InitializeInjection(void);

/* An NVTX event CUPTI's callback API reported (kpt_cupti_nvtx.c). */
void kpt_cupti_nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *nd);

#endif
