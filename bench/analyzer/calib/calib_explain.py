#!/usr/bin/env python3
"""calib_explain.py - how much of the between-machine variance of each key
the session's calibration explains, per workload family and GPU model, out of
sample (leave one session out).

    calib_explain.py KPTPROF SESSION.kpt... [--json OUT]

Each SESSION is one machine's recording (>= 2 runs); sessions are grouped by
GPU model (the device row's slug), each group analysed on its own. Per key
(NVTX path + kernel name): the session mean of log run medians. Per session
its calibration, from the recording itself: the device row's copy_gbps and
bf16_tflops (kpt-workloads --calibrate in a fresh process right after the
runs; best of 10 iterations each) and the env row's median SM clock and
median power (NVML samples during the runs).

Per key and held-out session h, every candidate predicts h's deviation from
the mean of the other sessions using the other sessions only:

  none          0 (no model)
  slope:C       the key's own regression of deviation on log C (C = copy,
                bf16, power, sm), fitted on the others
  slope?:C      the same, used only where the others say it pays: its
                residual variance per df below the raw one (costs 1 df)
  fixed:bound   slope -1 (time x ceiling constant) on the ceiling that bounds
                the key: bf16 when the workload's declared FLOP/byte
                (meta workload.NAME.flops/.bytes) is over the ridge (mean
                bf16 / mean copy ceiling) and the kernel is the workload's
                own, copy otherwise
  fixed?:bound  the same, where the others show the adjusted variance lower
                than the raw one
  fixed?:either slope -1 on whichever ceiling (copy or bf16) leaves the
                others' means closest, if either does at the cost of 1 df
                (no intensity needed; what kpt_rule_machine.c could do)
  fam:C         one slope per family on log C (C = copy, bf16, bound: each
                key its bound ceiling), pooled over the family's keys of the
                other sessions (each key centred)
  fam?:C        the same, used only where the pooled residual variance per
                df is below the raw one
  probe:P       slope -1 on the probe P (P = copy, bf16, fp8, sm: meta
                calibration.copy_gbps, .bf16_tflops, .fp8_tflops, .sm_mhz,
                what `kptprof record` measured with the workloads), in the
                fixed? form: where the others' means agree better so, their
                variance over 1 df less (n-2) below the raw one (n-1); a
                probe is a candidate only where every session of the group
                has it and all say the same calibration.where
  probe?:any    the lowest of none and each such probe, as kpt_rule_machine.c
                picks among the probes

Each candidate is scored alone and followed by the rule's family effect
("+fam": the median over the family's other keys of their residual in h,
subtracted), against the family effect alone ("family"). Score: the mean
squared prediction error, less the key's within-session (run-to-run) part,
as a share of "none"'s; 1 - share is the between-machine variance explained
out of sample (negative: the candidate adds error). "+fam" rows are scored
against "family" (share of what the family effect leaves). The +/- after a
share is a standard error from the spread of the gain across held-out
sessions (the JSON also has the one across keys, smaller: keys of one
session move together).
"""
import csv, io, json, math, statistics, subprocess, sys, collections

COVS = ['copy', 'bf16', 'power', 'sm']
# the probes of meta calibration.* (kptprof record), cal keys 'probe:P'
PROBES = {'copy': 'calibration.copy_gbps', 'bf16': 'calibration.bf16_tflops',
          'fp8': 'calibration.fp8_tflops', 'sm': 'calibration.sm_mhz'}


def meta_num(meta, key):
    """A meta value as a positive number, NaN when absent or not one."""
    try:
        v = float(meta.get(key))
    except (TypeError, ValueError):
        return float('nan')
    return v if v > 0 and math.isfinite(v) else float('nan')


