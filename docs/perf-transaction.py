#!/usr/bin/env python3
"""Transactions per second, our transactional producer next to the official
Go client's, each run against our broker in a child process of rmqbench.

    python3 docs/perf-transaction.py run   RMQBENCH_BIN OUT.jsonl [callers...]
    python3 docs/perf-transaction.py table OUT.jsonl

`run` does ROUNDS rounds (default 3); in each, for every callers value
(default 64 and 1), one `rmqbench -mode tx` run of DUR (default 10s) per
client, alternating which client goes first from round to round. Every run
starts its own broker process (rmqbench without -namesrv), whose CPU over
the measured phase is rmqbench's broker_cpu_us_per_msg. Each JSONL row is
rmqbench's line plus the round and the 1-minute load average at the start.
`table` prints per callers value and client the medians, and the ratio
ours/official of the rates within each round. See docs/perf-transaction.md.
"""
import json
import os
import statistics
import subprocess
import sys


def run(bench, out, callers):
    rounds = int(os.environ.get("ROUNDS", "3"))
    dur = os.environ.get("DUR", "10s")
    with open(out, "a") as f:
        for r in range(1, rounds + 1):
            order = ["ours", "official"] if r % 2 else ["official", "ours"]
            for n in callers:
                for client in order:
                    load = os.getloadavg()[0]
                    p = subprocess.run([bench, "-client", client, "-mode", "tx", "-callers", str(n),
                                        "-duration", dur], capture_output=True, text=True)
                    if p.returncode != 0:
                        sys.exit(f"rmqbench {client} -callers {n}: exit {p.returncode}\n{p.stderr}")
                    row = json.loads(p.stdout)
                    row.update(round=r, load=round(load, 2))
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    print(json.dumps(row), flush=True)


def table(out):
    rows = [json.loads(line) for line in open(out) if line.strip()]
    print("| callers | client | runs | tx/s | p50 µs | p99 µs | client CPU µs/tx | broker CPU µs/tx | load |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    med = lambda rs, k: statistics.median(x[k] for x in rs)
    for n in sorted({x["callers"] for x in rows}, reverse=True):
        for client in ("ours", "official"):
            rs = [x for x in rows if x["callers"] == n and x["client"] == client]
            if not rs:
                continue
            print(f"| {n} | {client} | {len(rs)} | {med(rs, 'msgs_per_s'):,.0f} | {med(rs, 'p50_us'):,.0f} | "
                  f"{med(rs, 'p99_us'):,.0f} | {med(rs, 'client_cpu_us_per_msg'):.1f} | "
                  f"{med(rs, 'broker_cpu_us_per_msg'):.1f} | {med(rs, 'load'):.1f} |")
    for n in sorted({x["callers"] for x in rows}, reverse=True):
        ratios = []
        for r in sorted({x["round"] for x in rows}):
            by = {x["client"]: x for x in rows if x["callers"] == n and x["round"] == r}
            if "ours" in by and "official" in by:
                ratios.append(by["ours"]["msgs_per_s"] / by["official"]["msgs_per_s"])
        if ratios:
            print(f"callers {n}: tx/s ratios ours/official per round "
                  + " ".join(f"{x:.2f}" for x in ratios) + f" (median {statistics.median(ratios):.2f})")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4:]] or [64, 1])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
