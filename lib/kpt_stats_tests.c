/* kpt_stats_tests.c - Student's t, Holm, Mann-Whitney U: the tests of the
 * decision rule (analyzer/diff/kpt_rule_*.c). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"
#include "kpt_stats.h"

/* Continued fraction of the regularised incomplete beta (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, dd = 1 - (a + b) * x / (a + 1), h;

	if (fabs(dd) < tiny)
		dd = tiny;
	dd = 1 / dd;
	h = dd;
	for (int m = 1; m <= 500; m++) {
		double m2 = 2.0 * m, num, delta;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		dd = 1 + num * dd;
		c = 1 + num / c;
		dd = fabs(dd) < tiny ? 1 / tiny : 1 / dd;
		c = fabs(c) < tiny ? tiny : c;
		h *= dd * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		dd = 1 + num * dd;
		c = 1 + num / c;
		dd = fabs(dd) < tiny ? 1 / tiny : 1 / dd;
		c = fabs(c) < tiny ? tiny : c;
		delta = dd * c;
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return h;
}

/* I_x(a, b), 0 <= x <= 1. */
static double beta_reg(double a, double b, double x)
{
	double lf;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lf = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lf) * beta_cf(a, b, x) / a;
	return 1 - exp(lf) * beta_cf(b, a, 1 - x) / b;
}

double kpt_t_pvalue(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0;
	return beta_reg(df / 2, 0.5, df / (df + t * t));
}

double kpt_t_quantile(double q, double df)
{
	double tail, lo = 0, hi = 1;

	if (!(q > 0 && q < 1) || !(df > 0))
		return NAN;
	if (q == 0.5)
		return 0;
	tail = q > 0.5 ? 1 - q : q; /* one-sided tail beyond |t| */
	while (kpt_t_pvalue(hi, df) / 2 > tail && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (kpt_t_pvalue(mid, df) / 2 > tail)
			lo = mid;
		else
			hi = mid;
	}
	return q > 0.5 ? (lo + hi) / 2 : -(lo + hi) / 2;
}

/* P(a, x), the regularised lower incomplete gamma: its series below
 * a + 1, else 1 - the continued fraction of Q (modified Lentz). */
static double gamma_p(double a, double x)
{
	const double tiny = 1e-300;
	double lf, b, c, dd, h;

	if (x <= 0)
		return 0;
	lf = a * log(x) - x - lgamma(a);
	if (x < a + 1) {
		double sum = 1 / a, term = sum;

		for (int n = 1; n < 1000; n++) {
			term *= x / (a + n);
			sum += term;
			if (fabs(term) < fabs(sum) * 1e-16)
				break;
		}
		return sum * exp(lf);
	}
	b = x + 1 - a;
	c = 1 / tiny;
	dd = 1 / b;
	h = dd;
	for (int i = 1; i < 1000; i++) {
		double an = -i * (i - a), delta;

		b += 2;
		dd = an * dd + b;
		dd = fabs(dd) < tiny ? tiny : dd;
		c = b + an / c;
		c = fabs(c) < tiny ? tiny : c;
		dd = 1 / dd;
		delta = dd * c;
		h *= delta;
		if (fabs(delta - 1) < 1e-15)
			break;
	}
	return 1 - exp(lf) * h;
}

double kpt_chi2_quantile(double q, double df)
{
	double lo = 0, hi = df > 1 ? df : 1;

	if (!(q > 0 && q < 1) || !(df > 0))
		return NAN;
	while (gamma_p(df / 2, hi / 2) < q && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (gamma_p(df / 2, mid / 2) < q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	double x = ((const struct pidx *)a)->p, y = ((const struct pidx *)b)->p;

	return (x > y) - (x < y);
}

int kpt_holm(double *p, size_t n)
{
	struct pidx *v = malloc((n ? n : 1) * sizeof *v);
	size_t m = 0;
	double run = 0;

	if (!v)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			v[m++] = (struct pidx){ p[i], i };
	qsort(v, m, sizeof *v, cmp_pidx);
	for (size_t j = 0; j < m; j++) {
		double adj = (double)(m - j) * v[j].p;

		if (adj > 1)
			adj = 1;
		if (adj > run)
			run = adj;
		p[v[j].i] = run;
	}
	free(v);
	return 0;
}

struct tagged {
	double x;
	int from_a;
};

static int cmp_tagged(const void *a, const void *b)
{
	double x = ((const struct tagged *)a)->x, y = ((const struct tagged *)b)->x;

	return (x > y) - (x < y);
}

double kpt_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
	size_t n = na + nb;
	struct tagged *v;
	double ra = 0, ties = 0, u, mu, var, z;

	if (!na || !nb)
		return NAN;
	v = malloc(n * sizeof *v);
	if (!v)
		return NAN;
	for (size_t i = 0; i < na; i++)
		v[i] = (struct tagged){ a[i], 1 };
	for (size_t i = 0; i < nb; i++)
		v[na + i] = (struct tagged){ b[i], 0 };
	qsort(v, n, sizeof *v, cmp_tagged);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double rank, t;

		while (j + 1 < n && v[j + 1].x == v[i].x)
			j++;
		rank = (double)(i + j) / 2 + 1; /* mean of ranks i+1..j+1 */
		for (size_t k = i; k <= j; k++)
			if (v[k].from_a)
				ra += rank;
		t = (double)(j - i + 1);
		ties += t * t * t - t;
		i = j + 1;
	}
	free(v);
	u = ra - (double)na * (double)(na + 1) / 2;
	mu = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 *
	      ((double)(n + 1) - ties / ((double)n * (double)(n - 1) > 0 ? (double)n * (double)(n - 1) : 1));
	if (!(var > 0))
		return 1;
	z = (fabs(u - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	return erfc(z / M_SQRT2);
}