def load(kpt, path):
    rep = json.loads(subprocess.run([kpt, 'report', path, '--format', 'json'], check=True,
                                    capture_output=True, text=True).stdout)
    dev = rep['devices'][0]
    env = rep['env'][0] if rep.get('env') else {}
    nan = float('nan')
    cal = {
        'copy': dev.get('copy_gbps') or nan,
        'bf16': dev.get('bf16_tflops') or nan,
        'sm': env.get('sm_mhz_median') or nan,
        'power': (env.get('power_mw_median') or nan) / 1000.0,
    }
    meta = rep.get('meta') or {}
    for p, key in PROBES.items():
        cal['probe:' + p] = meta_num(meta, key)
    out = subprocess.run([kpt, 'export', path, '--format', 'csv', '-o', '-'], check=True,
                         capture_output=True, text=True).stdout
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in csv.DictReader(io.StringIO(out)):
        # the keys kptprof diff compares: a workload's steps, no warm-up
        if r['kind'] != 'kernel' or '/' not in r['range'] or 'kpt:warmup' in r['range'] or r['range'].startswith('kpt:calibrate'):
            continue
        per[(r['range'], r['name'])][int(r['run'])].append(int(r['duration_ns']))
    keys = {}
    for key, runs in per.items():
        meds = [statistics.median(v) for v in runs.values() if v]
        if len(meds) < 2 or min(meds) <= 0:
            continue
        logs = [math.log(m) for m in meds]
        keys[key] = (statistics.fmean(logs), statistics.variance(logs) / len(logs))
    return {'id': dev.get('uuid', path)[:12], 'slug': dev.get('slug', '?'), 'cal': cal,
            'keys': keys, 'meta': meta, 'path': path}


def family(key):
    return key[0].split('.', 1)[0] if key[0] else '(none)'


def rule_family(key):
    """kpt_diff_family(): workload family / kernel kind ("moe/nvjet")."""
    name = key[1]
    if name.startswith('void '):
        name = name[5:]
    while name.startswith('(anonymous namespace)::'):
        name = name[len('(anonymous namespace)::'):]
    end = len(name)
    for ch in '<(':
        j = name.find(ch)
        if 0 <= j < end:
            end = j
    start = 0
    for j in range(end - 1):
        if name[j:j + 2] == '::':
            start = j + 2
        elif name[j] == ' ':
            start = j + 1
    kind = name[start:]
    for j, ch in enumerate(kind):
        if ch in '_<( ':
            kind = kind[:j]
            break
    return family(key) + '/' + kind


def rule_groups(ks):
    """The rule's group of each key (pick_groups): its family with >= 6
    keys, else its workload family, else all keys."""
    cnt = collections.Counter(rule_family(k) for k in ks)
    wl = collections.Counter(family(k) for k in ks)
    return {k: rule_family(k) if cnt[rule_family(k)] >= 6 else
            family(k) + ' (all)' if wl[family(k)] >= 6 else '(all keys)' for k in ks}


def intensity(meta, key):
    """Declared FLOP/byte of the key's workload, None when not declared."""
    wl = key[0].split('/', 1)[0]
    f, b = meta.get('workload.%s.flops' % wl), meta.get('workload.%s.bytes' % wl)
    try:
        f, b = float(f), float(b)
    except (TypeError, ValueError):
        return None
    return f / b if b > 0 else None


def own_kernel(key):
    """The workload's own timed kernel (not a fill, amax or quantize step
    around a GEMM): only it can be bound by the tensor ceiling."""
    last = key[0].rsplit('/', 1)[-1]
    return not key[1].startswith('fill_') and last not in ('kpt_fp8_amax', 'kpt_fp8_quantize') \
        and '/' in key[0]


