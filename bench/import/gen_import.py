#!/usr/bin/env python3
"""gen_import.py - large synthetic inputs for `kptprof import` (issue 34:
"100 MB of nsys export or Kineto JSON in <= 10 s").

    bench/import/gen_import.py nsys  OUT.sqlite [MB]   (default 100)
    bench/import/gen_import.py kineto OUT.json  [MB]
    bench/import/run.sh [MB]        both, imported and timed

Both carry the shapes that made the old importer quadratic:
  - nsys: StringIds WITHOUT an index on id (a plain table, as a hostile or
    hand-made export has), a distinct kernel name per 16 kernels;
  - both: one thread with a chain of 20,000 nested push/pop ranges, all
    ended, then kernels launched from that thread afterwards (the walk up
    to the innermost open range passes the whole chain per kernel);
  - many processes (one globalPid per 64 kernels; half the kernels launched from the chained thread) and launch events for
    every kernel.
The files are written to OUT (not committed: they are 100 MB). Same seed,
same file.
"""
import json
import os
import random
import sqlite3
import sys

DEPTH = 20000


def nsys(path, mb):
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path)
    c.executescript(open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "import",
                                      "nsys_small.sql")).read())
    c.executescript("""
        DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME;
        DELETE FROM NVTX_EVENTS; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY; DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET;
        DROP TABLE StringIds; CREATE TABLE StringIds (id INTEGER, value TEXT NOT NULL);
    """)
    rnd = random.Random(34)
    tid = (4242 << 24) | 100
    # the chain: range i spans [i, 2*DEPTH - i): nested, all ended by 2*DEPTH
    c.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                  ((i, 2 * DEPTH - i, "level%d" % i, tid) for i in range(DEPTH)))
    target = mb << 20
    n = 0
    t = 4 * DEPTH
    batch_k, batch_r, batch_s = [], [], []
    while True:
        if n % 50000 == 0:
            c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"
                          " correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread,"
                          " gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,"
                          " localMemoryPerThread, localMemoryTotal, gridId) VALUES"
                          " (?,?,?,1,7,?,?,?,?,?,32,?,1,1,128,1,1,0,0,0,0,?)", batch_k)
            c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,1,0,NULL)", batch_r)
            c.executemany("INSERT INTO StringIds VALUES (?,?)", batch_s)
            batch_k, batch_r, batch_s = [], [], []
            c.commit()
            if n and os.path.getsize(path) >= target:
                break
        name = n // 16
        if n % 16 == 0:
            batch_s.append((name + 100, "_Z%dkernel_%d_templated_name_of_some_lengthPfS_i" % (n, name)))
        pid = ((4242 + n // 64) << 24)
        corr = n + 1
        batch_r.append((t, t + 500, pid | 100, corr))
        batch_k.append((t + 1000, t + 1000 + rnd.randrange(1000, 100000), n % 8, corr, pid, name + 100, name + 100,
                        name + 100, rnd.randrange(1, 4096), n))
        t += 2000
        n += 1
    # launches on the chained thread, after every range of it ended
    c.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = ? WHERE correlationId % 2 = 1", (tid,))
    c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = ? WHERE correlationId % 2 = 1", (4242 << 24,))
    c.commit()
    c.close()
    print("%s: %d kernels, %d MB" % (path, n, os.path.getsize(path) >> 20))


def kineto(path, mb):
    rnd = random.Random(34)
    target = mb << 20
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", '
                '"totalGlobalMem": 85029158912, "computeMajor": 9, "computeMinor": 0, "numSms": 132}], '
                '"baseTimeNanoseconds": 1764000000000000000, "traceEvents": [\n')
        ev = []
        for i in range(DEPTH):
            ev.append({"ph": "X", "cat": "user_annotation", "name": "level%d" % i, "pid": 1, "tid": 1,
                       "ts": i, "dur": 2 * DEPTH - 2 * i})
        f.write(",\n".join(json.dumps(e) for e in ev))
        n = 0
        t = 4 * DEPTH
        while f.tell() < target:
            corr = n + 1
            lines = [
                json.dumps({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                            "tid": 1 if n % 2 == 0 else 2, "ts": t, "dur": 0.5,
                            "args": {"correlation": corr}}),
                json.dumps({"ph": "X", "cat": "kernel", "name": "kernel_%d_templated_name_of_some_length" % (n // 16),
                            "pid": 0, "tid": 7, "ts": t + 1, "dur": rnd.randrange(1, 100),
                            "args": {"device": n % 8, "stream": 7, "correlation": corr,
                                     "registers per thread": 32, "shared memory": 0,
                                     "grid": [rnd.randrange(1, 4096), 1, 1], "block": [128, 1, 1]}}),
            ]
            f.write(",\n" + ",\n".join(lines))
            t += 2
            n += 1
        f.write("\n]}\n")
    print("%s: %d kernels, %d MB" % (path, n, os.path.getsize(path) >> 20))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("nsys", "kineto"):
        sys.exit(__doc__)
    {"nsys": nsys, "kineto": kineto}[sys.argv[1]](sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100)
