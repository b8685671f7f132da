"""round_stats.py - what the rounds summaries of bench/kernels share
(moe_rounds.py, attn_rounds.py, rounds_summary.py)."""
import random
import statistics


def boot(xs, n=4000, seed=1):
    """95% bootstrap interval of the median of xs (n resamples, fixed seed)."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]
