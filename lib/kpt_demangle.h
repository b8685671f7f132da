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

/* The name as an identity across builds: a copy of mangled (malloc'd, the
 * caller frees it; NULL when mangled is NULL or malloc fails) in which the
 * hashes of nvcc's anonymous-namespace names are zeroed. nvcc names an
 * anonymous namespace `_GLOBAL__N__<hex>_<len>_<file>_<hex>`, the first hash
 * drawn from the source's full path: the same kernel built from two
 * checkouts (a CI workspace, a worktree, /tmp) would otherwise be two
 * kernels. Lengths are kept, so the result is still a valid mangled name.
 * O(length). */
char *kpt_mangled_canon(const char *mangled);

#endif
