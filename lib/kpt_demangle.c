/* kpt_demangle.c - see kpt_demangle.h. */
#include "kpt_demangle.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* From the Itanium C++ ABI (libstdc++/libc++abi), with C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *kpt_demangle(const char *mangled)
{
	int status = -1;
	char *out;

	/* Only function/object names: __cxa_demangle would also "demangle"
	 * plain words as type names ("i" -> "int"). */
	if (!mangled || mangled[0] != '_' || mangled[1] != 'Z')
		return NULL;
	out = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

#define ANON "_GLOBAL__N__"

/* Zeroes the hex digits of s[i..end) from i on, up to the first non-hex. */
static void zero_hex(char *s, size_t i, size_t end)
{
	for (; i < end && isxdigit((unsigned char)s[i]); i++)
		s[i] = '0';
}

char *kpt_mangled_canon(const char *mangled)
{
	size_t n, k = strlen(ANON);
	char *s, *p;

	if (!mangled)
		return NULL;
	n = strlen(mangled);
	if (!(s = malloc(n + 1)))
		return NULL;
	memcpy(s, mangled, n + 1);
	for (p = strstr(s, ANON); p; p = strstr(p + k, ANON)) {
		size_t at = (size_t)(p - s), len = 0, mul = 1, d = at, end, last;

		/* the Itanium length prefix right before the identifier */
		while (d > 0 && isdigit((unsigned char)s[d - 1]) && mul <= 100000) {
			len += (size_t)(s[d - 1] - '0') * mul;
			mul *= 10;
			d--;
		}
		end = len > k && at + len <= n ? at + len : n; /* no or a bad prefix: to the end */
		zero_hex(s, at + k, end);
		for (last = end; last > at + k && s[last - 1] != '_'; last--)
			;
		/* the trailing hash: only a run of hex digits that ends the identifier */
		if (last > at + k && last < end) {
			size_t i = last;

			while (i < end && isxdigit((unsigned char)s[i]))
				i++;
			if (i == end)
				zero_hex(s, last, end);
		}
	}
	return s;
}
