"""moe_mc_protocol.py [N] - randomised CPU model of moe_ffn_sm90_mc.cu's
barrier protocol (kernels/moe): one cluster of 2 CTAs, each with its
producer (GEMM 1's gather with LAG, or GEMM 2's TMA of A) and 8 consumer
warps; B's halves multicast to both CTAs; TMA and cp.async completions land
in random order. Random experts (0, odd and even tile counts), column
tiles, K steps, plants and ST / LAG (4 / 2, 6 / 3). Asserts: no deadlock,
no write into a stage a consumer still reads, no transaction landing in a
full barrier's wrong phase, no parity wait aliasing two phases. Prints the
failing cases and "runs N bad B"; exits 1 when a case failed.
MOE_MC_MUTATE=local (consumers release only their own CTA's stage, twice:
the partner's multicast overwrites a stage in use) or =lag (LAG = ST - 1:
a gather arrival waits on its own release) plants a protocol bug, which
the model must catch (tests/cli/test_moe_mc_protocol.sh).
"""
import os, random, sys

MUT = os.environ.get("MOE_MC_MUTATE", "")

class Bar:
    def __init__(s, count): s.count=count; s.pend=count; s.tx=0; s.ph=0
    def _chk(s):
        if s.pend==0 and s.tx==0: s.ph+=1; s.pend=s.count; s.tx=0
    def arrive(s):
        assert s.pend>0; s.pend-=1; s._chk()
    def expect_arrive(s,b): s.tx+=b; s.arrive()
    def complete(s,b): s.tx-=b; s._chk()
    def ready(s, parity, need_ph):
        ok = (s.ph & 1) != parity
        if ok: assert s.ph == need_ph, ("aliased phase", s.ph, need_ph)
        return ok

def REL(r):
    """The CTAs whose stage a consumer of CTA r releases."""
    return (r, r) if MUT == 'local' else (0, 1)

def run(seed):
    R=random.Random(seed)
    ST,LAG=R.choice([(4,2),(6,3)])
    if MUT=='lag': LAG=ST-1
    E=R.randint(1,6); tiles=[R.choice([0,1,2,3,5]) for _ in range(E)]
    n_col=R.randint(1,3); KT=R.randint(1,4); GATHER=R.random()<0.5
    pairs=sum((t+1)//2 for t in tiles); total=pairs*n_col
    plant=R.choice([0,0,37,100]); allw=total+((total*plant+50)//100 if plant else 0)
    ncl=R.randint(1,3)
    # only cluster 0 is modelled (clusters are independent)
    items=[w if w<total else (w-total)%total for w in range(0,allw,ncl)]
    pp=[0]
    for t in tiles: pp.append(pp[-1]+(t+1)//2)
    def live(w,r):
        pr=w//n_col; e=max(i for i in range(E) if pp[i]<=pr)
        return 2*(pr-pp[e])+r < tiles[e]
    BB,AB=2,1  # B bytes (2 halves of 1), A bytes
    full=[[Bar(129 if GATHER else 1) for s in range(ST)] for r in range(2)]
    empty=[[Bar(16) for s in range(ST)] for r in range(2)]
    holders=[[set() for s in range(ST)] for r in range(2)]  # consumer warps reading stage s (use)
    inflight=[]  # async deliveries: (cta, s, use, bytes)
    agents=[]
    def producer(r):
        it=0
        for w in items:
            lv=live(w,r)
            for kt in range(KT):
                s=it%ST
                if it>=ST:
                    yield ('wait', empty[r][s], ((it//ST)+1)&1, it//ST)
                full[r][s].expect_arrive(BB + (AB if (not GATHER and lv) else 0))
                if not GATHER and lv: inflight.append((r,s,it,AB))
                for d in (0,1): inflight.append((d,s,it,1))   # my half to both
                if GATHER:
                    inflight.append(('g',r,s,it))  # gathered rows land (modelled as write)
                    if it>=LAG:
                        yield ('gather_done', r, it-LAG)
                        for _ in range(128): full[r][(it-LAG)%ST].arrive()
                it+=1
                yield ('step',)
        if GATHER:
            for i in range(max(it-LAG,0),it):
                yield ('gather_done', r, i)
                for _ in range(128): full[r][i%ST].arrive()
    def consumer(r,wid):
        it=0
        for w in items:
            lv=live(w,r)
            if not lv:
                for kt in range(KT):
                    s=it%ST
                    yield ('wait', full[r][s], (it//ST)&1, it//ST+1)
                    for d in REL(r): empty[d][s].arrive()
                    it+=1
                continue
            for kt in range(KT):
                s=it%ST
                yield ('wait', full[r][s], (it//ST)&1, it//ST+1)
                holders[r][s].add((wid,it))
                if kt>0:
                    yield ('step',)
                    holders[r][(it-1)%ST].discard((wid,it-1))
                    for d in REL(r): empty[d][(it-1)%ST].arrive()
                it+=1
            yield ('step',)
            holders[r][(it-1)%ST].discard((wid,it-1))
            for d in REL(r): empty[d][(it-1)%ST].arrive()
    gdone=[set(),set()]
    for r in (0,1):
        agents.append(producer(r))
        for wid in range(8): agents.append(consumer(r,wid))
    state=[None]*len(agents)
    alive=list(range(len(agents)))
    def runnable(i):
        c=state[i]
        if c is None or c[0]=='step': return True
        if c[0]=='wait': return c[1].ready(c[2], c[3])
        if c[0]=='gather_done': return c[2] in gdone[c[1]]
    steps=0
    while alive or inflight:
        steps+=1; assert steps<10**6
        choices=[i for i in alive if runnable(i)]
        if inflight and (not choices or R.random()<0.3):
            ev=inflight.pop(R.randrange(len(inflight)))
            if ev[0]=='g':
                _,r,s,u=ev
                assert not any(h[1]<u for h in holders[r][s]), "gather overwrote a stage in use"
                gdone[r].add(u)
            else:
                d,s,u,b=ev
                assert not any(h[1]<u for h in holders[d][s]), "TMA overwrote a stage in use"
                assert full[d][s].ph == u//ST, ("landed in wrong phase", full[d][s].ph, u//ST)
                full[d][s].complete(b)
            continue
        if not choices:
            return ('DEADLOCK', seed, ST, tiles, n_col, KT, GATHER, plant)
        i=R.choice(choices)
        try: state[i]=next(agents[i])
        except StopIteration: alive.remove(i); state[i]=None
    return None

bad=0
N=int(sys.argv[1]) if len(sys.argv)>1 else 3000
for sd in range(N):
    try:
        res=run(sd)
    except AssertionError as e:
        res=('ASSERT', sd, e)
    if res: bad+=1; print(res)
    if bad>5: break
print("runs", N, "bad", bad)
sys.exit(1 if bad else 0)
