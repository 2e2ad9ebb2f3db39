#!/usr/bin/env python3
"""Statistics of interleaved A/B benchmark pairs, for bench/pairs.sh and bench/cachesim-pairs.sh.

  pairs_stats.py state                 -> one JSON line: load average, CPU governor, cpuidle
                                          state (guest halt polling), busy processes
  pairs_stats.py report RESULTS.jsonl  -> per workload: median of per-pair ratios (A / B) with a
                                          seeded bootstrap 95 % interval, CPU per I/O of both,
                                          and the verdict word

RESULTS.jsonl holds one object per run: {"w": workload, "pair": i, "tool": name, "iops": x,
"cpu_s": seconds, "ios": n, "proc_s": seconds} (cpu_s: the tool's own CPU figure; proc_s, optional:
its whole process tree's, counted by the kernel the same way for every tool) (a ratio is higher-is-better: IOPS, or 1/seconds for the cache), and
{"state": {...}} lines. The first tool of a workload is A unless "a" is given in a
{"w": .., "a": name, "b": name, "bar": x} line. Verdict: "faster" when the interval's lower
end is above 1.0, "slower" when its upper end is below 1.0, "level" otherwise; the bar (1.0
unless given) is met when the lower end is above it, or, for a bar of 1.0, when the result is not
"slower" (at least level).
"""
import json
import os
import random
import statistics
import sys
import time

B = 10_000
SEED = 18  # issue 18; the same input always gives the same interval


def bootstrap(ratios, seed=SEED, b=B):
    """Percentile bootstrap of the median: 95 % interval over `b` resamples with replacement."""
    rng = random.Random(seed)
    n = len(ratios)
    meds = sorted(statistics.median(rng.choices(ratios, k=n)) for _ in range(b))
    return meds[int(0.025 * b)], meds[min(b - 1, int(0.975 * b))]


def verdict(lo, hi):
    if lo > 1.0:
        return "faster"
    if hi < 1.0:
        return "slower"
    return "level"


def state():
    load = open("/proc/loadavg").read().split()[:3]
    gov = None
    p = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
    if os.path.exists(p):
        gov = open(p).read().strip()
    # Runnable or in-disk-wait processes other than this one, sampled 10 times 50 ms apart:
    # the mean count and the names seen.
    me, counts, names = os.getpid(), [], set()
    for _ in range(10):
        n = 0
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) in (me, os.getppid()):
                continue
            try:
                s = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            if s[s.rindex(")") + 2] in "RD":
                n += 1
                names.add(s[s.index("(") + 1: s.rindex(")")])
        counts.append(n)
        time.sleep(0.05)
    return {"loadavg": " ".join(load), "governor": gov or "not readable (no cpufreq in this VM)",
            "idle": idle(), "busy_processes": round(statistics.mean(counts), 1),
            "busy": sorted(names)[:10]}


def idle():
    """The cpuidle driver and governor, and with the haltpoll driver of a KVM guest its
    guest_halt_poll_ns: how long an idle vCPU polls before it halts. At 0 every idle vCPU halts,
    and each wake-up of one costs an IPI and a VM exit (Documentation/virt/guest-halt-polling.rst;
    the kernel's default is 200000)."""
    def read(p):
        try:
            return open(p).read().strip()
        except OSError:
            return None
    base = "/sys/devices/system/cpu/cpuidle/"
    drv, gov = read(base + "current_driver"), read(base + "current_governor")
    if drv is None:
        return "not readable"
    s = f"cpuidle {drv}/{gov}"
    ns = read("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
    if ns is not None:
        s += f", guest_halt_poll_ns {ns}"
    return s


def report(path):
    runs, meta, states = {}, {}, []
    for line in open(path):
        o = json.loads(line)
        if "state" in o:
            states.append(o["state"])
        elif "bar" in o:
            meta[o["w"]] = o
        else:
            runs.setdefault(o["w"], []).append(o)
    out = []
    for w, rs in runs.items():
        m = meta.get(w, {})
        tools = list(dict.fromkeys(r["tool"] for r in rs))
        a = m.get("a", tools[0])
        bars = m.get("bar", 1.0)
        for b in [t for t in tools if t != a] if "b" not in m else [m["b"]] + m.get("also", []):
            by = {}
            for r in rs:
                by.setdefault(r["pair"], {})[r["tool"]] = r
            pairs = [p for p in sorted(by) if a in by[p] and b in by[p] and by[p][b]["iops"] > 0]
            if not pairs:
                continue
            ratios = [by[p][a]["iops"] / by[p][b]["iops"] for p in pairs]
            med = statistics.median(ratios)
            lo, hi = bootstrap(ratios)
            word = verdict(lo, hi)
            bar = bars if b == m.get("b", b) else 1.0
            met = (lo > bar) if bar != 1.0 else (word != "slower")

            def cpu(t, key="cpu_s"):
                v = [by[p][t][key] / by[p][t]["ios"] for p in pairs
                     if by[p][t].get("ios") and by[p][t].get(key) is not None]
                return statistics.median(v) if v else None

            ca, cb = cpu(a), cpu(b)
            pa, pb = cpu(a, "proc_s"), cpu(b, "proc_s")
            res = {"workload": w, "a": a, "b": b, "pairs": len(pairs),
                   "median_a": statistics.median(by[p][a]["iops"] for p in pairs),
                   "median_b": statistics.median(by[p][b]["iops"] for p in pairs),
                   "ratios": [round(x, 3) for x in ratios], "median_ratio": med,
                   "ci95": [lo, hi], "verdict": word, "bar": bar, "bar_met": met,
                   "cpu_per_io_ns_a": ca * 1e9 if ca else None,
                   "cpu_per_io_ns_b": cb * 1e9 if cb else None,
                   "proc_cpu_per_io_ns_a": pa * 1e9 if pa else None,
                   "proc_cpu_per_io_ns_b": pb * 1e9 if pb else None}
            out.append(res)
            cpu_s = ""
            if ca and cb:
                cpu_s = f"; CPU per I/O {a} {ca*1e9:,.0f} ns, {b} {cb*1e9:,.0f} ns ({ca/cb:.2f}x)"
            if pa and pb:
                cpu_s += (f"; whole-process CPU per I/O {a} {pa*1e9:,.0f} ns, {b} {pb*1e9:,.0f} ns "
                          f"({pa/pb:.2f}x)")
            barw = f"bar {bar:.2f}x: {'met' if met else 'NOT met'}"
            if bar == 1.0:
                barw = f"bar at least level: {'met' if met else 'NOT met'}"
            if b in m.get("also", []):  # a reference (a ceiling), not a bar: the share of it
                barw = "share of the ceiling, no bar"
                res["bar"], res["bar_met"] = None, None
            print(f"{w}: {a}/{b} median of {len(pairs)} pair ratios {med:.3f}x, "
                  f"95 % CI [{lo:.3f}, {hi:.3f}] -> {word} ({barw}); "
                  f"medians {a} {res['median_a']:,.0f}, {b} {res['median_b']:,.0f}{cpu_s}")
            print(f"    pair ratios: {' '.join(f'{x:.3f}' for x in ratios)}")
    for s in states:
        print(f"machine: load average {s['loadavg']}, governor {s['governor']}, "
              f"{s.get('idle', 'idle state not recorded')}, "
              f"{s['busy_processes']} other busy processes ({', '.join(s['busy'])})")
    with open(path + ".summary.json", "w") as f:
        json.dump({"results": out, "states": states}, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["state"]:
        print(json.dumps({"state": state()}))
    elif sys.argv[1:2] == ["report"]:
        report(sys.argv[2])
    else:
        sys.exit(__doc__)
