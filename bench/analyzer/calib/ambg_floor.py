#!/usr/bin/env python3
"""ambg_floor.py - how many keys any rule with honest 95% intervals must
leave AMBG across machines, given how much the machines differ.

    ambg_floor.py KPTPROF SESSION.kpt...

Each SESSION is one host's recording of one program (>= 3 runs). Per key
(as host_types.py reads them): the variance of the hosts' session means
less the mean run-to-run part is the key's between-host variance b, taken
as known exactly (no degrees of freedom lost, z = 1.96: better than any
rule can do from a finite baseline). A new host's change d is then normal
with SD s = sqrt(b (1 + 1/S) + w) around 0 in an A/A (S = hosts - 1), and
the key is SAME only when |d| + 1.96 s < thr (kptprof's thresholds: 5%
under 10 us, 2%, 1% from 200 us): probability 2 Phi((thr - 1.96 s) / s) - 1,
0 once 1.96 s >= thr. Prints the expected share of AMBG keys overall and
per duration bucket, with the median between-host SD: the floor that only
explaining the machines' differences (calibration, kinds) can lower.
"""
import math
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_types import session  # noqa: E402


def phi(z):
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def main():
    if len(sys.argv) < 4:
        raise SystemExit('usage: ambg_floor.py KPTPROF SESSION.kpt SESSION.kpt...')
    kpt, files = sys.argv[1], sys.argv[2:]
    data = [session(kpt, f) for f in files]
    keys = sorted(set.intersection(*(set(x) for x in data)))
    S = len(files) - 1
    rows = []
    for k in keys:
        m = [x[k][0] for x in data]
        w = st.mean(x[k][1] for x in data)
        us = st.median(x[k][2] for x in data) / 1e3
        thr = math.log1p(0.05 if us < 10 else 0.01 if us >= 200 else 0.02)
        b = max(0.0, st.variance(m) - w)
        s = math.sqrt(b * (1 + 1 / S) + w)
        p_same = 2 * phi((thr - 1.96 * s) / s) - 1 if thr > 1.96 * s else 0.0
        rows.append((us, 100 * math.sqrt(b), p_same))
    print('hosts %d, keys %d: expected AMBG in a cross-machine A/A with the machine variance known exactly: %.1f%%'
          % (len(files), len(rows), 100 * (1 - st.mean(r[2] for r in rows))))
    for lo, hi, name in ((0, 10, '< 10 us'), (10, 50, '10-50 us'), (50, 200, '50-200 us'), (200, math.inf, '>= 200 us')):
        r = [x for x in rows if lo <= x[0] < hi]
        if r:
            print('  %-10s keys %3d, median between-host SD %.2f%%, expected AMBG %.1f%%'
                  % (name, len(r), st.median(x[1] for x in r), 100 * (1 - st.mean(x[2] for x in r))))


if __name__ == '__main__':
    main()
