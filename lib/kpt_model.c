/* kpt_model.c - helpers of the run model (see kpt_model.h). */
#include "kpt_model.h"

/* ASCII only, whatever the locale: slugs name directories. */
static int is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int kpt_slug(const char *name, char *out, int cap)
{
	int n = 0, dash = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (is_alnum(*p)) {
			if (dash && n > 0) {
				if (n < cap - 1)
					out[n] = '-';
				n++;
			}
			dash = 0;
			if (n < cap - 1)
				out[n] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
			n++;
		} else {
			dash = 1;
		}
	}
	if (cap > 0)
		out[n < cap ? n : cap - 1] = '\0';
	return n;
}
