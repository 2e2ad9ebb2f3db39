"""The etcd job run both ways, for bench/etcd-halts.sh and bench/etcd-wakes.sh: disktier's
`--profile etcd` and the fio command line it stands for (write, sync engine, fdatasync after
each 2,300-byte write, 22 MiB), each in a fresh directory, and the writes they made."""
import json
import os
import shutil
import signal
import subprocess


def command(tool, disktier, mnt):
    """The command line that runs the etcd job with `tool` ("disktier" or "fio") in a fresh
    directory `mnt`/`tool`."""
    d = f"{mnt}/{tool}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    if tool == "disktier":
        return [disktier, "--format", "json", "--no-save", "bench", d, "--profile", "etcd"]
    return ["fio", "--name=etcd", f"--directory={d}", "--rw=write", "--ioengine=sync", "--fdatasync=1",
            "--size=22m", "--bs=2300", "--output-format=json"]


def writes(tool, stdout):
    """(writes made, writes per second) from the tool's JSON output."""
    doc = json.loads(stdout)
    if tool == "disktier":
        w = doc["results"]["write"]
        return w["ios"], w["iops"]
    w = doc["jobs"][0]["write"]
    return w["total_ios"], w["iops"]


def output(cmd):
    """The standard output of `cmd`; a failed or interrupted command ends the script with a
    line that says so (exit 130 on Ctrl-C), not a traceback."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except KeyboardInterrupt:
        raise SystemExit(130)
    if p.returncode == -signal.SIGINT:
        raise SystemExit(130)
    if p.returncode != 0:
        tail = p.stderr.strip().splitlines()[-1:] or ["no message"]
        raise SystemExit(f"{' '.join(cmd[:3])}... exited {p.returncode}: {tail[0]}")
    return p.stdout
