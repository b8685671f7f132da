#!/usr/bin/env python3
"""calib_explain.py - how much of the between-machine variance of each key
the session's calibration explains, per workload family, out of sample.

    calib_explain.py KPTPROF SESSION.kpt... [--json OUT]

Each SESSION is one machine's recording (>= 2 runs). Per key (NVTX path +
kernel name): the session mean of log run medians. Per session: its
calibration, from the recording itself: the device row's copy_gbps and
bf16_tflops (kpt-workloads --calibrate, a fresh process right after the
runs) and the env row's median SM clock and median power (NVML samples
during the runs).

For each key, leave one session out: predict its deviation from the mean of
the others (a) as 0 (no model), (b) by the key's family shift in that
session (the median deviation of the family's other keys: what the rule's
"machine effect per family" does), (c) by a regression of the other
sessions' deviations on one calibration covariate (log ceiling), slope
fitted on the other sessions, (d) by (b) then (c) on what (b) leaves.
Reports per family the mean squared prediction error of each, as a share of
(a)'s: 1 - that share is the variance explained out of sample. The within
(run-to-run) part of each session mean is subtracted from (a) so the share
speaks of the between-machine part.
"""
import csv, io, json, math, statistics, subprocess, sys, collections


def load(kpt, path):
    rep = json.loads(subprocess.run([kpt, 'report', path, '--format', 'json'], check=True,
                                    capture_output=True, text=True).stdout)
    dev = rep['devices'][0]
    env = rep['env'][0] if rep.get('env') else {}
    cal = {
        'copy': dev.get('copy_gbps') or float('nan'),
        'bf16': dev.get('bf16_tflops') or float('nan'),
        'sm_mhz': env.get('sm_mhz_median') or float('nan'),
        'power_w': (env.get('power_mw_median') or float('nan')) / 1000.0,
    }
    out = subprocess.run([kpt, 'export', path, '--format', 'csv', '-o', '-'], check=True,
                         capture_output=True, text=True).stdout
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in csv.DictReader(io.StringIO(out)):
        if r['kind'] != 'kernel':
            continue
        key = (r['range'], r['name'])
        per[key][int(r['run'])].append(int(r['duration_ns']))
    keys = {}
    for key, runs in per.items():
        meds = [statistics.median(v) for v in runs.values() if v]
        if len(meds) < 2 or min(meds) <= 0:
            continue
        logs = [math.log(m) for m in meds]
        keys[key] = (statistics.fmean(logs), statistics.variance(logs) / len(logs),
                     statistics.median(meds))
    return rep['devices'][0].get('uuid', path), cal, keys


def family(key):
    return key[0].split('.', 1)[0] if key[0] else '(none)'


def slope(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        return 0.0, my, mx
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx, my, mx


def main():
    args = sys.argv[1:]
    jout = None
    if '--json' in args:
        i = args.index('--json'); jout = args[i + 1]; del args[i:i + 2]
    kpt, paths = args[0], args[1:]
    S = [load(kpt, p) for p in paths]
    n = len(S)
    common = set(S[0][2])
    for s in S[1:]:
        common &= set(s[2])
    covs = ['copy', 'bf16', 'sm_mhz', 'power_w']
    fam_keys = collections.defaultdict(list)
    for k in sorted(common):
        fam_keys[family(k)].append(k)
    res = {}
    for fam, ks in sorted(fam_keys.items()):
        err = collections.defaultdict(float)
        cnt = 0
        for k in ks:
            for h in range(n):
                others = [i for i in range(n) if i != h]
                mu = statistics.fmean(S[i][2][k][0] for i in others)
                y = S[h][2][k][0] - mu
                wv = S[h][2][k][1]
                cnt += 1
                err['none'] += y * y - wv
                # family shift of session h from the family's other keys
                def shift(sess, excl):
                    ds = []
                    for k2 in ks:
                        if k2 == excl:
                            continue
                        o = [i for i in range(n) if i != sess and i != h] if sess != h else others
                        m2 = statistics.fmean(S[i][2][k2][0] for i in others) if sess == h else \
                            statistics.fmean(S[i][2][k2][0] for i in range(n) if i not in (h, sess))
                        ds.append(S[sess][2][k2][0] - m2)
                    return statistics.median(ds) if ds else 0.0
                fs = shift(h, k) if len(ks) > 1 else 0.0
                err['family'] += (y - fs) ** 2 - wv
                for c in covs:
                    xs = [math.log(S[i][1][c]) for i in others]
                    if any(math.isnan(x) for x in xs) or math.isnan(S[h][1][c]):
                        continue
                    ys = [S[i][2][k][0] - mu for i in others]
                    b, my, mx = slope(xs, ys)
                    pred = my + b * (math.log(S[h][1][c]) - mx)
                    err['calib:' + c] += (y - pred) ** 2 - wv
        base = err['none']
        row = {'keys': len(ks), 'sessions': n,
               'between_sd_pct': 100 * math.sqrt(max(base, 0) / cnt) if cnt else float('nan')}
        for m, e in err.items():
            if m != 'none':
                row['explained_' + m] = 1 - e / base if base > 0 else float('nan')
        res[fam] = row
    cal = [{'session': s[0][:12], **{c: s[1][c] for c in covs}} for s in S]
    print('sessions:')
    for c in cal:
        print('  %s copy %.0f GB/s bf16 %.0f TFLOP/s sm %.0f MHz power %.0f W' %
              (c['session'], c['copy'], c['bf16'], c['sm_mhz'], c['power_w']))
    print('%-10s %5s %9s %9s %9s %9s %9s %9s' % ('family', 'keys', 'betw SD%', 'family', 'copy', 'bf16', 'sm_mhz', 'power'))
    for fam, r in res.items():
        g = lambda m: ('%+8.0f%%' % (100 * r[m])) if m in r and not math.isnan(r[m]) else '%9s' % '-'
        print('%-10s %5d %8.2f%% %s %s %s %s %s' % (fam, r['keys'], r['between_sd_pct'], g('explained_family'),
              g('explained_calib:copy'), g('explained_calib:bf16'), g('explained_calib:sm_mhz'), g('explained_calib:power_w')))
    if jout:
        with open(jout, 'w') as f:
            json.dump({'families': res, 'sessions': cal}, f, indent=1)


if __name__ == '__main__':
    main()
