#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Interleaved A/B runs of one benchmark under several libraries or Tandem settings.

usage: bench/ab.py ROUNDS NP "BENCH ARGS" CONF [CONF ...]
  CONF: t (Tandem, defaults) | t:NAME=V,NAME2=V (Tandem with TANDEM_NAME=V ...)
        | t@DIR or t@DIR:NAME=V,... (the same binary on the Tandem built in DIR: its
          bin/mpirun, its lib/ first in LD_LIBRARY_PATH; DIR/install/... and a build
          directory both work: before/after A/B of a library change)
        | o (Open MPI) | m (MPICH)
  BIN=coll (the benchmark, default coll), BINDIR=results/<run>/bin (default: the
  newest results/*/bin that bench/compare built, one folder per library)

Each round runs every CONF once, in a new random order; prints, per benchmark and
size, the median latency of each CONF and its range over rounds. For quick checks
of one cell; published figures come from bench/compare. Example:
  bench/ab.py 10 4 "-c allreduce -s 64K,1M -T 0.2" t t:ALLREDUCE_ALGORITHM=linear o
"""
import collections
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, np_, args, confs = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4:]
    bench = os.environ.get("BIN", "coll")
    bindir = os.environ.get("BINDIR")
    if not bindir:
        found = sorted(REPO.glob("results/*/bin"), key=lambda p: p.stat().st_mtime)
        if not found:
            sys.exit("ab: no results/*/bin: run bench/compare once, or set BINDIR")
        bindir = found[-1]
    bindir = Path(bindir)
    mpirun = REPO / "build" / "install" / "bin" / "mpirun"
    res = collections.defaultdict(list)
    for _ in range(rounds):
        for c in random.sample(confs, len(confs)):
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("TANDEM_", "OMPI_", "MPIR_CVAR_", "MPICH_"))}
            if c == "t" or c.startswith("t:") or c.startswith("t@"):
                run, settings = mpirun, c[2:]
                if c.startswith("t@"):
                    where, _, settings = c[2:].partition(":")
                    run = Path(where) / "bin" / "mpirun"
                    env["LD_LIBRARY_PATH"] = str(Path(where) / "lib") + (
                        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
                cmd = [str(run), "-np", np_, str(bindir / "tandem" / bench)]
                for kv in filter(None, settings.split(",")):
                    k, v = kv.split("=", 1)
                    env["TANDEM_" + k] = v
            elif c == "o":
                cmd = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", np_,
                       str(bindir / "ompi" / bench)]
            elif c == "m":
                cmd = ["mpirun.mpich", "-np", np_, str(bindir / "mpich" / bench)]
            else:
                sys.exit(f"ab: unknown configuration {c!r}")
            out = subprocess.run(cmd + args, capture_output=True, text=True, env=env,
                                 timeout=600)
            if out.returncode != 0:
                sys.exit(f"ab: {c} exited {out.returncode}:\n{out.stderr[-2000:]}")
            for line in out.stdout.splitlines():
                f = line.split(",")
                if len(f) == 5 and f[3] == "lat_us":
                    res[(f[0], int(f[2]), c)].append(float(f[4]))
    for b, s in sorted({(k[0], k[1]) for k in res}):
        cells = []
        for c in confs:
            v = res[(b, s, c)]
            if v:
                cells.append(f"{c}={statistics.median(v):.3g} [{min(v):.3g}-{max(v):.3g}]")
        print(f"{b:>10} {s:>8}: " + "  ".join(cells))


if __name__ == "__main__":
    main()
