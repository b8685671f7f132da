/* kpt_html.h - the small formatting helpers the HTML report uses.
 *
 * Everything that comes from a recording (kernel names contain <, >, &;
 * commands, host names, meta values) goes through kpt_text_write with
 * KPT_TEXT_MARKUP (lib/kpt_text.h).
 */
#ifndef KPT_HTML_H
#define KPT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* Human duration: "812 ns", "12.3 us", "4.56 ms", "1.20 s". buf >= 32. */
void kpt_fmt_ns(char *buf, size_t cap, double ns);
/* Human byte count: "512 B", "1.5 KiB", "80.0 GiB". */
void kpt_fmt_bytes(char *buf, size_t cap, double bytes);

#endif
