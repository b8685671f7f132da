/* kpt_format_tab.c - the column layout of every .kpt section, as data.
 * docs/format.md lists the same columns in the same order; a change here is
 * a format change (a new major version unless only appending columns). */
#include <stddef.h>

#include "kpt_format_int.h"

#define COL(S, f, e, c) { #f, offsetof(S, f), 0, KPT_ENC_##e, KPT_CHK_##c }
#define SPAN(S, f, base) { #f, offsetof(S, f), offsetof(S, base), KPT_ENC_SPAN, KPT_CHK_ANY }
#define TAB(S, cols) { cols, (int)(sizeof cols / sizeof cols[0]), sizeof(S) }

static const struct kpt_col meta_cols[] = {
	COL(struct kpt_meta_kv, key, STR, ANY),
	COL(struct kpt_meta_kv, value, STR, ANY),
};

static const struct kpt_col device_cols[] = {
	COL(struct kpt_device, name, STR, ANY),
	COL(struct kpt_device, slug, STR, ANY),
	COL(struct kpt_device, uuid, STR, ANY),
	COL(struct kpt_device, cuda_ordinal, U32, ANY),
	COL(struct kpt_device, sm_count, U32, ANY),
	COL(struct kpt_device, cc_major, U32, ANY),
	COL(struct kpt_device, cc_minor, U32, ANY),
	COL(struct kpt_device, mem_bytes, U64, ANY),
	COL(struct kpt_device, l2_bytes, U64, ANY),
	COL(struct kpt_device, sm_clock_max_mhz, U32, ANY),
	COL(struct kpt_device, mem_clock_max_mhz, U32, ANY),
	COL(struct kpt_device, mem_bus_width_bits, U32, ANY),
	COL(struct kpt_device, driver_version, U32, ANY),
	COL(struct kpt_device, runtime_version, U32, ANY),
	COL(struct kpt_device, driver_string, STR, ANY),
	COL(struct kpt_device, copy_gbps, F64, ANY),
	COL(struct kpt_device, bf16_tflops, F64, ANY),
};

static const struct kpt_col process_cols[] = {
	COL(struct kpt_process, run, U32, ANY),
	COL(struct kpt_process, pid, U32, ANY),
	COL(struct kpt_process, ppid, U32, ANY),
	COL(struct kpt_process, rank, ID, ANY),
	COL(struct kpt_process, exit_status, S32, ANY),
	COL(struct kpt_process, start_ns, U64, ANY),
	SPAN(struct kpt_process, end_ns, start_ns),
	COL(struct kpt_process, command, ID, STR),
	COL(struct kpt_process, dropped, U64, ANY),
};

static const struct kpt_col drop_cols[] = {
	COL(struct kpt_drop, process, U32, PROC),
	COL(struct kpt_drop, device, ID, DEV_OPT),
	COL(struct kpt_drop, stream, ID, ANY),
	COL(struct kpt_drop, count, U64, ANY),
};

static const struct kpt_col memop_cols[] = {
	COL(struct kpt_memop, start_ns, D64, ANY),
	SPAN(struct kpt_memop, end_ns, start_ns),
	COL(struct kpt_memop, bytes, U64, ANY),
	COL(struct kpt_memop, kind, U32, ANY),
	COL(struct kpt_memop, src_mem, U32, ANY),
	COL(struct kpt_memop, dst_mem, U32, ANY),
	COL(struct kpt_memop, value, U32, ANY),
	COL(struct kpt_memop, device, U32, DEV),
	COL(struct kpt_memop, stream, ID, ANY),
	COL(struct kpt_memop, process, U32, PROC),
	COL(struct kpt_memop, correlation, D32, ANY),
	COL(struct kpt_memop, range, D32, ANY),
	COL(struct kpt_memop, graph, ID, ANY),
	COL(struct kpt_memop, graph_node, D64, ANY),
};

static const struct kpt_col range_cols[] = {
	COL(struct kpt_range, id, D32, ANY),
	COL(struct kpt_range, parent, ID, ANY),
	COL(struct kpt_range, name, ID, STR),
	COL(struct kpt_range, domain, ID, STR),
	COL(struct kpt_range, kind, U32, ANY),
	COL(struct kpt_range, process, U32, PROC),
	COL(struct kpt_range, thread, D64, ANY),
	COL(struct kpt_range, start_ns, D64, ANY),
	SPAN(struct kpt_range, end_ns, start_ns),
};

static const struct kpt_col event_cols[] = {
	COL(struct kpt_event, start_ns, D64, ANY),
	SPAN(struct kpt_event, end_ns, start_ns),
	COL(struct kpt_event, kind, U32, ANY),
	COL(struct kpt_event, sub, U32, ANY),
	COL(struct kpt_event, name, ID, STR),
	COL(struct kpt_event, process, U32, PROC),
	COL(struct kpt_event, device, ID, DEV_OPT),
	COL(struct kpt_event, stream, ID, ANY),
	COL(struct kpt_event, correlation, D32, ANY),
	COL(struct kpt_event, thread, D64, ANY),
};