def ols(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        return 0.0, my, mx, 0.0, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    raw = sum((y - my) ** 2 for y in ys)
    res = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return b, my, mx, raw, res


def analyse(S):
    n = len(S)
    common = set(S[0]['keys'])
    for s in S[1:]:
        common &= set(s['keys'])
    ks_all = sorted(common)
    mean_copy = statistics.fmean(s['cal']['copy'] for s in S)
    mean_bf16 = statistics.fmean(s['cal']['bf16'] for s in S)
    ridge = mean_bf16 * 1e12 / (mean_copy * 1e9)
    bound = {}
    for k in ks_all:
        ai = intensity(S[0]['meta'], k)
        bound[k] = 'bf16' if ai is not None and ai >= ridge and own_kernel(k) else 'copy'
    X = {}  # log covariate per session, 'bound' resolved per key below
    for c in COVS:
        X[c] = [math.log(s['cal'][c]) if s['cal'][c] > 0 else float('nan') for s in S]
    # probes every session has, measured alike (the rule's condition)
    wheres = set(s['meta'].get('calibration.where', '') for s in S)
    probes = [p for p in PROBES if len(wheres) == 1 and '' not in wheres
              and all(s['cal']['probe:' + p] > 0 for s in S)]
    for p in probes:
        X['probe:' + p] = [math.log(s['cal']['probe:' + p]) for s in S]
    grp = rule_groups(ks_all)
    fam_keys = collections.defaultdict(list)
    for k in ks_all:
        fam_keys[family(k)].append(k)

    def xof(c, k):
        return X[bound[k] if c == 'bound' else c]

    res = {}
    for fam, ks in sorted(fam_keys.items()):
        # pred[m][(k, h)]: candidate m's predicted deviation of key k in held-out h
        pred = collections.defaultdict(dict)
        Y, W = {}, {}
        for h in range(n):
            others = [i for i in range(n) if i != h]
            dev = {}
            for k in ks:
                mu = statistics.fmean(S[i]['keys'][k][0] for i in others)
                Y[(k, h)] = S[h]['keys'][k][0] - mu
                W[(k, h)] = S[h]['keys'][k][1]
                dev[k] = [S[i]['keys'][k][0] - mu for i in others]
                pred['none'][(k, h)] = 0.0
            for c in COVS + ['bound']:
                ok = all(not math.isnan(xof(c, k)[i]) for k in ks for i in range(n))
                if not ok:
                    continue
                # per-key slope, plain and gated
                if c != 'bound':
                    for k in ks:
                        xs = [X[c][i] for i in others]
                        b, my, mx, raw, rs = ols(xs, dev[k])
                        p = my + b * (X[c][h] - mx)
                        pred['slope:' + c][(k, h)] = p
                        m = len(others)
                        pred['slope?:' + c][(k, h)] = p if rs / (m - 2) < raw / (m - 1) else 0.0
                else:
                    for k in ks:
                        xs = [xof(c, k)[i] for i in others]
                        mx = statistics.fmean(xs)
                        p = -(xof(c, k)[h] - mx)
                        pred['fixed:bound'][(k, h)] = p
                        raw = statistics.variance(dev[k])
                        adj = statistics.variance([y + (x - mx) for x, y in zip(xs, dev[k])])
                        pred['fixed?:bound'][(k, h)] = p if adj < raw else 0.0
                        # no declared intensity: the ceiling (if any) whose
                        # slope -1 leaves the others' means closest
                        best, bp = raw, 0.0
                        for c2 in ('copy', 'bf16'):
                            xs2 = [X[c2][i] for i in others]
                            mx2 = statistics.fmean(xs2)
                            v2 = statistics.variance([y + (x - mx2) for x, y in zip(xs2, dev[k])])
                            if v2 * (len(xs2) - 1) / (len(xs2) - 2) < best:
                                best, bp = v2, -(X[c2][h] - mx2)
                        pred['fixed?:either'][(k, h)] = bp
                if c in ('copy', 'bf16', 'bound'):
                    # one slope for the family, keys centred on the others
                    sxy = sxx = raw = 0.0
                    cen = {}
                    for k in ks:
                        xs = [xof(c, k)[i] for i in others]
                        mx = statistics.fmean(xs)
                        cen[k] = mx
                        for x, y in zip(xs, dev[k]):
                            sxy += (x - mx) * y
                            sxx += (x - mx) ** 2
                            raw += y * y
                    b = sxy / sxx if sxx > 0 else 0.0
                    rs = raw - b * sxy
                    N = len(ks) * len(others)
                    use = rs / (N - len(ks) - 1) < raw / (N - len(ks))
                    for k in ks:
                        p = b * (xof(c, k)[h] - cen[k])
                        pred['fam:' + c][(k, h)] = p
                        pred['fam?:' + c][(k, h)] = p if use else 0.0
            # the probes in the rule's fixed? form, each alone and the
            # rule's pick among them
            m = n - 1
            for k in ks if m > 2 else []:
                raw = statistics.variance(dev[k])
                best, bp = raw, 0.0
                for p in probes:
                    xs = [X['probe:' + p][i] for i in others]
                    mx = statistics.fmean(xs)
                    v = statistics.variance([y + (x - mx) for x, y in zip(xs, dev[k])]) * (m - 1) / (m - 2)
                    pp = -(X['probe:' + p][h] - mx)
                    pred['probe:' + p][(k, h)] = pp if v < raw else 0.0
                    if v < best:
                        best, bp = v, pp
                if probes:
                    pred['probe?:any'][(k, h)] = bp
        # scores: alone vs none, +fam vs family alone
        def err_of(m, with_fam):
            e = {}
            for (k, h), p in pred[m].items():
                r = Y[(k, h)] - p
                if with_fam:
                    rr = [Y[(k2, h)] - pred[m][(k2, h)] for k2 in ks if k2 != k and grp[k2] == grp[k]]
                    r -= statistics.median(rr) if rr else 0.0
                e[(k, h)] = r * r - W[(k, h)]
            return e
        e_none = err_of('none', False)
        e_fam = err_of('none', True)
        row = {'keys': len(ks), 'sessions': n, 'groups': sorted(set(grp[k] for k in ks)),
               'between_sd_pct': 100 * math.sqrt(max(sum(e_none.values()), 0) / (len(ks) * n)),
               'family_sd_pct': 100 * math.sqrt(max(sum(e_fam.values()), 0) / (len(ks) * n)),
               'bound_bf16_keys': sum(1 for k in ks if bound[k] == 'bf16')}

        def share(e, ref):
            """1 - e / ref, and standard errors of it from the spread of
            the difference across keys and across held-out sessions (the
            sessions are the units: with 7-9 of them the second is the
            honest one)."""
            tot = sum(ref.values())
            if tot <= 0:
                return float('nan'), float('nan'), float('nan')
            by_k, by_h = collections.defaultdict(float), collections.defaultdict(float)
            for kh in ref:
                by_k[kh[0]] += e[kh] - ref[kh]
                by_h[kh[1]] += e[kh] - ref[kh]
            se = lambda d: statistics.stdev(d) * math.sqrt(len(d)) / tot if len(d) > 1 else float('nan')
            return -sum(by_k.values()) / tot, se(list(by_k.values())), se(list(by_h.values()))
        row['family'] = share(e_fam, e_none)
        for m in pred:
            if m == 'none':
                continue
            row[m] = share(err_of(m, False), e_none)
            row[m + '+fam'] = share(err_of(m, True), e_fam)
        res[fam] = row
    return res, ridge


METHODS = ['family', 'slope:copy', 'slope:bf16', 'slope:power', 'slope?:copy', 'slope?:bf16',
           'slope?:power', 'fixed:bound', 'fixed?:bound', 'fixed?:either', 'fam:copy', 'fam:bf16', 'fam:bound',
           'fam?:bound', 'probe:copy', 'probe:bf16', 'probe:fp8', 'probe:sm', 'probe?:any']


def fmt(v):
    if not v or math.isnan(v[0]):
        return '%13s' % '-'
    return '%+6.0f%%±%3.0f%%' % (100 * v[0], 100 * v[2]) if not math.isnan(v[2]) \
        else '%+6.0f%%     ' % (100 * v[0])


def main():
    args = sys.argv[1:]
    jout = None
    if '--json' in args:
        i = args.index('--json'); jout = args[i + 1]; del args[i:i + 2]
    kpt, paths = args[0], args[1:]
    groups = collections.defaultdict(list)
    for p in paths:
        s = load(kpt, p)
        groups[s['slug']].append(s)
    out = {}
    for slug, S in sorted(groups.items()):
        res, ridge = analyse(S)
        out[slug] = {'ridge_flop_per_byte': ridge, 'families': res,
                     'sessions': [{'session': s['id'], 'path': s['path'], **s['cal']} for s in S]}
        print('== %s: %d sessions, ridge %.0f FLOP/byte' % (slug, len(S), ridge))
        for s in S:
            c = s['cal']
            print('  %s copy %.0f GB/s bf16 %.0f TFLOP/s sm %.0f MHz power %.0f W' %
                  (s['id'], c['copy'], c['bf16'], c['sm'], c['power']) +
                  ('; probes copy %.0f bf16 %.0f fp8 %.0f sm %.0f' %
                   tuple(c['probe:' + p] for p in PROBES) if c['probe:copy'] > 0 or c['probe:bf16'] > 0 else ''))
        fams = list(res)
        print('%-14s' % 'explained' + ''.join('%14s' % f for f in fams))
        print('%-14s' % 'keys (bf16)' + ''.join('%14s' % ('%d (%d)' % (res[f]['keys'], res[f]['bound_bf16_keys']))
                                                for f in fams))
        print('%-14s' % 'between SD' + ''.join('%13.2f%%' % res[f]['between_sd_pct'] for f in fams))
        print('%-14s' % 'after family' + ''.join('%13.2f%%' % res[f]['family_sd_pct'] for f in fams))
        for m in METHODS:
            print('%-14s' % m + ''.join(' ' + fmt(res[f].get(m)) for f in fams))
        print('after the family effect (share of what it leaves):')
        for m in METHODS[1:]:
            print('%-14s' % (m + '+fam') + ''.join(' ' + fmt(res[f].get(m + '+fam')) for f in fams))
        print()
    if jout:
        with open(jout, 'w') as f:
            json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
