/* nvtx_dyn_app.c - the collector's NVTX tool loaded the way a recorded
 * program loads it: NVTX_INJECTION64_PATH names a library of the core and
 * a clock-only backend (libkpt_nvtx_tool.so: nvtx_clock_tool.c), which
 * NVTX (the toolkit's nvtx3, header-only) dlopens at this program's first
 * NVTX call. The program then reads the range logs back from that library
 * and compares them with what it did. Exit 0 when they match, 1 when not
 * (the difference on stderr).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

static const char expect[] =
	"1 step - parent=- ended\n"
	"1 allreduce NCCL parent=step ended\n"
	"1 (payload range) NCCL parent=allreduce ended\n"
	"2 load - parent=step ended\n"
	"3 mark - parent=step ended\n";

int main(void)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("NCCL");
	nvtxEventAttributes_t a = { .version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
				    .messageType = NVTX_MESSAGE_TYPE_REGISTERED };
	const char *path = getenv("NVTX_INJECTION64_PATH");
	int (*dump)(char *, size_t) = NULL;
	char got[4096];
	int fail = 0;
	void *h;

	a.message.registered = nvtxDomainRegisterStringA(dom, "allreduce");
	fail |= nvtxRangePushA("step") != 0;
	fail |= nvtxDomainRangePushEx(dom, &a) != 1;
	fail |= nvtxRangePushPayload(dom, NULL, 0) != 2;
	nvtxRangePopPayload(dom, NULL, 0);
	fail |= nvtxDomainRangePop(dom) != 1;
	nvtxRangeEnd(nvtxRangeStartA("load"));
	nvtxMarkA("mark");
	fail |= nvtxRangePop() != 0;
	if (fail)
		fprintf(stderr, "nvtx_dyn_app: a push or pop returned the wrong level\n");
	if (!path || !(h = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) ||
	    !(*(void **)&dump = dlsym(h, "kpt_test_nvtx_dump"))) {
		fprintf(stderr, "nvtx_dyn_app: the tool '%s' was not loaded by NVTX\n", path ? path : "");
		return 1;
	}
	if (dump(got, sizeof got) < 0 || strcmp(got, expect) != 0) {
		fprintf(stderr, "nvtx_dyn_app: ranges differ\n--- expected\n%s--- got\n%s", expect, got);
		return 1;
	}
	return fail;
}
