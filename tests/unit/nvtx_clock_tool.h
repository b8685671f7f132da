/* nvtx_clock_tool.h - the NVTX tool's test harness (nvtx_clock_tool.c). */
#ifndef NVTX_CLOCK_TOOL_H
#define NVTX_CLOCK_TOOL_H

#include <stddef.h>

#include "kpt_inject_core.h"

/* How often InitializeInjection was called. */
extern int kpt_test_nvtx_inits;

/* The range records of the process, one line each: "KIND NAME DOMAIN
 * parent=NAME ended|open" (DOMAIN and parent "-" when none; a parent in
 * the same log chunk only). Returns the length, -1 when cap is too small. */
KPT_EXPORT int kpt_test_nvtx_dump(char *buf, size_t cap);

#endif
