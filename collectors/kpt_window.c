/* kpt_window.c - capture windows (kpt_window.h). No CUDA: unit-tested on
 * CPU, linked into the collector and into kptprof. */
#include "kpt_window.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_grow.h"

/* A whole decimal number with nothing after it. */
static int parse_u64(const char *s, const char *end, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || e != end)
		return -1;
	*out = v;
	return 0;
}

/* Seconds as decimal digits with at most one '.' ("2", "0.5", ".25"):
 * strtod alone would take hex ("0x10"), "inf", "nan", signs and exponents.
 * positive: a duration, more than 0 (0 ns would be no window at all, and
 * read as "to the end"). */
static int parse_seconds(const char *opt, const char *s, int positive, uint64_t *ns, struct kpt_diag *d)
{
	size_t digits = strspn(s, "0123456789"), frac = 0;
	char *e;
	double v;

	if (s[digits] == '.')
		frac = strspn(s + digits + 1, "0123456789");
	errno = 0;
	v = digits + frac ? strtod(s, &e) : 0;
	if (!digits && !frac)
		e = (char *)s;
	if (!*s || *e || e != s + digits + (s[digits] == '.') + frac || errno || !isfinite(v) || v > 1e7)
		return kpt_diag_set(d, KPT_E_INVAL, "bad %s '%s': want seconds in decimal, %s to 10000000", opt, s,
				    positive ? "more than 0" : "0");
	*ns = (uint64_t)llround(v * 1e9);
	if (positive && *ns == 0)
		return kpt_diag_set(d, KPT_E_INVAL, "bad %s '%s': want seconds, more than 0 (without %s the window "
				    "lasts to the end)", opt, s, opt);
	return 0;
}

