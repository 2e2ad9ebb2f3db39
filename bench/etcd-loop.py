#!/usr/bin/env python3
"""The etcd job's system calls in a plain loop, as a third party beside disktier and fio:
create the file, posix_fallocate 22 MiB, reopen, then write 2300 bytes and fdatasync until the
file is full; prints writes per second. Used in BENCHMARKS.md (issue #18, the etcd job) to tell
whether a gap between disktier and fio is disktier's or any plain program's.

    etcd-loop.py DIR"""
import os
import sys
import time

d = sys.argv[1]
path = os.path.join(d, "etcd-loop.0")
size, bs = 22 << 20, 2300
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
os.posix_fallocate(fd, 0, size)
os.close(fd)
fd = os.open(path, os.O_RDWR)
buf = os.urandom(bs)
n = size // bs
t0 = time.monotonic()
for _ in range(n):
    os.write(fd, buf)
    os.fdatasync(fd)
el = time.monotonic() - t0
os.close(fd)
os.unlink(path)
print(round(n / el))
