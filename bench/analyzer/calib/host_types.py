#!/usr/bin/env python3
"""host_types.py - each host's deviation per key, and how much of the
between-host variance a split of the hosts into two kinds explains.

    host_types.py KPTPROF [--kind-b UUID8,...] [--min-us 50] SESSION.kpt...

Each SESSION is one host's recording (>= 3 runs): per key (workload and
kernel, the keys kptprof diff compares: kpt:iter steps, no warm-up, no
kpt:calibrate) the session mean of log run medians. Prints a table: one row
per key of at least --min-us, one column per host (the first 8 hex digits
of its GPU UUID), the host's deviation from the mean over hosts, percent.
With --kind-b (hosts by those 8 digits), per workload family: the SD of the
session means across all hosts, the pooled SD within each kind, and the
share of the between-host variance the kinds explain (in sample: the kinds
are named by whoever reads the table; check them on another program's
recordings of the same hosts).
"""
import argparse
import collections
import csv
import io
import json
import math
import statistics as st
import subprocess


def host_of(kpt, path):
    out = subprocess.run([kpt, 'report', path, '--format', 'json', '--top', '0'], check=True,
                         capture_output=True, text=True).stdout
    uuid = json.loads(out)['devices'][0].get('uuid', '')
    return uuid[4:12] if uuid.startswith('GPU-') else path


def session(kpt, path):
    """Per key (workload, kernel name): (mean of log run medians, its
    variance over runs / runs, median of run medians in ns); keys seen in
    3 runs or more. The keys kptprof diff compares: no warm-up, no
    kpt:calibrate; a suite's kpt:iter steps, a project's every launch."""
    out = subprocess.run([kpt, 'export', path, '--format', 'csv', '-o', '-'], check=True,
                         capture_output=True, text=True).stdout
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in csv.DictReader(io.StringIO(out)):
        rng = r['range']
        if r['kind'] != 'kernel' or 'kpt:warmup' in rng or rng.startswith('kpt:calibrate'):
            continue
        per[(rng.split('/')[0], r['name'])][int(r['run'])].append(int(r['duration_ns']))
    res = {}
    for k, v in per.items():
        if len(v) < 3:
            continue
        logs = [math.log(st.median(x)) for x in v.values()]
        res[k] = (st.mean(logs), st.variance(logs) / len(logs), st.median(st.median(x) for x in v.values()))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('kptprof')
    ap.add_argument('sessions', nargs='+')
    ap.add_argument('--kind-b', default='')
    ap.add_argument('--min-us', type=float, default=50)
    a = ap.parse_args()
    hosts = [host_of(a.kptprof, p) for p in a.sessions]
    means = [{k: v[0] for k, v in session(a.kptprof, p).items()} for p in a.sessions]
    keys = sorted(set.intersection(*(set(m) for m in means)))
    keys = [k for k in keys if math.exp(st.mean(m[k] for m in means)) >= a.min_us * 1e3]
    print('%-58s %s' % ('key (>= %g us)' % a.min_us, ' '.join('%8s' % h for h in hosts)))
    for k in keys:
        mu = st.mean(m[k] for m in means)
        label = (k[0][:30] + ' ' + k[1].split('(')[0][-27:])[:58]
        print('%-58s %s' % (label, ' '.join('%+8.2f' % (100 * (m[k] - mu)) for m in means)))
    b = set(x for x in a.kind_b.split(',') if x)
    if not b:
        return
    ib = [i for i, h in enumerate(hosts) if h in b]
    ia = [i for i, h in enumerate(hosts) if h not in b]
    if len(ia) < 2 or len(ib) < 2:
        raise SystemExit('host_types: each kind needs 2 hosts or more (kind b: %s)' % ','.join(sorted(b)))
    fam = collections.defaultdict(lambda: ([], []))
    for k in keys:
        v = [m[k] for m in means]
        tot = st.variance(v)
        ss = sum((v[i] - st.mean(v[j] for j in g)) ** 2 for g in (ia, ib) for i in g)
        within = ss / (len(v) - 2)
        for f in (k[0].split('.')[0], 'all'):
            fam[f][0].append(tot)
            fam[f][1].append(within)
    print('\nkinds: a %d hosts, b %d (%s)' % (len(ia), len(ib), ','.join(hosts[i] for i in ib)))
    for f, (tot, within) in sorted(fam.items()):
        print('%-10s keys %3d  between-host SD %.2f%%  within-kind SD %.2f%%  explained by the kinds %.0f%%' % (
            f, len(tot), 100 * math.sqrt(st.mean(tot)), 100 * math.sqrt(st.mean(within)),
            100 * (1 - st.mean(within) / st.mean(tot))))


if __name__ == '__main__':
    main()
