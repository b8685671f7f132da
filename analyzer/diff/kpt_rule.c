/* kpt_rule.c - what the decision rules share (kpt_rule.h): the duration
 * buckets and their between-machine prior, medians, arena strings, notes,
 * and the choice of a rule. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_rule.h"

double kpt_rule_pct(double logratio)
{
	return 100 * expm1(logratio);
}

/* The between-session SD assumed for one key when the base has one
 * session, by the key's duration: about the 90th percentile, over the
 * H100 and the H200, of the per-key between-session SDs measured on the
 * cross-machine pool (10 H100 and 5 H200 machines, 2026-11-24, keys as
 * compared: aggregated; 308f1d3:bench/analyzer/pool-20261124, whose kept
 * sessions are in tests/data: baselines-20261124/, heldout_*_pool.kpt, see
 * tests/data/README.collector.md; docs/decision-rule.md "Sessions"). A
 * prior, not a measurement: the report says so. */
static const struct {
	double below_ns, sd_pct;
} between_prior[] = {
	{ 10e3, 3.5 },      /* under 10 us: p90 3.3% (H100), 4.1% (H200) */
	{ 50e3, 1.1 },      /* 10-50 us: 1.13%, 0.66% */
	{ 200e3, 1.1 },     /* 50-200 us: 1.07%, 1.06% */
	{ INFINITY, 1.8 },  /* 200 us and longer: 1.89%, 1.59% */
};

double kpt_diff_between_prior_pct(double centre_ns)
{
	size_t i = 0;

	while (i + 1 < sizeof between_prior / sizeof between_prior[0] && !(centre_ns < between_prior[i].below_ns))
		i++;
	return between_prior[i].sd_pct;
}

/* Duration buckets for shrinking between-session estimates (the prior
 * table's rows). */
uint32_t kpt_rule_bucket(double centre_ns)
{
	uint32_t i = 0;

	while (i + 1 < sizeof between_prior / sizeof between_prior[0] && !(centre_ns < between_prior[i].below_ns))
		i++;
	return i;
}


double kpt_rule_bucket_prior_pct(uint32_t bucket)
{
	return between_prior[bucket < KPT_RULE_NBUCKETS ? bucket : KPT_RULE_NBUCKETS - 1].sd_pct;
}

_Static_assert(sizeof between_prior / sizeof between_prior[0] == KPT_RULE_NBUCKETS, "one prior per bucket");

double kpt_rule_floor_log(const struct kpt_rule_ctx *c, double centre)
{
	double f = c->o.noise_floor_pct / 100;

	return c->o.noise_floor_ns / centre > f ? c->o.noise_floor_ns / centre : f;
}

int kpt_rule_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n), reordering v. */
double kpt_rule_median(double *v, size_t n)
{
	if (n > 1) /* v may be NULL when n is 0 */
		qsort(v, n, sizeof *v, kpt_rule_cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *kpt_rule_adup(struct kpt_rule_ctx *c, const char *s)
{
	return kpt_arena_strndup(c->a, s ? s : "", s ? strlen(s) : 0);
}

const char *kpt_rule_afmt(struct kpt_rule_ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = kpt_arena_vprintf(c->a, fmt, ap);
	va_end(ap);
	return s;
}

void kpt_diff_family(const char *workload, const char *name, char *buf, size_t size)
{
	static const char anon[] = "(anonymous namespace)::";
	const char *dot = strchr(workload, '.'), *end, *start = name;
	size_t wl = dot ? (size_t)(dot - workload) : strlen(workload), kl;

	/* "void (anonymous namespace)::attn_fwd_kernel<...>(...)" -> "attn" */
	if (strncmp(start, "void ", 5) == 0)
		start += 5;
	while (strncmp(start, anon, sizeof anon - 1) == 0)
		start += sizeof anon - 1;
	end = start + strcspn(start, "<(");
	for (const char *p = start; p + 1 < end; p++)
		if (p[0] == ':' && p[1] == ':')
			start = p + 2;
		else if (p[0] == ' ')
			start = p + 1;
	kl = strcspn(start, "_<( ");
	snprintf(buf, size, "%.*s/%.*s", (int)(wl > 64 ? 64 : wl), workload, (int)(kl > 64 ? 64 : kl), start);
}

void kpt_rule_note(struct kpt_rule_ctx *c, const char *what, int severe, const char *text)
{
	struct kpt_rule_notes *N = c->notes;

	if (!text || !N || N->n == sizeof N->v / sizeof N->v[0])
		return;
	N->v[N->n++] = (struct kpt_diff_note){ what, text, severe };
}

const struct kpt_rule_ops *kpt_rule_pick(const struct kpt_diff_opts *o)
{
	if (o->method == KPT_DIFF_POOLED_U)
		return &kpt_rule_pooled_u;
	return o->paired ? &kpt_rule_paired : &kpt_rule_machine;
}
