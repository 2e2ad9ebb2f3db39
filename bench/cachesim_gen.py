#!/usr/bin/env python3
"""Writes one synthetic block trace in two encodings for bench/cachesim.sh:
libCacheSim's oracleGeneral binary (24-byte records: u32 time, u64 id, u32 size, i64 next) with
every object of size 1 (so libCacheSim's byte-sized ARC adapts in whole blocks, like disktier's),
and the Alibaba CSV (device_id,opcode,offset,length,timestamp_us) that `disktier trace import
alibaba` reads. Usage: cachesim_gen.py KIND N OBJECTS OUT_PREFIX (KIND: zipf or loop)."""
import sys
import numpy as np

kind, n, objects, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(42)
if kind == "zipf":
    # Zipf alpha 1 over `objects` ranks by inverse CDF, ranks scattered over the id space.
    cdf = np.cumsum(1.0 / np.arange(1, objects + 1))
    cdf /= cdf[-1]
    ranks = np.searchsorted(cdf, rng.random(n))
    perm = rng.permutation(objects)
    ids = perm[np.minimum(ranks, objects - 1)].astype(np.uint64)
elif kind == "loop":
    ids = (np.arange(n) % objects).astype(np.uint64)
else:
    sys.exit(f"unknown kind {kind}: zipf or loop")
writes = rng.random(n) < 0.25
ts = (np.arange(n) // 1000).astype(np.uint32)  # 1,000 requests per second of trace time

rec = np.zeros(n, dtype=[("ts", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])
rec["ts"], rec["id"], rec["size"], rec["next"] = ts, ids, 1, -1
rec.tofile(prefix + ".oracleGeneral.bin")

with open(prefix + ".alibaba.csv", "w") as f:
    op = np.where(writes, "W", "R")
    step = 1_000_000
    for i in range(0, n, step):
        sl = slice(i, i + step)
        lines = np.char.add(np.char.add("0,", op[sl]), ",")
        lines = np.char.add(lines, (ids[sl] * 4096).astype(str))
        lines = np.char.add(lines, ",4096,")
        lines = np.char.add(lines, (ts[sl].astype(np.uint64) * np.uint64(1_000_000) + (np.arange(i, i + len(ids[sl])) % 1000).astype(np.uint64)).astype(str))
        f.write("\n".join(lines.tolist()))
        f.write("\n")
