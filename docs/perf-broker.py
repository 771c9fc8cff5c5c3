#!/usr/bin/env python3
"""Runs one rmqbench scenario against rocketmq-local in its own process and
adds the broker's CPU per message to rmqbench's JSON line.

    python3 docs/perf-broker.py BROKER_BIN RMQBENCH_BIN FLUSH [rmqbench flags...]

FLUSH is async or sync (rocketmq-local -flush). The broker listens on
127.0.0.1:19876 (NameServer) and 127.0.0.1:20911, stores under a fresh
temporary directory, and is stopped (SIGTERM) and removed afterwards.

Broker CPU is user+system time from /proc/<pid>/stat, sampled every 50 ms.
The measured window is the last `seconds` (rmqbench's own measured time)
before the broker went idle, which for consume mode leaves out the preload.
With PERF=1 `perf stat` also counts the broker's syscalls per message.
See docs/perf-broker.md.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # rmqbench has exited
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def busy_seconds():
    """CPU time used by everything on the machine (all CPUs, not idle)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / TICK


def main():
    if len(sys.argv) < 4 or sys.argv[3] not in ("async", "sync"):
        sys.exit(__doc__)
    broker_bin, bench_bin, flush = sys.argv[1:4]
    bench_args = sys.argv[4:]
    data = tempfile.mkdtemp(prefix="rmqdata-perf-")
    args = [broker_bin, "-namesrv", "127.0.0.1:19876", "-broker", "127.0.0.1:20911",
            "-data", data, "-flush", flush]
    if os.environ.get("CPUPROFILE"):
        args += ["-cpuprofile", os.environ["CPUPROFILE"]]
    broker = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(2):  # NameServer and broker-a announce themselves
            line = broker.stdout.readline()
            if "listening" not in line:
                sys.exit("broker did not start: " + line)
        samples, stop = [], threading.Event()
        bench_pid = [0]
        last_bench = [0.0]

        def sample():
            while not stop.is_set():
                b = cpu_seconds(bench_pid[0]) if bench_pid[0] else 0.0
                if b is not None:
                    last_bench[0] = b
                samples.append((time.monotonic(), cpu_seconds(broker.pid), busy_seconds(), last_bench[0]))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()
        perf, perf_out = None, os.path.join(data, "perfstat.txt")
        if os.environ.get("PERF"):
            names = ["read", "write", "epoll_wait", "futex", "setsockopt", "madvise", "fdatasync"]
            events = ",".join("syscalls:sys_enter_" + n for n in names)
            perf = subprocess.Popen(["perf", "stat", "-x,", "-o", perf_out, "-e", events, "-p", str(broker.pid)])
        bench = subprocess.Popen([bench_bin, "-namesrv", "127.0.0.1:19876"] + bench_args,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        bench_pid[0] = bench.pid
        out, errout = bench.communicate()
        time.sleep(0.3)
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        stop.set()
        sampler.join()
        if bench.returncode != 0:
            sys.exit("rmqbench failed:\n" + errout)
        res = json.loads(out.strip().splitlines()[-1])

        # The run ends where the broker last used more than 15% of a core.
        end = samples[-1][0]
        for a, b in zip(samples, samples[1:]):
            if (b[1] - a[1]) / (b[0] - a[0]) > 0.15:
                end = b[0]
        start = end - res["seconds"]

        def at(t, k):
            for a, b in zip(samples, samples[1:]):
                if a[0] <= t <= b[0]:
                    return a[k] + (b[k] - a[k]) * (t - a[0]) / (b[0] - a[0])
            return samples[0][k] if t < samples[0][0] else samples[-1][k]

        used = at(end, 1) - at(start, 1)
        # CPU used by neither the broker nor rmqbench: other load on the
        # machine, which makes the numbers less comparable.
        other = (at(end, 2) - at(start, 2)) - used - (at(end, 3) - at(start, 3))
        res["flush"] = flush
        res["broker_cpu_us_per_msg"] = round(used * 1e6 / res["msgs"], 2)
        res["broker_cores"] = round(used / res["seconds"], 2)
        res["other_cores"] = round(other / res["seconds"], 2)
        if perf:
            for line in open(perf_out):
                f = line.strip().split(",")
                if len(f) > 2 and f[0].isdigit() and f[2].startswith("syscalls:sys_enter_"):
                    res[f[2][len("syscalls:sys_enter_"):] + "_per_msg"] = round(int(f[0]) / res["msgs"], 3)
        print(json.dumps(res))
    finally:
        broker.send_signal(signal.SIGTERM)
        try:
            broker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            broker.kill()
            broker.wait()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
