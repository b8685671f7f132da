/* kpt_canvas.h - an RGB raster with rectangles, lines, a 5x7 bitmap font and
 * PNG output (libpng). Used by the timeline; small enough for any other
 * picture the viewer draws itself.
 *
 * Coordinates are pixels, (0,0) top left. Drawing clips to the canvas, so
 * callers may pass rectangles partly or wholly outside it.
 */
#ifndef KPT_CANVAS_H
#define KPT_CANVAS_H

#include <stdint.h>

#include "kpt_err.h"

/* 0xRRGGBB */
typedef uint32_t kpt_rgb;

struct kpt_canvas {
	int w, h;
	uint8_t *px;                /* w*h*3 bytes, row-major RGB; owned */
};

#define KPT_FONT_W 5            /* glyph cells */
#define KPT_FONT_H 7
#define KPT_FONT_ADVANCE 6      /* pixels per character at scale 1 */

/* Allocates a w x h canvas filled with bg. KPT_E_INVAL for sizes outside
 * 1..16384, KPT_E_NOMEM. */
int kpt_canvas_init(struct kpt_canvas *c, int w, int h, kpt_rgb bg, struct kpt_diag *d);
/* Frees the pixels; accepts a zeroed or released canvas. */
void kpt_canvas_release(struct kpt_canvas *c);

void kpt_canvas_fill(struct kpt_canvas *c, int x, int y, int w, int h, kpt_rgb col);
/* Pixel at (x, y) or 0 when outside. */
kpt_rgb kpt_canvas_get(const struct kpt_canvas *c, int x, int y);

/* Draws s with its top-left corner at (x, y), each cell scale x scale pixels;
 * characters outside printable ASCII are drawn as '?'. Stops at max_w pixels
 * (0: no limit), ending in ".." when cut. Returns the width drawn. */
int kpt_canvas_text(struct kpt_canvas *c, int x, int y, const char *s, kpt_rgb col,
		    int scale, int max_w);
/* Width in pixels that kpt_canvas_text would need for s without a limit. */
int kpt_canvas_text_width(const char *s, int scale);

/* Writes the canvas as an 8-bit RGB PNG to path (via path.tmp + rename).
 * KPT_E_UNSUPPORTED when built without libpng; KPT_E_IO on write errors. */
int kpt_canvas_write_png(const struct kpt_canvas *c, const char *path, struct kpt_diag *d);

#endif
