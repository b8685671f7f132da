/* kpt_baseline_history.c - the history kind: the newest N sessions of
 * (suite, GPU model, branch) in the history store, as one diff side
 * (kpt_history_gate_side). The store keeps no idle gap: settle_us is -1. */
#include <stdio.h>

#include "kpt_baseline_private.h"
#include "kpt_diff.h"
#include "kpt_history.h"

static int history_open(struct kpt_baseline *b, struct kpt_diag *d)
{
	struct kpt_history_open_opts oo = { .read_only = 1 };
	const char *branch = b->where.branch ? b->where.branch : "main";
	uint32_t n = b->where.nsessions ? b->where.nsessions : KPT_HISTORY_GATE_SESSIONS;
	const struct kpt_history_session *s;
	int rc;

	if ((rc = kpt_history_open(b->where.db, &oo, &b->h, d)) < 0 ||
	    (rc = kpt_history_gate_side(b->h, b->suite, b->slug, branch, n, &b->set, &b->side, d)) < 0)
		return rc;
	s = b->set->sessions;
	b->desc.where = kpt_history_where(b->h);
	b->desc.backend = kpt_history_backend(b->h);
	b->desc.branch = branch;
	b->desc.sessions = b->set->nsessions;
	for (size_t i = 0; i < b->set->nsessions; i++)
		b->desc.runs += s[i].runs;
	b->desc.first_commit = s[0].commit;
	b->desc.last_commit = s[b->set->nsessions - 1].commit;
	b->desc.first_added = s[0].added;
	b->desc.last_added = s[b->set->nsessions - 1].added;
	return 0;
}

static long history_settle_us(struct kpt_baseline *b)
{
	(void)b;
	return -1;
}

static void history_close(struct kpt_baseline *b)
{
	kpt_diff_side_destroy(b->side);
	kpt_history_set_destroy(b->set);
	kpt_history_close(b->h);
}

const struct kpt_baseline_ops kpt_baseline_history_ops = {
	.name = "history",
	.open = history_open,
	.settle_us = history_settle_us,
	.close = history_close,
};
