#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The benchmark harness's host probe (bench/common.c) and what bench/compare makes of it.

usage: check_bench.py --mpirun MPIRUN --latency LATENCY_EXE --compare bench/compare --prefix DIR

1. With 2 ranks on at least 2 CPUs, every latency figure carries a c2c_ns row: the
   time a cache line took between ranks 0 and 1, a positive number of nanoseconds (in
   one of five runs: a probe whose rank is preempted for 50 ms gives up).
2. With more ranks than CPUs no probe is taken (the ranks may share a CPU).
3. bench/compare keeps, in its "near" tables, only the rounds whose probes were fast,
   and compares the libraries on those rounds alone.
4. -o BYTES starts the buffers BYTES past a page (the header says so; 4096 and up,
   and offsets that are not multiples of 8, are refused), and the full comparison runs latency and bw with a buffer 16 bytes
   past a page ("malloc") besides the page-aligned one, which alone feeds the near
   tables.
5. bench/compare run end to end on Tandem alone with a relative --out, from another
   directory: the runs find their binaries and the results land there (a relative path
   once named nothing where the runs start, and every run failed with exit 127).
6. bench/compare --load runs the benchmarks beside each kind of load in turn, writes the
   median and worst of every cell, and leaves none of its load running.
"""
import argparse
import csv
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile


def run(mpirun, n, exe):
    r = subprocess.run([mpirun, "-n", str(n), exe, "-s", "8,64", "-T", "0.01"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"FAIL: {exe} on {n} ranks exited {r.returncode}:\n{r.stdout}{r.stderr}")
    rows = [l.split(",") for l in r.stdout.splitlines() if l.count(",") == 4
            and not l.startswith("bench,")]
    return rows


def check_probe(args):
    ncpu = os.cpu_count() or 1
    if ncpu < 2:
        print("skip: one CPU, no probe to take")
        return 77
    # a probe gives up (no row) when a rank is preempted for 50 ms in the middle of it,
    # which a busy machine does now and then: one run of five must have both rows
    for attempt in range(5):
        rows = run(args.mpirun, 2, args.latency)
        probes = {int(r[2]): float(r[4]) for r in rows if r[3] == "c2c_ns"}
        if sorted(probes) == [8, 64]:
            break
    else:
        sys.exit(f"FAIL: expected a c2c_ns row for sizes 8 and 64 in one of 5 runs, got {rows}")
    for size, ns in probes.items():
        # a probe whose rank was preempted takes a scheduler slice or more: any positive
        # finite time is plausible on a busy machine
        if not 0 < ns < float("inf"):
            sys.exit(f"FAIL: c2c_ns {ns} at size {size} is not a plausible time")
    print(f"ok: 2 ranks, probes {probes} ns")
    rows = run(args.mpirun, ncpu + 1, args.latency)
    if any(r[3] == "c2c_ns" for r in rows):
        sys.exit(f"FAIL: {ncpu + 1} ranks on {ncpu} CPUs took a probe: {rows}")
    if not any(r[3] == "lat_us" for r in rows):
        sys.exit(f"FAIL: no latency rows on {ncpu + 1} ranks: {rows}")
    print(f"ok: {ncpu + 1} ranks on {ncpu} CPUs, no probe")
    return 0


def check_offset(args):
    r = subprocess.run([args.mpirun, "-n", "2", args.latency, "-s", "4K", "-T", "0.01", "-o", "16",
                        "-v"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or " offset=16 " not in r.stdout:
        sys.exit(f"FAIL: latency -o 16 -v: exit {r.returncode}, no 'offset=16' in the header:\n"
                 f"{r.stdout}{r.stderr}")
    for bad in ("4096", "12"):
        r = subprocess.run([args.mpirun, "-n", "2", args.latency, "-o", bad], capture_output=True,
                           text=True, timeout=120)
        if r.returncode == 0:
            sys.exit(f"FAIL: latency -o {bad} was accepted")
    print("ok: -o 16 runs (every byte checked), -o 4096 and -o 12 are refused")


def check_compare_malloc(cmp):
    ns = argparse.Namespace(benches=["latency", "bw", "bibw"], np=None, buffers=None, sizes=None,
                            validate=False, budget=None)
    got = {(j.bench, j.buffers): j.args for j in cmp.make_jobs(ns, "full")}
    for want in (("latency", "malloc"), ("bw", "malloc"), ("latency", "single")):
        a = got.get(want)
        if a is None or ("-o" in a) != (want[1] == "malloc") or (
                want[1] == "malloc" and a[a.index("-o") + 1] != "16"):
            sys.exit(f"FAIL: full mode job {want}: {a} (jobs: {sorted(got)})")
    if ("bibw", "malloc") in got:
        sys.exit("FAIL: bibw got a malloc job")
    print("ok: the full comparison adds latency and bw with malloc'ed buffers")


def check_compare(path):
    loader = importlib.machinery.SourceFileLoader("compare", path)
    spec = importlib.util.spec_from_loader("compare", loader)
    cmp = importlib.util.module_from_spec(spec)
    loader.exec_module(cmp)
    raw = []

    def fig(lib, rnd, value, c2c, bench="allreduce", size=8, buffers="-"):
        job = "coll.np2" if bench != "latency" else "latency.np2." + buffers
        base = dict(lib=lib, round=str(rnd), job=job, np="2", buffers=buffers, bench=bench,
                    param="-", size=str(size))
        raw.append(dict(base, metric="lat_us", value=str(value)))
        raw.append(dict(base, metric="c2c_ns", value=str(c2c)))

    # Near rounds (40 ns): Tandem 0.9, Open MPI 1.0, MPICH 2.0 -> 0.90. Far rounds
    # (170 ns) would turn it around (Tandem 3.0) and must not count.
    for rnd in range(3):
        fig("tandem", rnd, 0.9, 40)
        fig("ompi", rnd, 1.0, 42)
        fig("mpich", rnd, 2.0, 41)
    for rnd in range(3, 9):
        fig("tandem", rnd, 3.0, 170)
        fig("ompi", rnd, 1.1, 40 if rnd == 3 else 165)
        fig("mpich", rnd, 2.2, 175)
    # a cell where Open MPI has a single near round: a dash, not a ratio
    fig("tandem", 0, 0.5, 40, size=64)
    fig("ompi", 0, 0.6, 40, size=64)
    fig("ompi", 1, 0.6, 160, size=64)
    fig("mpich", 0, 0.7, 40, size=64)
    fig("mpich", 1, 0.7, 40, size=64)
    fig("tandem", 1, 0.5, 40, size=64)
    # latency, near: page-aligned 0.8 against 1.0; malloc'ed 3.0: the near table
    # shows the page-aligned figure (its row compares like with like)
    for rnd in range(3):
        for lib, v in (("tandem", 0.8), ("ompi", 1.0), ("mpich", 1.2)):
            fig(lib, rnd, v, 40, bench="latency", size=8, buffers="single")
            fig(lib, rnd, v * (3.75 if lib == "tandem" else 1), 40, bench="latency", size=8,
                buffers="malloc")
    states, near = cmp.host_states(raw)
    if not 40 <= near <= 120:
        sys.exit(f"FAIL: near threshold {near} ns from probes of 40-175 ns")
    if states[("tandem", 5, "coll.np2", "allreduce", 2, "-", "-", 8)] != "other":
        sys.exit("FAIL: a 170 ns round counted as near")
    acc = cmp.aggregate_states(raw, states)
    libs = {n: cmp.LibInfo(n, {}) for n in ("tandem", "ompi", "mpich")}
    text = cmp.state_tables(acc, states, near, libs)
    row = next((l for l in text.splitlines() if l.startswith("| allreduce |")), None)
    if row is None:
        sys.exit(f"FAIL: no allreduce row in:\n{text}")
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    if cells != ["0.90", "-"]:
        sys.exit(f"FAIL: expected near ratios ['0.90', '-'], got {cells}:\n{text}")
    row = next((l for l in text.splitlines() if l.startswith("| latency |")), None)
    if row is None or "0.80" not in row or "3.00" in row:
        sys.exit(f"FAIL: the near latency row must be the page-aligned one (0.80):\n{text}")
    if "2 of 2 at or below 1" not in text:
        sys.exit(f"FAIL: the count of cells at or below 1 is wrong:\n{text}")
    if cmp.state_tables(cmp.aggregate_states([], {}), {}, None, libs) != "":
        sys.exit("FAIL: a run without probes must give no near tables")
    print("ok: bench/compare compares the near rounds only")
    check_compare_malloc(cmp)


def check_compare_run(args):
    prefix = os.path.abspath(args.prefix)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, os.path.abspath(args.compare), "--libs", "tandem",
                            "--benches", "latency", "--sizes", "8", "--rounds", "1",
                            "--budget", "0.01", "--no-install", "--no-plots",
                            "--tandem-prefix", prefix, "--out", "rel/out", "--timeout", "300"],
                           cwd=tmp, capture_output=True, text=True, timeout=600)
        raw = os.path.join(tmp, "rel", "out", "raw.csv")
        rows = open(raw).read().splitlines() if os.path.exists(raw) else []
        if r.returncode != 0 or not any(l.startswith("tandem,") and ",lat_us," in l
                                        for l in rows):
            sys.exit(f"FAIL: compare --out rel/out: exit {r.returncode}, raw.csv rows {rows[:3]}:\n"
                     f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
        # Tandem's MPI_T counters of the run: a latency test of 8 bytes sends short eager
        # messages from both ranks, on MPI_COMM_WORLD, and a per-size-class array is there
        mpit = os.path.join(tmp, "rel", "out", "mpit.csv")
        vals = {}
        for row in csv.DictReader(open(mpit)) if os.path.exists(mpit) else []:
            vals[(row["rank"], row["name"])] = row["value"]
        for rank in ("0", "1"):
            for name in ("tandem_eager_short_msgs", "tandem_comm_p2p_sent_msgs(world)"):
                if int(vals.get((rank, name), "0")) <= 0:
                    sys.exit(f"FAIL: mpit.csv: {name} of rank {rank} is "
                             f"{vals.get((rank, name))} ({len(vals)} values)")
        if ("0", "tandem_adapt_exchange_rget[9]") not in vals:
            sys.exit("FAIL: mpit.csv has no element of tandem_adapt_exchange_rget")
    print("ok: bench/compare with a relative --out ran Tandem and wrote its figures there, and "
          "Tandem's MPI_T counters into mpit.csv")


def check_compare_load(args):
    """--load: the runs beside each kind of load, median and worst, no load left behind."""
    prefix = os.path.abspath(args.prefix)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, os.path.abspath(args.compare), "--libs", "tandem",
                            "--load", "quiet,busy", "--benches", "latency", "--sizes", "8,64K",
                            "--rounds", "2", "--budget", "0.01", "--no-install", "--no-plots",
                            "--tandem-prefix", prefix, "--out", "out", "--timeout", "300"],
                           cwd=tmp, capture_output=True, text=True, timeout=900)
        left = subprocess.run(["pgrep", "-f", "tandem-compare-busy"], capture_output=True,
                              text=True).stdout.split()
        if left:
            subprocess.run(["pkill", "-KILL", "-f", "tandem-compare-busy"])
            sys.exit(f"FAIL: compare --load left its busy loops running: {left}")
        out = os.path.join(tmp, "out")
        try:
            rows = open(os.path.join(out, "load.csv")).read().splitlines()
            summary = open(os.path.join(out, "summary.md")).read()
        except OSError as e:
            sys.exit(f"FAIL: compare --load wrote no results ({e}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
        loads = {l.split(",")[1] for l in rows[1:] if ",lat_us," in l}
        if r.returncode != 0 or loads != {"quiet", "busy"}:
            sys.exit(f"FAIL: compare --load: exit {r.returncode}, loads measured {loads}:\n"
                     f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
        for want in ("| ping-pong 8 B (us) |", "Tandem median", "Tandem worst", "by load"):
            if want not in summary:
                sys.exit(f"FAIL: compare --load's summary has no '{want}':\n{summary}")
    print("ok: bench/compare --load measured quiet and busy rounds, summarised median and worst, "
          "and stopped its load")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--latency", required=True)
    ap.add_argument("--compare", required=True)
    ap.add_argument("--prefix", required=True, help="Tandem's install prefix (bin/mpicc)")
    args = ap.parse_args()
    check_compare(args.compare)
    rc = check_probe(args)
    if rc == 0:
        check_offset(args)
        check_compare_run(args)
        check_compare_load(args)
    return rc


if __name__ == "__main__":
    sys.exit(main())
