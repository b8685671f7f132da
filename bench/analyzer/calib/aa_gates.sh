#!/bin/bash
# aa_gates.sh - leave-one-host-out A/A gates over a baseline folder: each
# session in turn is NEW, the others the base (kptprof diff BASE... NEW).
# Prints per held-out session the verdict counts (AMBG, SLOW and FAST are
# false alarms or undecided: nothing changed) and per family the AMBG keys.
#     aa_gates.sh KPTPROF DIR [diff options...]
set -eu
kpt=$1 dir=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
all=("$dir"/*.kpt)
for new in "${all[@]}"; do
	base=()
	for b in "${all[@]}"; do [ "$b" = "$new" ] || base+=("$b"); done
	"$kpt" diff "${base[@]}" "$new" "$@" --quiet --json "$tmp/$(basename "$new" .kpt).json" >/dev/null 2>&1 || true
done
python3 - "$tmp" <<'PY'
import collections, glob, json, os, sys
tot = collections.Counter(); fam = collections.Counter(); keys = collections.Counter()
print('%-28s %5s %5s %5s %5s' % ('held out', 'keys', 'AMBG', 'SLOW', 'FAST'))
for p in sorted(glob.glob(os.path.join(sys.argv[1], '*.json'))):
    d = json.load(open(p))
    c = d['counts']
    n = sum(c[v] for v in ('SAME', 'SLOW', 'FAST', 'AMBG'))
    print('%-28s %5d %5d %5d %5d' % (os.path.basename(p)[:-5], n, c['AMBG'], c['SLOW'], c['FAST']))
    for v in ('AMBG', 'SLOW', 'FAST'):
        tot[v] += c[v]
    tot['keys'] += n
    tot['gates'] += 1
    tot['flagged'] += (c['SLOW'] + c['FAST']) > 0
    for k in d['keys']:
        f = k['workload'].split('.', 1)[0]
        keys[f] += 1
        fam[f] += k['verdict'] == 'AMBG'
print('gates flagging anything: %d of %d; AMBG %d of %d keys (%.1f%%); SLOW %d, FAST %d' %
      (tot['flagged'], tot['gates'], tot['AMBG'], tot['keys'], 100 * tot['AMBG'] / max(tot['keys'], 1),
       tot['SLOW'], tot['FAST']))
print('AMBG per family: ' + ', '.join('%s %d of %d' % (f, fam[f], keys[f]) for f in sorted(keys)))
PY
