/* kpt_range_index.h - NVTX range id -> row index of a file's range table.
 *
 * Range ids are unique within a file but not positions. Ids are usually
 * dense (0..n-1 in any order): then a direct table, O(n) time and 4 bytes
 * per id; otherwise a sorted copy searched in O(log n).
 */
#ifndef KPT_RANGE_INDEX_H
#define KPT_RANGE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_model.h"

struct kpt_range_index {
	uint32_t min_id;
	uint32_t *direct;           /* [span] row index or UINT32_MAX; NULL: sorted */
	size_t span;
	struct kpt_range_id {
		uint32_t id, idx;
	} *sorted;
	size_t n;
};

/* Builds the index of rows[0..n-1]; KPT_E_NOMEM (the index is then empty
 * but may be released). */
int kpt_range_index_build(struct kpt_range_index *ri, const struct kpt_range *rows, size_t n);
/* Row index of range id, or -1 when no row has it. */
long kpt_range_index_find(const struct kpt_range_index *ri, uint32_t id);
void kpt_range_index_release(struct kpt_range_index *ri);

#endif
