/* kpt_units.h - durations and sizes as people read them, one way for every
 * table kptprof prints (report, diff, gate, history, workloads, view), so a
 * kernel's time reads the same in each.
 */
#ifndef KPT_UNITS_H
#define KPT_UNITS_H

#include <stddef.h>

/* Buffer size that always holds a formatted value. */
#define KPT_UNITS_BUF 32

/* ns as "850 ns", "12.34 us", "1.234 ms", "2.50 s" (ns to 1 ns, us to
 * 10 ns, ms to 1 us, s to 10 ms); a value that would round up to the next
 * unit is shown in it ("1.000 ms", never "1000.00 us"); "-" for NAN or a
 * negative. Writes into buf (cap >= KPT_UNITS_BUF) and returns buf. */
const char *kpt_fmt_duration(double ns, char *buf, size_t cap);

/* bytes as "512 B", "1.5 KiB", "8.0 MiB", "80.0 GiB" (binary units, one
 * decimal); "-" for NAN or a negative. Returns buf. */
const char *kpt_fmt_bytes(double bytes, char *buf, size_t cap);

#endif
