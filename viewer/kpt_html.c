/* kpt_html.c - number formatting for the HTML report (see kpt_html.h). */
#include "kpt_html.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const struct {
	double scale;
	const char *unit;
} ns_units[] = {
	{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" },
};

static void fmt_scaled(char *buf, size_t cap, double v, const char *unit)
{
	double a = fabs(v);

	snprintf(buf, cap, a >= 100 || a == 0 ? "%.0f %s" : a >= 10 ? "%.1f %s" : "%.2f %s", v, unit);
}

void kpt_fmt_ns(char *buf, size_t cap, double ns)
{
	if (!isfinite(ns)) {
		snprintf(buf, cap, "-");
		return;
	}
	for (size_t i = 0; i < sizeof ns_units / sizeof ns_units[0]; i++)
		if (fabs(ns) >= ns_units[i].scale || ns_units[i].scale == 1) {
			if (ns_units[i].scale == 1)
				snprintf(buf, cap, "%.0f ns", ns);
			else
				fmt_scaled(buf, cap, ns / ns_units[i].scale, ns_units[i].unit);
			return;
		}
}

void kpt_fmt_bytes(char *buf, size_t cap, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (fabs(bytes) >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%.0f B", bytes);
	else
		fmt_scaled(buf, cap, bytes, units[u]);
}
