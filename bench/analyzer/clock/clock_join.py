#!/usr/bin/env python3
"""clock_join.py - kernel times of a recording beside nvidia-smi's samples.

    clock_join.py KPTPROF SMI.CSV REC.kpt [MATCH] [EVERY]

Exports REC.kpt as JSON (kptprof export), takes the kernels whose name
contains MATCH (default 'attn'), every EVERY-th (default 25), and prints each
one's duration beside the nvidia-smi sample (clock_probe.sh, 5 ms) nearest
its start: SM clock, power, event reasons (0x4: software power cap). Shows
whether a kernel's slow phases line up with the clock that NVML reports.
"""
import bisect
import collections
import csv
import datetime
import json
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kptprof, smi_path, rec = sys.argv[1:4]
    match = sys.argv[4] if len(sys.argv) > 4 else 'attn'
    every = int(sys.argv[5]) if len(sys.argv) > 5 else 25
    smi = []
    for row in csv.reader(open(smi_path)):
        t = datetime.datetime.strptime(row[0].strip(), '%Y/%m/%d %H:%M:%S.%f')
        t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
        smi.append((t, int(row[1].split()[0]), float(row[3].split()[0]), row[5].strip()))
    ts = [s[0] for s in smi]
    print('SM clock samples (MHz: count):', collections.Counter(s[1] for s in smi).most_common(8))
    print('event reasons:', collections.Counter(s[3] for s in smi).most_common(4))
    with tempfile.NamedTemporaryFile(suffix='.json') as j:
        subprocess.run([kptprof, 'export', rec, '--format', 'json', '-o', j.name], check=True)
        d = json.load(open(j.name))
    ks = [k for k in d['kernels'] if match in k['name']]
    for k in ks[::every]:
        t = k['start_ns'] / 1e9
        s = smi[min(bisect.bisect_left(ts, t), len(smi) - 1)]
        print(f"{k['range_path'][:34]:34s} {(k['end_ns'] - k['start_ns']) / 1e3:8.1f} us"
              f"  sample {s[0] - t:+.3f} s: {s[1]} MHz {s[2]:.0f} W {s[3]}")


if __name__ == '__main__':
    main()
