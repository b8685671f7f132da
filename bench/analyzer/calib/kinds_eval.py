#!/usr/bin/env python3
"""kinds_eval.py - would the rule hear more across machines if it knew a
host's kind? A prototype, leave one host out, on recordings of one program
from many hosts (one session each, >= 3 runs).

    kinds_eval.py KPTPROF SESSION.kpt... [--min-us 0] [--seed 1] [--per-family] [--family F]

Per key (the keys kptprof diff compares; see host_types.py) and host: the
mean m of log run medians and its run-to-run variance w / runs. Held out in
turn, each host is NEW against the others (the base, S hosts). Two models
of the between-host part, the same simplified verdict for both (no
calibration, no family shift, no Holm: this compares models, it is not the
rule):

  one population  NEW's key ~ mean of the base +- t(S-1) sqrt(b (1 + 1/S)
                  + w_new), b the variance of the base's means;
  two kinds       the base's hosts split in two by 2-means on their
                  signatures (each key's deviation from the base mean over
                  its SD across the base, all keys at once); NEW goes to the
                  kind whose centre its own signature is nearer to, in the
                  median over keys of the squared difference (one key that
                  moved cannot carry it over); NEW's key ~ mean of its kind
                  +- t(S-2) sqrt(b_w (1 + 1/n_kind) + w_new), b_w the pooled
                  variance within the kinds. The split is kept only when
                  each kind holds 3 hosts or more and it explains more of
                  the signatures than 2-means does on 95% of 40 shuffles
                  (each key's values shuffled across hosts on its own: no
                  structure that keys share); else one population.

Verdicts at kptprof's thresholds (5% under 10 us, 2%, 1% from 200 us; 95%
intervals): SAME when the interval lies within +-thr, SLOW when its lower
end is above thr, else AMBG. A/A: NEW as recorded. Plants: one key of NEW
at a time times 1.05 (keys >= 50 us) or 1.02 (>= 200 us), NEW's kind
assigned after the plant. Prints both models' A/A AMBG and SLOW/FAST
counts and the plants' SLOW rates.
"""
import argparse
import math
import random
import statistics as st
import sys

sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from host_types import host_of, session  # noqa: E402

import collections  # noqa: E402

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 20: 2.086, 30: 2.042}


def t975(df):
    if df in T975:
        return T975[df]
    for d in sorted(T975):
        if d > df:
            return T975[d]
    return 1.96


def two_means(sig, seed):
    """Split rows of sig (host -> vector) in two: 2-means from the two most
    distant rows, 20 rounds. Returns a list of 0/1 per host."""
    n = len(sig)
    d = lambda a, b: sum((x - y) ** 2 for x, y in zip(a, b))
    i, j = max(((i, j) for i in range(n) for j in range(i + 1, n)), key=lambda p: d(sig[p[0]], sig[p[1]]))
    cent = [sig[i], sig[j]]
    lab = [0] * n
    for _ in range(20):
        lab = [0 if d(s, cent[0]) <= d(s, cent[1]) else 1 for s in sig]
        for c in (0, 1):
            rows = [s for s, l in zip(sig, lab) if l == c]
            if rows:
                cent[c] = [st.mean(col) for col in zip(*rows)]
    return lab, cent


def explained(sig, lab):
    """Share of the signatures' total sum of squares between the two groups."""
    tot = sum(x * x for row in sig for x in row)  # rows are centred per key
    within = 0.0
    for c in (0, 1):
        rows = [r for r, l in zip(sig, lab) if l == c]
        if rows:
            cen = [st.mean(col) for col in zip(*rows)]
            within += sum((x - m) ** 2 for r in rows for x, m in zip(r, cen))
    return 1 - within / tot if tot > 0 else 0


def null_explained(sig, rng, rounds=40):
    """The 95th percentile of what 2-means explains when each key's values
    are shuffled across hosts on their own (no structure shared by keys)."""
    got = []
    cols = list(zip(*sig))
    for _ in range(rounds):
        sh = [list(c) for c in cols]
        for c in sh:
            rng.shuffle(c)
        rows = [list(r) for r in zip(*sh)]
        got.append(explained(rows, two_means(rows, 0)[0]))
    got.sort()
    return got[int(0.95 * (rounds - 1))]