static const struct kpt_col env_cols[] = {
	COL(struct kpt_env_sample, t_ns, D64, ANY),
	COL(struct kpt_env_sample, device, U32, DEV),
	COL(struct kpt_env_sample, process, U32, PROC),
	COL(struct kpt_env_sample, sm_mhz, D32, ANY),
	COL(struct kpt_env_sample, mem_mhz, D32, ANY),
	COL(struct kpt_env_sample, temp_c, D32, ANY),
	COL(struct kpt_env_sample, power_mw, D32, ANY),
	COL(struct kpt_env_sample, throttle, U64, ANY),
};

static const struct kpt_col counter_cols[] = {
	COL(struct kpt_counter, process, U32, PROC),
	COL(struct kpt_counter, device, U32, DEV),
	COL(struct kpt_counter, kernel_name, ID, STR),
	COL(struct kpt_counter, ordinal, D32, ANY),
	COL(struct kpt_counter, metric, ID, STR),
	COL(struct kpt_counter, value, F64, ANY),
};

/* Kernel launch dictionary: one row per distinct launch of the chunk. */
static const struct kpt_col launch_cols[] = {
	COL(struct kpt_kernel, name, ID, STR),
	COL(struct kpt_kernel, grid[0], U32, ANY),
	COL(struct kpt_kernel, grid[1], U32, ANY),
	COL(struct kpt_kernel, grid[2], U32, ANY),
	COL(struct kpt_kernel, block[0], U32, ANY),
	COL(struct kpt_kernel, block[1], U32, ANY),
	COL(struct kpt_kernel, block[2], U32, ANY),
	COL(struct kpt_kernel, registers, U32, ANY),
	COL(struct kpt_kernel, shared_static, U32, ANY),
	COL(struct kpt_kernel, shared_dynamic, U32, ANY),
};

/* Kernel rows. The launch index travels in the `name` field until the
 * reader replaces it with the dictionary's values. */
static const struct kpt_col kernel_cols[] = {
	{ "launch", offsetof(struct kpt_kernel, name), 0, KPT_ENC_U32, KPT_CHK_LAUNCH },
	COL(struct kpt_kernel, start_ns, D64, ANY),
	SPAN(struct kpt_kernel, end_ns, start_ns),
	COL(struct kpt_kernel, device, U32, DEV),
	COL(struct kpt_kernel, stream, ID, ANY),
	COL(struct kpt_kernel, process, U32, PROC),
	COL(struct kpt_kernel, correlation, D32, ANY),
	COL(struct kpt_kernel, range, D32, ANY),
	COL(struct kpt_kernel, graph, ID, ANY),
	COL(struct kpt_kernel, graph_node, D64, ANY),
};

static const struct kpt_coltab meta_tab = TAB(struct kpt_meta_kv, meta_cols);
static const struct kpt_coltab device_tab = TAB(struct kpt_device, device_cols);
static const struct kpt_coltab process_tab = TAB(struct kpt_process, process_cols);
static const struct kpt_coltab drop_tab = TAB(struct kpt_drop, drop_cols);
static const struct kpt_coltab memop_tab = TAB(struct kpt_memop, memop_cols);
static const struct kpt_coltab range_tab = TAB(struct kpt_range, range_cols);
static const struct kpt_coltab event_tab = TAB(struct kpt_event, event_cols);
static const struct kpt_coltab env_tab = TAB(struct kpt_env_sample, env_cols);
static const struct kpt_coltab counter_tab = TAB(struct kpt_counter, counter_cols);
const struct kpt_coltab kpt_kernel_launch_tab = TAB(struct kpt_kernel, launch_cols);
const struct kpt_coltab kpt_kernel_row_tab = TAB(struct kpt_kernel, kernel_cols);

const struct kpt_secinfo kpt_sections[KPT_SEC_MAX + 1] = {
	[KPT_SEC_META] = { "meta", &meta_tab },
	[KPT_SEC_STRINGS] = { "strings", NULL },
	[KPT_SEC_DEVICES] = { "devices", &device_tab },
	[KPT_SEC_PROCESSES] = { "processes", &process_tab },
	[KPT_SEC_DROPS] = { "drops", &drop_tab },
	[KPT_SEC_KERNELS] = { "kernels", NULL },
	[KPT_SEC_MEMOPS] = { "memops", &memop_tab },
	[KPT_SEC_RANGES] = { "ranges", &range_tab },
	[KPT_SEC_EVENTS] = { "events", &event_tab },
	[KPT_SEC_ENV] = { "env", &env_tab },
	[KPT_SEC_COUNTERS] = { "counters", &counter_tab },
};
