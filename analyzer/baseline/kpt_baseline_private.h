/* kpt_baseline_private.h - what the kinds of kpt_baseline.h share: the
 * object, the ops table each kind fills, and the helpers of the folder
 * kind's reading and writing. Not for use outside analyzer/baseline/. */
#ifndef KPT_BASELINE_PRIVATE_H
#define KPT_BASELINE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_baseline.h"

struct kpt_history;
struct kpt_history_set;

/* One kind. open fills the kind's part of b (b->slug, b->suite and
 * b->where are set before); settle_us and close as the public calls. */
struct kpt_baseline_ops {
	const char *name;           /* "folder", "history" */
	int (*open)(struct kpt_baseline *b, struct kpt_diag *d);
	long (*settle_us)(struct kpt_baseline *b);
	void (*close)(struct kpt_baseline *b);
};

extern const struct kpt_baseline_ops kpt_baseline_folder_ops, kpt_baseline_history_ops;

struct kpt_baseline {
	const struct kpt_baseline_ops *ops;
	char slug[KPT_BASELINE_NAME_MAX + 1], suite[KPT_BASELINE_NAME_MAX + 1];
	struct kpt_baseline_where where;
	struct kpt_baseline_desc desc;
	/* folder: the folder (or the one file) and its session files */
	char *path;
	char **files;
	size_t nfiles;
	/* history */
	struct kpt_history *h;
	struct kpt_history_set *set;
	struct kpt_diff_side *side;
};

/* "/proc/self/fd/<dirfd>/<name>" into buf: name inside the folder dirfd
 * was opened on, whatever its path now leads to. 0, or -1 too long. */
int kpt_baseline_fd_path(int dirfd, const char *name, char *buf, size_t cap);

#endif
