/* kpt_html.h - HTML text escaping and the small formatting helpers the
 * report uses.
 *
 * Everything that comes from a recording (kernel names contain <, >, &;
 * commands, host names, meta values) goes through kpt_html_escape.
 */
#ifndef KPT_HTML_H
#define KPT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* Writes s with & < > " ' as entities; bytes that are not valid UTF-8 and
 * control characters other than tab, LF and CR become U+FFFD, so the output
 * is well-formed in any context (text or quoted attribute). s NULL writes
 * nothing. Returns 0 or -1 when a write failed (see ferror). */
int kpt_html_escape(FILE *out, const char *s);
/* Same for the first len bytes of s. */
int kpt_html_escape_n(FILE *out, const char *s, size_t len);

/* Human duration: "812 ns", "12.3 us", "4.56 ms", "1.20 s". buf >= 32. */
void kpt_fmt_ns(char *buf, size_t cap, double ns);
/* Human byte count: "512 B", "1.5 KiB", "80.0 GiB". */
void kpt_fmt_bytes(char *buf, size_t cap, double bytes);

#endif
