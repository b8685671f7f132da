/* kpt_demangle.c - see kpt_demangle.h. */
#include "kpt_demangle.h"

#include <stddef.h>
#include <stdlib.h>

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
