/* kpt_html.c - HTML escaping and number formatting (see kpt_html.h). */
#include "kpt_html.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const html_entity[256] = {
	['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
};

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int kpt_html_escape_n(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	if (!s)
		return 0;
	/* Plain runs are written in one fwrite. */
	while (i < n) {
		unsigned char c = s[i];
		size_t len = utf8_len(s + i, n - i);
		const char *rep = NULL;

		if (len == 1 && html_entity[c])
			rep = html_entity[c];
		else if (len == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			rep = "&#xfffd;";
		if (!rep) {
			i += len;
			continue;
		}
		if (i > run && fwrite(s + run, 1, i - run, out) != i - run)
			return -1;
		if (fputs(rep, out) == EOF)
			return -1;
		i += len ? len : 1;
		run = i;
	}
	if (i > run && fwrite(s + run, 1, i - run, out) != i - run)
		return -1;
	return 0;
}

int kpt_html_escape(FILE *out, const char *s)
{
	return s ? kpt_html_escape_n(out, s, strlen(s)) : 0;
}

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
