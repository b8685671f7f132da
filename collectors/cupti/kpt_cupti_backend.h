/* kpt_cupti_backend.h - what the files of the CUPTI backend
 * (collectors/cupti/) share; internal to libkptinject.so. The backend's
 * row of struct kpt_backend_ops is in kpt_cupti_backend.c; the core it
 * plugs into is kpt_inject_core.h.
 */
#ifndef KPT_CUPTI_BACKEND_H
#define KPT_CUPTI_BACKEND_H

#include <cupti.h>

#include "kpt_inject_core.h"

#endif