static int copy_name(const char *what, const char *s, size_t n, char *out, struct kpt_diag *d)
{
	if (n == 0)
		return kpt_diag_set(d, KPT_E_INVAL, "bad --capture-range: empty %s", what);
	if (n >= KPT_WINDOW_NAME_MAX)
		return kpt_diag_set(d, KPT_E_INVAL, "bad --capture-range: %s longer than %d bytes", what,
				    KPT_WINDOW_NAME_MAX - 1);
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int parse_capture(const char *c, struct kpt_window_spec *spec, struct kpt_diag *d)
{
	const char *name, *at;
	int rc;

	if (strcmp(c, "cudaProfilerApi") == 0) {
		spec->trigger = KPT_WINDOW_PROFILER_API;
		return 0;
	}
	if (strncmp(c, "nvtx:", 5) != 0) {
		rc = kpt_diag_set(d, KPT_E_INVAL, "bad --capture-range '%s'", c);
		kpt_diag_hint(d, "want cudaProfilerApi or nvtx:NAME[@DOMAIN]");
		return rc;
	}
	name = c + 5;
	at = strrchr(name, '@');
	if ((rc = copy_name("range name", name, at ? (size_t)(at - name) : strlen(name), spec->range, d)) < 0)
		return rc;
	if (at && (rc = copy_name("domain", at + 1, strlen(at + 1), spec->domain, d)) < 0)
		return rc;
	spec->trigger = KPT_WINDOW_NVTX;
	return 0;
}

int kpt_window_parse(const char *capture, const char *steps, const char *every, const char *delay,
		     const char *duration, struct kpt_window_spec *spec, struct kpt_diag *d)
{
	int rc;

	memset(spec, 0, sizeof *spec);
	if (capture && (rc = parse_capture(capture, spec, d)) < 0)
		return rc;
	if (steps && every)
		return kpt_diag_set(d, KPT_E_INVAL, "--steps and --every exclude each other");
	if ((steps || every) && spec->trigger == KPT_WINDOW_PROFILER_API)
		return kpt_diag_set(d, KPT_E_INVAL, "--%s counts NVTX ranges: not with --capture-range cudaProfilerApi",
				    steps ? "steps" : "every");
	if (steps) {
		const char *dash = strchr(steps, '-'), *end = steps + strlen(steps);

		if (dash ? parse_u64(steps, dash, &spec->first) < 0 || parse_u64(dash + 1, end, &spec->last) < 0 :
			   parse_u64(steps, end, &spec->first) < 0)
			return kpt_diag_set(d, KPT_E_INVAL, "bad --steps '%s': want A-B, two step numbers", steps);
		if (!dash)
			spec->last = spec->first;
		if (spec->first > spec->last)
			return kpt_diag_set(d, KPT_E_INVAL, "bad --steps '%s': the first step is after the last", steps);
		spec->steps = 1;
	}
	if (every && (parse_u64(every, every + strlen(every), &spec->every) < 0 || spec->every < 1))
		return kpt_diag_set(d, KPT_E_INVAL, "bad --every '%s': want a whole number of steps, 1 or more", every);
	if ((steps || every) && spec->trigger == KPT_WINDOW_ALWAYS) {
		strcpy(spec->range, "kpt:iter");
		spec->trigger = KPT_WINDOW_NVTX;
	}
	spec->preroll = steps || every;
	if (delay && (rc = parse_seconds("--delay", delay, 0, &spec->delay_ns, d)) < 0)
		return rc;
	if (duration && (rc = parse_seconds("--duration", duration, 1, &spec->duration_ns, d)) < 0)
		return rc;
	spec->timed = delay || duration;
	return 0;
}

int kpt_window_parse_sampling(const char *sample_every, const char *sample_steps, const char *on_demand,
			      struct kpt_window_spec *spec, struct kpt_diag *d)
{
	const char *opt = sample_every ? "--sample-every" : "--on-demand";
	int rc;

	if (on_demand && (!*on_demand || strcmp(on_demand, "0") == 0))
		on_demand = NULL;
	if (sample_steps && !sample_every && !on_demand)
		return kpt_diag_set(d, KPT_E_INVAL, "--sample-steps needs --sample-every or --on-demand");
	if (!sample_every && !on_demand)
		return 0;
	if (spec->trigger == KPT_WINDOW_PROFILER_API)
		return kpt_diag_set(d, KPT_E_INVAL, "%s picks steps of an NVTX range: not with --capture-range "
				    "cudaProfilerApi", opt);
	if (spec->steps || spec->every || spec->timed)
		return kpt_diag_set(d, KPT_E_INVAL, "%s and %s exclude each other", opt,
				    spec->steps ? "--steps" : spec->every ? "--every" : "--delay or --duration");
	if (sample_every && (rc = parse_seconds("--sample-every", sample_every, 1, &spec->sample_ns, d)) < 0)
		return rc;
	spec->sample_steps = 1;
	if (sample_steps && (parse_u64(sample_steps, sample_steps + strlen(sample_steps), &spec->sample_steps) < 0 ||
			     spec->sample_steps < 1 || spec->sample_steps > KPT_WINDOW_SAMPLE_STEPS_MAX))
		return kpt_diag_set(d, KPT_E_INVAL, "bad --sample-steps '%s': want a whole number of steps, 1 to %d",
				    sample_steps, KPT_WINDOW_SAMPLE_STEPS_MAX);
	spec->on_demand = on_demand != NULL;
	if (spec->trigger == KPT_WINDOW_ALWAYS) {
		strcpy(spec->range, "kpt:iter");
		spec->trigger = KPT_WINDOW_NVTX;
	}
	spec->preroll = 1;
	return 0;
}

int kpt_window_sampled(const struct kpt_window_spec *spec)
{
	return spec->sample_ns > 0 || spec->on_demand;
}

int kpt_window_is_set(const struct kpt_window_spec *spec)
{
	return spec->trigger != KPT_WINDOW_ALWAYS || spec->timed;
}

/* Appends to out (cap bytes) at *n; *n counts what would have been written. */
static void append(char *out, size_t cap, int *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf((size_t)*n < cap ? out + *n : NULL, (size_t)*n < cap ? cap - (size_t)*n : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n += k;
}

int kpt_window_describe(const struct kpt_window_spec *s, char *out, unsigned long cap)
{
	int n = 0;

	if (cap)
		out[0] = '\0';
	if (s->trigger == KPT_WINDOW_PROFILER_API) {
		append(out, cap, &n, "cudaProfilerStart..cudaProfilerStop");
	} else if (s->trigger == KPT_WINDOW_NVTX) {
		if (kpt_window_sampled(s)) {
			if (s->sample_steps > 1)
				append(out, cap, &n, "%llu steps ", (unsigned long long)s->sample_steps);
			else
				append(out, cap, &n, "one step ");
			if (s->sample_ns)
				append(out, cap, &n, "every %.3f s%s", (double)s->sample_ns / 1e9,
				       s->on_demand ? " and " : "");
			if (s->on_demand)
				append(out, cap, &n, "on demand");
			append(out, cap, &n, " of ");
		} else if (s->steps)
			append(out, cap, &n, "steps %llu-%llu of ", (unsigned long long)s->first,
			       (unsigned long long)s->last);
		else if (s->every)
			append(out, cap, &n, "one step in %llu (0, %llu, ...) of ", (unsigned long long)s->every,
			       (unsigned long long)s->every);
		else
			append(out, cap, &n, "every ");
		append(out, cap, &n, "range '%s'", s->range);
		if (s->domain[0])
			append(out, cap, &n, " of domain '%s'", s->domain);
	}
	if (s->timed) {
		append(out, cap, &n, "%sfrom %.3f s", n ? ", " : "", (double)s->delay_ns / 1e9);
		if (s->duration_ns)
			append(out, cap, &n, " for %.3f s", (double)s->duration_ns / 1e9);
		else
			append(out, cap, &n, " to the end");
	}
	if (!n)
		append(out, cap, &n, "the whole process");
	return n;
}

static int picked(const struct kpt_window *w, uint64_t step)
{
	const struct kpt_window_spec *s = &w->spec;

	if (kpt_window_sampled(s))
		return w->cap_n && step >= w->cap_from && step - w->cap_from < w->cap_n;
	if (s->steps)
		return step >= s->first && step <= s->last;
	if (s->every)
		return step % s->every == 0;
	return 1;
}

static int update(struct kpt_window *w)
{
	int trig, on, pre;

	switch (w->spec.trigger) {
	case KPT_WINDOW_PROFILER_API:
		trig = w->profiler_on;
		break;
	case KPT_WINDOW_NVTX:
		trig = w->step_on;
		break;
	default:
		trig = 1;
		break;
	}
	on = trig && (!w->spec.timed || w->time_on);
	/* the step after the last one opened is picked: this step (or the gap
	 * after it) runs up to a window */
	pre = !on && w->spec.preroll && w->spec.trigger == KPT_WINDOW_NVTX && w->steps_seen > 0 &&
	      picked(w, w->steps_seen) && (!w->spec.timed || w->time_on);
	if (on && !w->on)
		w->windows++;
	if (pre && !w->preroll)
		w->prerolls++;
	w->on = on;
	w->preroll = pre;
	return on;
}

int kpt_window_tracing(const struct kpt_window *w)
{
	return w->on || w->preroll;
}

int kpt_window_done(const struct kpt_window *w)
{
	const struct kpt_window_spec *s = &w->spec;

	if (w->on || w->preroll)
		return 0;
	if (s->timed && s->duration_ns && w->time_over)
		return 1;
	return s->trigger == KPT_WINDOW_NVTX && s->steps && w->steps_seen > s->last && !w->step_on;
}

int kpt_window_init(struct kpt_window *w, const struct kpt_window_spec *spec)
{
	memset(w, 0, sizeof *w);
	w->spec = *spec;
	w->time_on = spec->delay_ns == 0;
	w->next_sample_ns = spec->sample_ns;
	return update(w);
}

static int is_step_range(const struct kpt_window *w, const char *name, const char *domain)
{
	if (w->spec.trigger != KPT_WINDOW_NVTX || !name || strcmp(name, w->spec.range) != 0)
		return 0;
	if (!domain)
		domain = "";
	return strcmp(domain, w->spec.domain) == 0;
}

/* A sampled run at the opening of step s (time t): a capture armed when
 * one is due (the clock's, or a request) and none is armed or running. */
static void sample_arm(struct kpt_window *w, uint64_t s, uint64_t t)
{
	const struct kpt_window_spec *sp = &w->spec;
	uint64_t pre = sp->preroll ? 1 : 0, n = 0;

	/* armed or running: the pre-roll step and the capture's, [from - pre, from + n) */
	if (w->cap_n && s >= w->cap_from - pre && s < w->cap_from + w->cap_n)
		return;
	if (w->request_steps) {
		n = w->request_steps;
		w->request_steps = 0;
	} else if (sp->sample_ns && t >= w->next_sample_ns) {
		n = sp->sample_steps;
		w->next_sample_ns = t + sp->sample_ns;
	}
	if (!n)
		return;
	w->cap_from = s + pre;
	w->cap_n = n;
	w->captures++;
}

int kpt_window_range_open_at(struct kpt_window *w, const char *name, const char *domain, uint64_t t)
{
	if (is_step_range(w, name, domain) && w->open++ == 0) {
		if (kpt_window_sampled(&w->spec))
			sample_arm(w, w->steps_seen, t);
		w->step_on = picked(w, w->steps_seen++);
	}
	return update(w);
}

int kpt_window_range_open(struct kpt_window *w, const char *name, const char *domain)
{
	return kpt_window_range_open_at(w, name, domain, 0);
}

void kpt_window_request(struct kpt_window *w, uint64_t nsteps)
{
	if (!nsteps)
		nsteps = w->spec.sample_steps ? w->spec.sample_steps : 1;
	if (nsteps > w->request_steps)
		w->request_steps = nsteps;
	w->requests++;
}

int kpt_window_idle(const struct kpt_window *w)
{
	return !kpt_window_tracing(w);
}

int kpt_window_range_close(struct kpt_window *w, const char *name, const char *domain)
{
	if (is_step_range(w, name, domain) && w->open > 0 && --w->open == 0)
		w->step_on = 0;
	return update(w);
}

int kpt_window_profiler(struct kpt_window *w, int start)
{
	w->profiler_on = start != 0;
	return update(w);
}

int kpt_window_clock(struct kpt_window *w, uint64_t t)
{
	const struct kpt_window_spec *s = &w->spec;

	w->time_on = t >= s->delay_ns && (s->duration_ns == 0 || t - s->delay_ns < s->duration_ns);
	w->time_over = s->duration_ns && t >= s->delay_ns && t - s->delay_ns >= s->duration_ns;
	return update(w);
}

uint64_t kpt_window_next_tick(const struct kpt_window *w, uint64_t t)
{
	const struct kpt_window_spec *s = &w->spec;

	if (!s->timed)
		return UINT64_MAX;
	if (t < s->delay_ns)
		return s->delay_ns;
	if (s->duration_ns && t - s->delay_ns < s->duration_ns)
		return s->delay_ns + s->duration_ns;
	return UINT64_MAX;
}

/* a comes after b, for correlation ids that wrap at 32 bits */
static int corr_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

int kpt_preroll_begin(struct kpt_preroll_log *l, uint32_t corr_seen)
{
	if (kpt_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v) < 0)
		return KPT_E_NOMEM;
	l->v[l->n++] = (struct kpt_preroll){ .after = corr_seen, .open_ns = UINT64_MAX };
	return 0;
}

void kpt_preroll_end(struct kpt_preroll_log *l, uint32_t corr_seen, uint64_t open_ns)
{
	struct kpt_preroll *p;

	if (!l->n || (p = &l->v[l->n - 1])->ended)
		return;
	p->last = corr_seen;
	p->open_ns = open_ns;
	p->ended = 1;
}

enum kpt_preroll_class kpt_preroll_classify(const struct kpt_preroll_log *l, uint32_t corr, uint64_t start_ns,
					    uint64_t end_ns, uint64_t *into_ns)
{
	for (size_t i = l->n; i-- > 0;) {
		const struct kpt_preroll *p = &l->v[i];

		if (!corr_after(corr, p->after))
			continue;           /* launched before this period: an earlier one's, or a window's */
		if (p->ended && corr_after(corr, p->last))
			return KPT_PREROLL_NOT;  /* launched after its window opened */
		/* Launched in the period. Still open: the record is complete, so
		 * the kernel ended before now, before the window opens. */
		if (!p->ended || end_ns <= p->open_ns)
			return KPT_PREROLL_BEFORE;
		if (into_ns)
			*into_ns = end_ns - (start_ns > p->open_ns ? start_ns : p->open_ns);
		return KPT_PREROLL_INTO;
	}
	return KPT_PREROLL_NOT;
}

void kpt_preroll_log_free(struct kpt_preroll_log *l)
{
	free(l->v);
	*l = (struct kpt_preroll_log){ 0 };
}
