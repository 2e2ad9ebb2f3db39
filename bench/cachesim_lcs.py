#!/usr/bin/env python3
"""Replays an oracleGeneral trace through libCacheSim (pip package `libcachesim`) and prints one
JSON line per (policy, size): hit ratio and requests per second of process_trace.
Usage: cachesim_lcs.py TRACE N POLICY:BLOCKS..."""
import json
import sys
import time

import libcachesim as lcs

trace, n = sys.argv[1], int(sys.argv[2])
for spec in sys.argv[3:]:
    policy, blocks = spec.split(":")
    cache = {"lru": lcs.LRU, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO}[policy](cache_size=int(blocks))
    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
    t0 = time.perf_counter()
    res = cache.process_trace(reader)
    dt = time.perf_counter() - t0
    miss = res[0] if isinstance(res, (tuple, list)) else res
    print(json.dumps({"tool": "libCacheSim", "policy": policy, "blocks": int(blocks),
                      "hit_ratio": 1.0 - miss, "seconds": dt, "requests_per_second": n / dt}))
