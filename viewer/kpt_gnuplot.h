/* kpt_gnuplot.h - writing gnuplot scripts and running gnuplot on them.
 *
 * A plot is a self-contained script DIR/STEM.gp: it sets the pngcairo
 * terminal, writes STEM.png beside itself (relative path), holds its data in
 * inline blocks ($data << EOD ... EOD) and needs nothing else, so a user can
 * edit and re-run it with `gnuplot STEM.gp` in that folder.
 *
 * gnuplot runs as a child process (fork + execvp, argument vector, no
 * shell), in DIR, with stdin and stdout on /dev/null, under a time limit.
 */
#ifndef KPT_GNUPLOT_H
#define KPT_GNUPLOT_H

#include <stdio.h>

#include "kpt_err.h"

/* Writes s as a gnuplot double-quoted string literal: '"' and '\\' are
 * escaped, a backquote is written as the octal escape \140 (a literal one
 * would run a shell command: gnuplot substitutes `cmd` in double quotes),
 * control characters become spaces. Single quotes stay as they are:
 * gnuplot's single-quoted strings cannot hold two quotes in a row. */
void kpt_gp_quote(FILE *out, const char *s);
/* Writes s as a double-quoted field of an inline data block: '"' becomes
 * '\'', control characters U+FFFD (data blocks have no escapes):
 * KPT_TEXT_GNUPLOT_FIELD. */
void kpt_gp_field(FILE *out, const char *s);

/* The same for a tic label (set xtics ("label" x), a data field read by
 * xtic()/ytic()): gnuplot takes a tic label as a format string, so '%' is
 * doubled (a kernel named "a%s" is a label, not a conversion). */
void kpt_gp_tic_quote(FILE *out, const char *s);
void kpt_gp_tic_field(FILE *out, const char *s);

/* Opens DIR/STEM.gp for writing and writes the header: a comment naming
 * what the plot shows and how to re-render it, the terminal (pngcairo,
 * w x h, noenhanced so names are literal) and the output STEM.png.
 * *out is the stream (close it with kpt_gp_close). */
int kpt_gp_open(const char *dir, const char *stem, const char *what, int w, int h,
		FILE **out, struct kpt_diag *d);
/* Closes the stream; KPT_E_IO when any write to it failed. */
int kpt_gp_close(FILE *out, const char *dir, const char *stem, struct kpt_diag *d);

/* The gnuplot program: $KPT_GNUPLOT when set, else "gnuplot" from PATH.
 * Writes its path into buf; returns 1 when it exists and is executable. */
int kpt_gnuplot_find(char *buf, size_t cap);

/* Runs gnuplot on DIR/STEM.gp in DIR; on success DIR/STEM.png exists and is
 * not empty. timeout_ms 0: 30 s. Errors: KPT_E_UNSUPPORTED when gnuplot is
 * not installed (hint: install it), KPT_E_IO when it failed (its first
 * stderr line in the message), timed out (killed) or wrote no picture. */
int kpt_gnuplot_render(const char *dir, const char *stem, int timeout_ms, struct kpt_diag *d);

#endif
