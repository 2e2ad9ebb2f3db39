#!/usr/bin/env python3
# Copies every run of a disktier SQLite store until it holds N runs (new ids, one second apart),
# for measuring `disktier report --last N`. Usage: python3 bench/report-fill.py STORE.db N
import sqlite3, sys, datetime
db, n = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
cols = [r[1] for r in c.execute("PRAGMA table_info(runs)")]
seed = c.execute(f"SELECT {', '.join(cols)} FROM runs").fetchall()
have = len(seed)
t0 = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
i = 0
rows = []
while have + len(rows) < n:
    r = list(seed[i % len(seed)])
    t = t0 + datetime.timedelta(seconds=i)
    r[cols.index("id")] = t.strftime("%Y%m%d-%H%M%S") + "-%06x" % i
    r[cols.index("created_at")] = t.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    if "fingerprint" in cols:
        r[cols.index("fingerprint")] = None
    rows.append(r)
    i += 1
c.executemany(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows)
c.commit()
print(c.execute("SELECT count(*) FROM runs").fetchone()[0], "runs")
