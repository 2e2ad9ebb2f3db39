#!/usr/bin/env python3
"""One side of a cache-simulator pair for bench/cachesim-pairs.sh; prints one JSON line.

  cachesim_pair.py dt BIN TRACE.dtt BLOCKS,BLOCKS,...   disktier simulate, LRU at those sizes in
      one command; seconds = the whole command's wall time (process start, trace load, replay)
  cachesim_pair.py lcs TRACE.oracleGeneral.bin BLOCKS,...  libCacheSim (pip `libcachesim`),
      one LRU process_trace per size; seconds = the sum of the process_trace calls only (its
      import and start-up are not counted: the comparison is conservative for disktier)
"""
import json
import resource
import subprocess
import sys
import time

mode = sys.argv[1]
if mode == "dt":
    binary, trace, sizes = sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4].split(",")]
    cmd = [binary, "--format", "json", "simulate", "--trace", trace, "--policies", "lru", "--no-mrc",
           "--cache-sizes", ",".join(str(b * 4096) for b in sizes)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    d = json.loads(out)
    hits = {r["cache_bytes"] // 4096: r["hit_ratio"] for r in d["results"]}
    print(json.dumps({"tool": "disktier", "seconds": dt, "requests": d["requests"],
                      "cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                      "max_rss_kib": r1.ru_maxrss, "hit_ratios": hits}))
elif mode == "lcs":
    import libcachesim as lcs
    trace, sizes = sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
    total, hits, n = 0.0, {}, 0
    c0 = time.process_time()
    for b in sizes:
        cache = lcs.LRU(cache_size=b)
        reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
        t0 = time.perf_counter()
        res = cache.process_trace(reader)
        total += time.perf_counter() - t0
        miss = res[0] if isinstance(res, (tuple, list)) else res
        hits[b] = 1.0 - miss
    print(json.dumps({"tool": "libCacheSim", "seconds": total, "cpu_s": time.process_time() - c0,
                      "hit_ratios": hits}))
else:
    sys.exit(__doc__)
