/* kpt_units.c - durations and sizes (kpt_units.h). */
#include "kpt_units.h"

#include <stdio.h>

const char *kpt_fmt_duration(double ns, char *buf, size_t cap)
{
	if (!(ns >= 0))
		snprintf(buf, cap, "-");
	else if (ns < 999.5)
		snprintf(buf, cap, "%.0f ns", ns);
	else if (ns < 999995.0)
		snprintf(buf, cap, "%.2f us", ns / 1e3);
	else if (ns < 999999500.0)
		snprintf(buf, cap, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, cap, "%.2f s", ns / 1e9);
	return buf;
}

const char *kpt_fmt_bytes(double bytes, char *buf, size_t cap)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = -1;

	if (!(bytes >= 0)) {
		snprintf(buf, cap, "-");
		return buf;
	}
	if (bytes < 1023.5) {
		snprintf(buf, cap, "%.0f B", bytes);
		return buf;
	}
	while (u < 5 && bytes >= 1023.95) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.1f %s", bytes, units[u]);
	return buf;
}
