/* kpt_demangle.h - C++ names for display.
 *
 * Kernel names are stored mangled (as CUPTI reports them) and demangled only
 * for display, with the C++ runtime's own demangler (__cxa_demangle).
 */
#ifndef KPT_DEMANGLE_H
#define KPT_DEMANGLE_H

/* The demangled form of mangled ("_Z..."), malloc'd (the caller frees it),
 * or NULL when mangled is NULL, not a mangled C++ name, or malloc fails:
 * callers then show the raw name. Thread-safe. O(length). */
char *kpt_demangle(const char *mangled);

#endif
