#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The one-sided benchmarks (bench/rma.c, bench/rma_epoch.c) and bench/compare --benches rma.

usage: check_rma.py --compare bench/compare --prefix DIR

1. The report: Tandem's cells read "unsupported" where its runs answered
   MPI_ERR_UNSUPPORTED_OPERATION, a target is a ratio to the better anchor of the run
   (the lower latency, the higher bandwidth) and an anchor that failed is not that
   anchor; a latency target's "CPUs near" ratio takes the rounds whose host probes were
   fast only; the Put epoch table gives each library's time and peak RSS, or its failure.
2. A run that crashes in one KIND:SYNC fails that one alone: the job goes on with the
   rest (a fake library that crashes in allocate:lock).
3. bench/compare --benches rma on Tandem alone, end to end: every operation and
   KIND:SYNC of the plan, and the Put epoch, has figures or reads "unsupported"
   (today's Tandem has no one-sided calls), the programs exit 0, the report is written.
"""
import argparse
import csv
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def load(path):
    loader = importlib.machinery.SourceFileLoader("compare", path)
    spec = importlib.util.spec_from_loader("compare", loader)
    cmp = importlib.util.module_from_spec(spec)
    loader.exec_module(cmp)
    return cmp


def row_of(text, start):
    line = next((l for l in text.splitlines() if l.startswith(start)), None)
    if line is None:
        sys.exit(f"FAIL: no row '{start}' in:\n{text}")
    return [c.strip() for c in line.strip("|").split("|")]


def check_report(cmp):
    raw = []

    def fig(lib, bench, param, size, metric, value, rnd=0):
        raw.append(dict(lib=lib, round=str(rnd), job="j", np="2", buffers="-", bench=bench,
                        param=param, size=str(size), metric=metric, value=str(value)))

    for rnd in range(3):
        # Put latency: Tandem unsupported, Open MPI 0.2, MPICH 0.4
        fig("ompi", "put_latency", "allocate:flush", 8, "lat_us", 0.2, rnd)
        fig("mpich", "put_latency", "allocate:flush", 8, "lat_us", 0.4, rnd)
        # Get latency: Tandem 0.09 against the better (lower) anchor 0.2: 0.45, met
        fig("tandem", "get_latency", "allocate:flush", 8, "lat_us", 0.09, rnd)
        fig("ompi", "get_latency", "allocate:flush", 8, "lat_us", 0.2, rnd)
        fig("mpich", "get_latency", "allocate:flush", 8, "lat_us", 0.3, rnd)
        # CAS: Open MPI failed, so MPICH (1.0) is the better anchor: 0.6, not met
        fig("tandem", "cas_latency", "allocate:flush", 8, "lat_us", 0.6, rnd)
        fig("mpich", "cas_latency", "allocate:flush", 8, "lat_us", 1.0, rnd)
        # Put bandwidth 1 MiB on create windows: the better anchor is the higher, 5000
        for lib, v in (("tandem", 4000), ("ompi", 5000), ("mpich", 3000)):
            fig(lib, "put_bw", "create:flush", 1 << 20, "bw_MBps", v, rnd)
    # Fetch_and_op: three rounds with the CPUs near (probes 40 ns), Tandem 0.1 against 0.2,
    # three far (170 ns), Tandem 0.9: over every round 0.5 ÷ 0.2 = 2.50, near alone 0.50
    for rnd in range(6):
        near = rnd < 3
        for lib, v in (("tandem", 0.1 if near else 0.9), ("ompi", 0.2), ("mpich", 0.3)):
            fig(lib, "fop_latency", "allocate:flush", 8, "lat_us", v, rnd)
            fig(lib, "fop_latency", "allocate:flush", 8, "c2c_ns", 40 if near else 170, rnd)
    # a ratio far below 0.01 keeps its digits (an anchor 10000 times faster is not "0.00")
    for lib, v in (("tandem", 1), ("ompi", 10000)):
        fig(lib, "put_bw", "dynamic:flush", 4 << 20, "bw_MBps", v)
    fig("tandem", "put_latency", "allocate:flush", 0, "unsupported", 1)
    # the Put epoch: Tandem completes, MPICH gives up (memory), Open MPI completes
    for lib, t, rss in (("tandem", 1.5, 30), ("ompi", 2.0, 14)):
        for m, v in (("time_s", t), ("put_ns", t * 100), ("puts", 1e7), ("rss_peak_MiB", rss),
                     ("rss_peak_MiB_r0", rss), ("rss_peak_MiB_r1", 12), ("rss_before_MiB", 12)):
            fig(lib, "put_epoch", "allocate:lock", 8, m, v)
    fig("mpich", "put_epoch", "allocate:lock", 8, "gave_up_rss_MiB", 4100)
    meta = dict(libs={n: {} for n in ("tandem", "ompi", "mpich")},
                rma_failed={"ompi": {"cas_latency allocate:flush": ["round 1: exit 139"]},
                            "mpich": {"put_epoch allocate:lock": [
                                "round 1: put_epoch allocate:lock: rank 0 gave up after 9000000 "
                                "Puts: resident memory limit (-c)"]}},
                rma_unsupported={"tandem": {"put_latency allocate:flush": "MPI_Win_allocate: no"}},
                epoch=dict(puts=10_000_000, limit_s=120, cap_mib=4096))
    c = cmp.RmaCells(meta, raw)
    text, met, n = cmp.rma_tables(c, meta)
    r = row_of(text, "| Put latency 8 B, allocate + flush")
    if r[1] != "unsupported" or r[4] != "—" or not r[7].startswith("no (unsupported)"):
        sys.exit(f"FAIL: Tandem unsupported must read 'unsupported', no ratio, not met: {r}")
    r = row_of(text, "| Get latency 8 B, allocate + flush")
    if r[4] != "0.45" or r[5] != "—" or r[7] != "yes":
        sys.exit(f"FAIL: Get latency 0.09 against the better anchor 0.2 must be 0.45, met: {r}")
    r = row_of(text, "| Compare_and_swap latency, allocate + flush")
    if r[2] != "failed" or r[4] != "0.60" or r[7] != "no":
        sys.exit(f"FAIL: a failed anchor is not the better anchor (0.6 against MPICH 1.0): {r}")
    r = row_of(text, "| Put bandwidth 1 MiB, create + flush")
    if r[4] != "0.80" or r[7] != "no":
        sys.exit(f"FAIL: bandwidth 4000 against the better anchor 5000 must be 0.80, not met: {r}")
    r = row_of(text, "| Put bandwidth 4 MiB, dynamic + flush")
    if r[4] != "1.0e-04":
        sys.exit(f"FAIL: a ratio of 0.0001 must read 1.0e-04: {r}")
    r = row_of(text, "| Fetch_and_op latency, allocate + flush")
    if r[4] != "2.50" or r[5] != "0.50" or r[7] != "no":
        sys.exit(f"FAIL: Fetch_and_op: 2.50 over every round, 0.50 with the CPUs near: {r}")
    if met != 1:
        sys.exit(f"FAIL: one target met in the synthetic run, the report says {met}")
    r = row_of(text, "| allocate | MPICH |")
    if "gave up" not in r[2] or "4100 MiB" not in r[2]:
        sys.exit(f"FAIL: MPICH's epoch must read as given up, with its memory: {r}")
    r = row_of(text, "| allocate | Tandem |")
    if r[2] != "completed" or r[3] != "1.50" or r[5] != "30":
        sys.exit(f"FAIL: Tandem's epoch: completed in 1.50 s, peak RSS 30 MiB: {r}")
    print("ok: the report reads unsupported and failed cells and takes the better anchor")


FAKE = r"""#!/bin/sh
# A fake one-sided benchmark: crashes in allocate:lock, measures the others.
combos=""
while [ $# -gt 0 ]; do
    case "$1" in -a) combos="$2"; shift ;; esac
    shift
done
echo "# library=fake"
echo "bench,param,size,metric,value"
for c in $(echo "$combos" | tr ',' ' '); do
    echo "# run put_latency $c"
    if [ "$c" = "allocate:lock" ]; then
        echo "Segmentation fault" >&2
        exit 139
    fi
    echo "put_latency,$c,8,lat_us,1.5"
done
"""


def check_resume(cmp):
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "fake_rma"
        exe.write_text(FAKE)
        exe.chmod(0o755)
        lib = cmp.Lib("ompi", "true", "true", lambda np: [])
        lib.built["rma"] = exe
        job = cmp.Job("rma", 2, ["-c", "put_latency", "-s", "8"], "-", 1)
        job.key, job.op, job.per_combo = "rma.put_latency", "put_latency", 1
        job.combos = ["allocate:flush", "allocate:lock", "create:flush", "dynamic:flush"]
        args = argparse.Namespace(timeout=60)
        with open(Path(tmp) / "log", "w") as log_f:
            rows, fails, unsup, _ = cmp.rma_run(lib, job, Path(tmp), 0, args, log_f)
        got = sorted(r[1] for r in rows)
        if got != ["allocate:flush", "create:flush", "dynamic:flush"]:
            sys.exit(f"FAIL: after a crash in allocate:lock the others must still run: {got}")
        if list(fails) != [("put_latency", "allocate:lock")] or "139" not in fails[
                ("put_latency", "allocate:lock")]:
            sys.exit(f"FAIL: allocate:lock alone must fail, with the exit status: {fails}")
    print("ok: a crash in one KIND:SYNC fails that one, the job goes on with the rest")


def check_run(args, cmp):
    prefix = os.path.abspath(args.prefix)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, os.path.abspath(args.compare), "--libs", "tandem",
                            "--benches", "rma", "--quick", "--rounds", "1", "--budget", "0.01",
                            "--epoch-puts", "100000", "--epoch-kinds", "allocate,create",
                            "--no-install", "--no-plots", "--tandem-prefix", prefix,
                            "--out", "out", "--timeout", "600"],
                           cwd=tmp, capture_output=True, text=True, timeout=1200)
        out = Path(tmp) / "out"
        try:
            rows = list(csv.DictReader(open(out / "raw.csv")))
            summary = (out / "summary.md").read_text()
        except OSError as e:
            sys.exit(f"FAIL: compare --benches rma wrote no results ({e}):\n"
                     f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
        if r.returncode != 0:
            sys.exit(f"FAIL: compare --benches rma exited {r.returncode}:\n"
                     f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
        if "Tandem: missing" in r.stdout or "**missing**" in summary.split("###")[0]:
            sys.exit(f"FAIL: Tandem must not be missing:\n{r.stdout[-3000:]}")
        want = {(op, c) for op, p in cmp.RMA_PLAN["quick"].items() for c in p["combos"]}
        want |= {("put_epoch", "allocate:lock"), ("put_epoch", "create:lock")}
        have = {(x["bench"], x["param"]) for x in rows if x["metric"] != "c2c_ns"}
        if want - have:
            sys.exit(f"FAIL: no figure and no 'unsupported' for {sorted(want - have)}:\n"
                     f"{r.stdout[-3000:]}")
        unsupported = {(x["bench"], x["param"]) for x in rows if x["metric"] == "unsupported"}
        for bench, param in want:
            measured = any(x["bench"] == bench and x["param"] == param
                           and x["metric"] in ("lat_us", "bw_MBps", "time_s") for x in rows)
            if measured == ((bench, param) in unsupported):
                sys.exit(f"FAIL: {bench} {param} must have figures or be unsupported, not "
                         f"{'both' if measured else 'neither'}")
        if "### Targets (issue 25), 2 ranks" not in summary or "lock epoch of" not in summary:
            sys.exit(f"FAIL: the summary has no targets or epoch table:\n{summary[:3000]}")
        if unsupported and "| unsupported |" not in summary:
            sys.exit(f"FAIL: unsupported runs must read 'unsupported' in the summary:\n"
                     f"{summary[:3000]}")
        state = f"{len(unsupported)} of {len(want)} unsupported"
    print(f"ok: compare --benches rma ran on Tandem end to end ({state})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", required=True)
    ap.add_argument("--prefix", required=True, help="Tandem's install prefix (bin/mpicc)")
    args = ap.parse_args()
    cmp = load(args.compare)
    check_report(cmp)
    check_resume(cmp)
    check_run(args, cmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
