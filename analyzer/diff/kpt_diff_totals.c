/* kpt_diff_totals.c - totals over all keys, per workload and per NVTX
 * range: verdict counts, summed times and the geometric mean change.
 * A step of kpt_diff_compare (kpt_diff_steps.h). O(rows). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff_steps.h"

struct total_acc {
	struct kpt_diff_total t;
	double sumlog;
};

static int totals_add(struct kpt_rule_ctx *c, struct kpt_strtab *names, struct total_acc **acc,
		      uint32_t *nacc, enum kpt_total_kind kind, const char *name,
		      const struct kpt_diff_row *r)
{
	char key[2] = { (char)('0' + kind), 0 };
	size_t ln = strlen(name);
	char *tmp = malloc(ln + 2);
	uint32_t id;
	int rc;

	if (!tmp)
		return KPT_E_NOMEM;
	tmp[0] = key[0];
	memcpy(tmp + 1, name, ln + 1);
	rc = kpt_strtab_intern(names, tmp, ln + 1, &id);
	free(tmp);
	if (rc < 0)
		return rc;
	if (id >= *nacc) {
		struct total_acc *t = realloc(*acc, (id + 1) * sizeof *t);

		if (!t)
			return KPT_E_NOMEM;
		*acc = t;
		memset(&t[id], 0, sizeof t[id]);
		t[id].t.kind = kind;
		t[id].t.name = kpt_rule_adup(c, name);
		if (!t[id].t.name)
			return KPT_E_NOMEM;
		*nacc = id + 1;
	}
	(*acc)[id].t.verdicts[r->verdict]++;
	if (r->verdict == KPT_V_NEW || r->verdict == KPT_V_GONE || isnan(r->base_ns) || isnan(r->new_ns))
		return 0;
	(*acc)[id].t.keys++;
	(*acc)[id].t.base_ns += r->base_ns;
	(*acc)[id].t.new_ns += r->new_ns;
	(*acc)[id].sumlog += log(r->new_ns / r->base_ns);
	return 0;
}

static int cmp_totals(const void *pa, const void *pb)
{
	const struct kpt_diff_total *a = pa, *b = pb;

	if (a->kind != b->kind)
		return b->kind - a->kind; /* ALL, WORKLOAD, RANGE */
	return strcmp(a->name, b->name);
}

int kpt_diff_make_totals(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	struct kpt_strtab names;
	struct total_acc *acc = NULL;
	uint32_t nacc = 0;
	int rc = 0;

	kpt_strtab_init(&names);
	for (size_t i = 0; i < df->nrows && rc == 0; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		rc = totals_add(c, &names, &acc, &nacc, KPT_TOTAL_ALL, "all", r);
		if (rc == 0)
			rc = totals_add(c, &names, &acc, &nacc, KPT_TOTAL_WORKLOAD, r->workload, r);
		if (rc == 0)
			rc = totals_add(c, &names, &acc, &nacc, KPT_TOTAL_RANGE, r->path, r);
	}
	kpt_strtab_release(&names);
	if (rc == 0 && nacc) {
		df->totals = kpt_arena_alloc(c->a, nacc * sizeof *df->totals);
		if (!df->totals)
			rc = KPT_E_NOMEM;
	}
	for (uint32_t i = 0; rc == 0 && i < nacc; i++) {
		struct kpt_diff_total *t = &acc[i].t;

		t->change_pct = t->keys ? kpt_rule_pct(log(t->new_ns / t->base_ns)) : NAN;
		t->geomean_change_pct = t->keys ? kpt_rule_pct(acc[i].sumlog / t->keys) : NAN;
		df->totals[i] = *t;
	}
	if (rc == 0) {
		df->ntotals = nacc;
		if (nacc > 1) /* totals is NULL when there are none */
			qsort(df->totals, nacc, sizeof *df->totals, cmp_totals);
	}
	free(acc);
	return rc;
}
