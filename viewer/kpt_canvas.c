/* kpt_canvas.c - RGB raster, bitmap text and PNG output (see kpt_canvas.h). */
#include "kpt_canvas.h"
#include "kpt_outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KPT_HAVE_PNG
#include <png.h>
#endif

#include "kpt_font_data.h"

int kpt_canvas_init(struct kpt_canvas *c, int w, int h, kpt_rgb bg, struct kpt_diag *d)
{
	c->w = c->h = 0;
	c->px = NULL;
	if (w < 1 || h < 1 || w > 16384 || h > 16384)
		return kpt_diag_set(d, KPT_E_INVAL, "image size %dx%d out of range (1..16384)", w, h);
	c->px = malloc((size_t)w * (size_t)h * 3);
	if (!c->px)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for a %dx%d image", w, h);
	c->w = w;
	c->h = h;
	kpt_canvas_fill(c, 0, 0, w, h, bg);
	return 0;
}

void kpt_canvas_release(struct kpt_canvas *c)
{
	if (!c)
		return;
	free(c->px);
	c->px = NULL;
	c->w = c->h = 0;
}

void kpt_canvas_fill(struct kpt_canvas *c, int x, int y, int w, int h, kpt_rgb col)
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
	uint8_t r = (uint8_t)(col >> 16), g = (uint8_t)(col >> 8), b = (uint8_t)col;

	if (x0 >= x1 || y0 >= y1)
		return;
	for (int yy = y0; yy < y1; yy++) {
		uint8_t *p = c->px + ((size_t)yy * (size_t)c->w + (size_t)x0) * 3;

		for (int xx = x0; xx < x1; xx++, p += 3) {
			p[0] = r;
			p[1] = g;
			p[2] = b;
		}
	}
}

kpt_rgb kpt_canvas_get(const struct kpt_canvas *c, int x, int y)
{
	const uint8_t *p;

	if (x < 0 || y < 0 || x >= c->w || y >= c->h)
		return 0;
	p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
	return (kpt_rgb)p[0] << 16 | (kpt_rgb)p[1] << 8 | p[2];
}

static void draw_glyph(struct kpt_canvas *c, int x, int y, unsigned char ch, kpt_rgb col, int scale)
{
	const unsigned char *rows;

	if (ch < 32 || ch > 126)
		ch = '?';
	rows = kpt_font5x7[ch - 32];
	for (int r = 0; r < KPT_FONT_H; r++)
		for (int k = 0; k < KPT_FONT_W; k++)
			if (rows[r] & (0x10 >> k))
				kpt_canvas_fill(c, x + k * scale, y + r * scale, scale, scale, col);
}

int kpt_canvas_text_width(const char *s, int scale)
{
	size_t n = strlen(s);

	return n ? (int)n * KPT_FONT_ADVANCE * scale - scale : 0;
}

int kpt_canvas_text(struct kpt_canvas *c, int x, int y, const char *s, kpt_rgb col,
		    int scale, int max_w)
{
	size_t n = strlen(s);
	int adv, fits;

	if (scale < 1)
		scale = 1;
	adv = KPT_FONT_ADVANCE * scale;
	if (max_w <= 0 || kpt_canvas_text_width(s, scale) <= max_w) {
		for (size_t i = 0; i < n; i++)
			draw_glyph(c, x + (int)i * adv, y, (unsigned char)s[i], col, scale);
		return kpt_canvas_text_width(s, scale);
	}
	/* Cut: as many characters as fit together with "..". */
	fits = (max_w + scale) / adv - 2;
	if (fits < 1)
		return 0;
	for (int i = 0; i < fits; i++)
		draw_glyph(c, x + i * adv, y, (unsigned char)s[i], col, scale);
	draw_glyph(c, x + fits * adv, y, '.', col, scale);
	draw_glyph(c, x + (fits + 1) * adv, y, '.', col, scale);
	return (fits + 2) * adv - scale;
}

#ifdef KPT_HAVE_PNG
struct png_sink {
	struct kpt_diag *d;
	const char *path;
};

static void png_error_fn(png_structp png, png_const_charp msg)
{
	struct png_sink *s = png_get_error_ptr(png);

	kpt_diag_set(s->d, KPT_E_IO, "cannot write '%s': libpng: %s", s->path, msg);
	png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* Kept out of kpt_canvas_write_png so no local there is live across setjmp. */
static int png_encode(const struct kpt_canvas *c, FILE *fp, struct png_sink *sink)
{
	png_structp png;
	png_infop info = NULL;
	volatile int rc = 0;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, png_error_fn, png_warning_fn);
	if (!png)
		return kpt_diag_set(sink->d, KPT_E_NOMEM, "out of memory in libpng");
	info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		return kpt_diag_set(sink->d, KPT_E_NOMEM, "out of memory in libpng");
	}
	if (setjmp(png_jmpbuf(png))) {
		rc = KPT_E_IO;
	} else {
		png_init_io(png, fp);
		/* Flat-colour pictures: a fast zlib level loses little here. */
		png_set_compression_level(png, 3);
		png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB,
			     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
		png_write_info(png, info);
		for (int y = 0; y < c->h; y++)
			png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
		png_write_end(png, NULL);
	}
	png_destroy_write_struct(&png, &info);
	return rc;
}

int kpt_canvas_write_png(const struct kpt_canvas *c, const char *path, struct kpt_diag *d)
{
	struct png_sink sink = { d, path };
	FILE *fp;
	int rc;

	if ((rc = kpt_out_create(path, &fp, d)) < 0)
		return rc;
	rc = png_encode(c, fp, &sink);
	if (rc != 0) {
		kpt_out_discard(fp, path);
		return rc;
	}
	return kpt_out_publish(fp, path, 0, d);
}
#else
int kpt_canvas_write_png(const struct kpt_canvas *c, const char *path, struct kpt_diag *d)
{
	(void)c;
	kpt_diag_set(d, KPT_E_UNSUPPORTED, "cannot write '%s': kptprof was built without libpng", path);
	return kpt_diag_hint(d, "install libpng-dev and rebuild");
}
#endif
