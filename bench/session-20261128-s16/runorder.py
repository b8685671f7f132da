import csv, io, subprocess, sys, math, statistics as st, collections
K=sys.argv[1]
def runs(f):
    out=subprocess.run([K,'export',f,'--format','csv','-o','-'],capture_output=True,text=True).stdout
    per=collections.defaultdict(lambda: collections.defaultdict(list))
    for r in csv.DictReader(io.StringIO(out)):
        if r['kind']!='kernel' or '/' not in r['range'] or 'kpt:warmup' in r['range'] or r['range'].startswith('kpt:calibrate'): continue
        per[(r['range'],r['name'])][int(r['run'])].append(int(r['duration_ns']))
    return per
for label, files in (('old', sys.argv[2].split(',')), ('new', sys.argv[3].split(','))):
    d0=[]; dl=[]
    for f in files:
        for k,v in runs(f).items():
            if len(v)<5: continue
            med=[math.log(st.median(v[i])) for i in sorted(v)]
            if st.median(v[0])<50000: continue
            rest=st.mean(med[1:])
            d0.append(100*(med[0]-rest))
    print(label, 'keys>=50us', len(d0), 'run0 - mean(runs1..4) pct: mean %.3f median %.3f' % (st.mean(d0), st.median(d0)))
