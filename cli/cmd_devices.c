/* cmd_devices.c - `kptprof devices`: the GPUs this machine has, found
 * through a run-time dlopen of the driver (collectors/kpt_devprobe.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kpt_cli.h"
#include "kpt_devprobe.h"
#include "kpt_json.h"
#include "kpt_model.h"

static void print_json(const struct kpt_gpu_list *l)
{
	struct kpt_json j;
	char cc[16];

	kpt_json_init(&j, stdout, 1);
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "format_version", KPT_CLI_JSON_VERSION);
	kpt_json_kv_i64(&j, "driver_version", l->driver_version);
	kpt_json_kv_str(&j, "driver", l->driver_string);
	kpt_json_key(&j, "devices");
	kpt_json_begin_array(&j);
	for (int i = 0; i < l->n; i++) {
		const struct kpt_gpu *gp = &l->gpu[i];

		snprintf(cc, sizeof cc, "%d.%d", gp->cc_major, gp->cc_minor);
		kpt_json_begin_object(&j);
		kpt_json_kv_i64(&j, "index", gp->ordinal);
		kpt_json_kv_str(&j, "name", gp->name);
		kpt_json_kv_str(&j, "slug", gp->slug);
		kpt_json_kv_str(&j, "uuid", gp->uuid);
		kpt_json_kv_str(&j, "compute_capability", cc);
		kpt_json_kv_i64(&j, "sm_count", gp->sm_count);
		kpt_json_kv_u64(&j, "memory_bytes", gp->mem_bytes);
		kpt_json_kv_u64(&j, "l2_bytes", gp->l2_bytes);
		kpt_json_kv_i64(&j, "sm_clock_max_mhz", gp->sm_clock_mhz);
		kpt_json_kv_i64(&j, "mem_clock_max_mhz", gp->mem_clock_mhz);
		kpt_json_kv_i64(&j, "mem_bus_width_bits", gp->bus_width_bits);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	kpt_json_end_object(&j);
	kpt_json_finish(&j, NULL);
}

struct devices_args {
	int json;
};

const struct kpt_opt kpt_devices_opts[] = {
	KPT_OPT_FLAG(0, "json", struct devices_args, json, "print the GPUs as JSON (default: a table)"),
	KPT_OPT_END,
};

int cmd_devices(int argc, char **argv)
{
	struct devices_args a = { 0 };
	struct kpt_gpu_list l;
	struct kpt_diag d;
	int n, rc, json;

	if ((rc = kpt_opt_parse("devices", kpt_devices_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		return rc;
	if (n)
		return kpt_cli_usage_error("devices", "takes no arguments, got '%s'", argv[1]);
	json = a.json;
	kpt_diag_clear(&d);
	if (kpt_gpu_probe(&l, &d) < 0)
		return kpt_cli_fail(&d);
	if (json) {
		print_json(&l);
		return KPT_EXIT_OK;
	}
	printf("driver %d.%d%s%s\n", l.driver_version / 1000, l.driver_version % 1000 / 10,
	       l.driver_string[0] ? ", " : "", l.driver_string);
	printf("%-3s %-28s %-5s %4s %9s %9s %8s  %s\n", "idx", "name", "cc", "SMs", "memory", "L2", "SM clk", "uuid");
	for (int i = 0; i < l.n; i++) {
		const struct kpt_gpu *gp = &l.gpu[i];
		char mem[32], l2[32];

		/* sizes as every table prints them (lib/kpt_units.h) */
		printf("%-3d %-28s %d.%-3d %4d %9s %9s %4d MHz  %s\n", gp->ordinal, gp->name, gp->cc_major,
		       gp->cc_minor, gp->sm_count, kpt_cli_fmt_bytes((double)gp->mem_bytes, mem, sizeof mem),
		       kpt_cli_fmt_bytes((double)gp->l2_bytes, l2, sizeof l2), gp->sm_clock_mhz, gp->uuid);
		printf("    slug %s\n", gp->slug);
	}
	return KPT_EXIT_OK;
}
