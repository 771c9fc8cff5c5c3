#!/usr/bin/env python3
"""Our producer next to the official Go client, against one rocketmq-local
broker in its own process: alternating rmqbench runs, medians.

    python3 docs/perf-producer.py run   BROKER_BIN RMQBENCH_BIN OUT.jsonl [scenario...]
    python3 docs/perf-producer.py table OUT.jsonl

Scenarios: sync1 (1 sync caller), sync64 (64 sync callers), async (1 caller
keeping 64 sends in flight), batch32 (8 callers of 32-message batches), all
with 1 KiB bodies on topic rmqbench. Per scenario a fresh broker with an
empty store is started (NameServer 127.0.0.1:29876, broker 127.0.0.1:30911,
store in a new temporary directory), then ROUNDS rounds (default 3) of one
`ours` and one `official` run of DUR (default 15s) each, alternating which
goes first; the broker is stopped and its store removed afterwards.

Each JSONL row is rmqbench's line plus the scenario, the round, the
broker's CPU per message (utime+stime from /proc/<pid>/stat over the run,
which includes the warm-up) and the 1-minute load average at the start.
`table` prints medians per client and the ratio ours/official of the
medians; `pairs` of the ratios within each round. See docs/perf-producer.md.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

NAMESRV = "127.0.0.1:29876"
BROKER = "127.0.0.1:30911"
SCENARIOS = {
    "sync1": ["-mode", "sync", "-callers", "1"],
    "sync64": ["-mode", "sync", "-callers", "64"],
    "async": ["-mode", "async", "-callers", "1", "-window", "64"],
    "batch32": ["-mode", "batch", "-batch", "32", "-callers", "8"],
}
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def start_broker(binary):
    data = tempfile.mkdtemp(prefix="rmqdata-pp-")
    p = subprocess.Popen([binary, "-namesrv", NAMESRV, "-broker", BROKER, "-data", data],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    if p.poll() is not None:
        shutil.rmtree(data, ignore_errors=True)
        sys.exit(f"broker exited with {p.returncode}")
    return p, data


def stop_broker(p, data):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    shutil.rmtree(data, ignore_errors=True)


def run(broker_bin, bench_bin, out, names):
    dur = os.environ.get("DUR", "15s")
    rounds = int(os.environ.get("ROUNDS", "3"))
    for name in names or list(SCENARIOS):
        p, data = start_broker(broker_bin)
        try:
            for rnd in range(rounds):
                for client in (["ours", "official"] if rnd % 2 == 0 else ["official", "ours"]):
                    with open("/proc/loadavg") as f:
                        load = float(f.read().split()[0])
                    c0 = cpu_seconds(p.pid)
                    r = subprocess.run([bench_bin, "-namesrv", NAMESRV, "-client", client, "-duration", dur] + SCENARIOS[name],
                                       capture_output=True, text=True)
                    c1 = cpu_seconds(p.pid)
                    if r.returncode != 0:
                        print(f"{name} {client} round {rnd} failed: {r.stderr[-400:]}", file=sys.stderr)
                        continue
                    row = json.loads(r.stdout.strip().splitlines()[-1])
                    row.update(scenario=name, round=rnd, load1=load,
                               broker_cpu_us_per_msg=round((c1 - c0) * 1e6 / max(row["msgs"], 1), 2))
                    with open(out, "a") as f:
                        f.write(json.dumps(row) + "\n")
                    print(f'{name:8s} {client:8s} r{rnd} {row["msgs_per_s"]:>10.0f}/s p50 {row["p50_us"]:>8.1f} '
                          f'p99 {row["p99_us"]:>9.1f} cpu {row["client_cpu_us_per_msg"]:>7.2f} '
                          f'broker {row["broker_cpu_us_per_msg"]:>6.2f} load {load}', flush=True)
        finally:
            stop_broker(p, data)


def table(path):
    rows = [json.loads(line) for line in open(path)]
    keys = ["msgs_per_s", "p50_us", "p99_us", "client_cpu_us_per_msg", "broker_cpu_us_per_msg"]
    print("| scenario | client | runs | msgs/s | p50 µs | p99 µs | client CPU µs/msg | broker CPU µs/msg | ours/official msgs/s | ours/official CPU |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for sc in SCENARIOS:
        med = {}
        for cl in ("ours", "official"):
            rs = [r for r in rows if r["scenario"] == sc and r["client"] == cl]
            if rs:
                med[cl] = {k: statistics.median(r[k] for r in rs) for k in keys}
                med[cl]["n"] = len(rs)
        for cl in ("ours", "official"):
            if cl not in med:
                continue
            m = med[cl]
            tp = cpu = ""
            if cl == "ours" and "official" in med:
                o = med["official"]
                tp = f'{m["msgs_per_s"] / o["msgs_per_s"]:.2f}×'
                cpu = f'{m["client_cpu_us_per_msg"] / o["client_cpu_us_per_msg"]:.2f}×'
            print(f'| {sc} | {cl} | {m["n"]} | {m["msgs_per_s"]:,.0f} | {m["p50_us"]:,.0f} | {m["p99_us"]:,.0f} | '
                  f'{m["client_cpu_us_per_msg"]:.1f} | {m["broker_cpu_us_per_msg"]:.1f} | {tp} | {cpu} |')


def pairs(path):
    rows = [json.loads(line) for line in open(path)]
    for sc in SCENARIOS:
        tp, cpu = [], []
        for rnd in sorted({r["round"] for r in rows if r["scenario"] == sc}):
            o = [r for r in rows if r["scenario"] == sc and r["round"] == rnd and r["client"] == "ours"]
            f = [r for r in rows if r["scenario"] == sc and r["round"] == rnd and r["client"] == "official"]
            if o and f:
                tp.append(o[0]["msgs_per_s"] / f[0]["msgs_per_s"])
                cpu.append(o[0]["client_cpu_us_per_msg"] / f[0]["client_cpu_us_per_msg"])
        if tp:
            print(f'{sc:8s} msgs/s ratios {" ".join(f"{x:.2f}" for x in tp)} (median {statistics.median(tp):.2f}); '
                  f'CPU ratios {" ".join(f"{x:.2f}" for x in cpu)} (median {statistics.median(cpu):.2f})')


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "pairs":
        pairs(sys.argv[2])
    else:
        sys.exit(__doc__)