def verdict(d, half, thr):
    if d - half > thr:
        return 'SLOW'
    if d + half < -thr:
        return 'FAST'
    if abs(d) + half < thr:
        return 'SAME'
    return 'AMBG'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('kptprof')
    ap.add_argument('sessions', nargs='+')
    ap.add_argument('--min-us', type=float, default=0)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--per-family', action='store_true', help='split each workload family on its own')
    ap.add_argument('--family', default='', help='only the keys of this workload family (memory, fp8, ...)')
    a = ap.parse_args()
    hosts = [host_of(a.kptprof, p) for p in a.sessions]
    data = [session(a.kptprof, p) for p in a.sessions]
    keys = sorted(set.intersection(*(set(x) for x in data)))
    keys = [k for k in keys if st.median(x[k][2] for x in data) >= a.min_us * 1e3 and
            (not a.family or k[0].split('.')[0] == a.family)]
    H = len(hosts)
    tally = {m: collections.Counter() for m in ('one', 'kinds')}
    rng = random.Random(a.seed)
    splits = []
    fams = collections.defaultdict(list)
    for k in keys:
        fams[k[0].split('.')[0] if a.per_family else 'all'].append(k)
    for h in range(H):
        base = [i for i in range(H) if i != h]
        S = len(base)
        bm = {k: [data[i][k][0] for i in base] for k in keys}
        mu = {k: st.mean(bm[k]) for k in keys}
        sd = {k: (st.stdev(bm[k]) or 1e-6) for k in keys}
        model_of = {}
        for f, fk in fams.items():
            sig = [[(data[i][k][0] - mu[k]) / sd[k] for k in fk] for i in base]
            lab, cent = two_means(sig, 1)
            n1 = sum(lab)
            ok = len(fk) >= 2 and min(n1, S - n1) >= 3 and explained(sig, lab) > null_explained(sig, rng)
            model_of[f] = (fk, ok, lab, cent)
            splits.append((hosts[h], f, ok, [hosts[i] for i, l in zip(base, lab) if l == 1] if ok else []))

        def predict(new_mean, model):
            """per key (prediction, half width) given NEW's means."""
            out = {}
            for f, (fk, ok, lab, cent) in model_of.items():
                if model == 'one' or not ok:
                    for k in fk:
                        b = st.variance(bm[k])
                        out[k] = (mu[k], t975(S - 1) * math.sqrt(b * (1 + 1 / S) + data[h][k][1]))
                    continue
                nsig = [(new_mean[k] - mu[k]) / sd[k] for k in fk]
                dist = [st.median((x - c) ** 2 for x, c in zip(nsig, cent[c])) for c in (0, 1)]
                kind = 0 if dist[0] <= dist[1] else 1
                for k in fk:
                    mine = [x for x, l in zip(bm[k], lab) if l == kind]
                    ss = sum((x - st.mean([y for y, l2 in zip(bm[k], lab) if l2 == l])) ** 2
                             for x, l in zip(bm[k], lab))
                    bw = ss / (S - 2)
                    out[k] = (st.mean(mine), t975(S - 2) * math.sqrt(bw * (1 + 1 / len(mine)) + data[h][k][1]))
            return out

        new = {k: data[h][k][0] for k in keys}
        for model in ('one', 'kinds'):
            pr = predict(new, model)
            for k in keys:
                us = data[h][k][2] / 1e3
                thr = math.log1p(0.05 if us < 10 else 0.01 if us >= 200 else 0.02)
                tally[model]['aa ' + verdict(new[k] - pr[k][0], pr[k][1], thr)] += 1
            for k in keys:
                us = st.median(x[k][2] for x in data) / 1e3
                for pct, lo in ((5, 50), (2, 200)):
                    if us < lo:
                        continue
                    planted = dict(new)
                    planted[k] += math.log1p(pct / 100)
                    p = predict(planted, model)[k]
                    thr = math.log1p(0.05 if us < 10 else 0.01 if us >= 200 else 0.02)
                    v = verdict(planted[k] - p[0], p[1], thr)
                    tally[model]['+%d%% n' % pct] += 1
                    tally[model]['+%d%% SLOW' % pct] += v == 'SLOW'
    print('hosts %d, keys %d (>= %g us)' % (H, len(keys), a.min_us))
    for host, f, ok, b in splits:
        print('  held out %s, %s: %s' % (host, f, ('kinds: ' + ','.join(b) + ' | the rest') if ok else 'one population'))
    for m in ('one', 'kinds'):
        t = tally[m]
        aa = sum(t[x] for x in t if x.startswith('aa '))
        print('%-6s A/A: AMBG %.1f%% of %d, SLOW %d, FAST %d | +5%% >= 50 us SLOW %.1f%% of %d | +2%% >= 200 us SLOW %.1f%% of %d' % (
            m, 100 * t['aa AMBG'] / aa, aa, t['aa SLOW'], t['aa FAST'],
            100 * t['+5% SLOW'] / max(1, t['+5% n']), t['+5% n'], 100 * t['+2% SLOW'] / max(1, t['+2% n']), t['+2% n']))


if __name__ == '__main__':
    main()
