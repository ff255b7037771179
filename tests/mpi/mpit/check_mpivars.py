#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""MPICH's own MPI_T client, mpivars (Debian's mpich package, built against libmpich.so.12),
runs on Tandem's library unchanged and lists Tandem's variables.

usage: check_mpivars.py --mpirun MPIRUN --libdir DIR --info TANDEM_INFO

1. mpivars as a singleton, with DIR first in LD_LIBRARY_PATH (libmpich.so.12 resolves
   there): exit 0, nothing on stderr (mpivars complains there about string lengths that
   break MPI_T's convention and datatypes a class does not allow), as many control and
   performance variables and categories as `tandem_info --mpit` lists through MPI_T, every
   one of their names, each category's counts, and a value set in the environment
   (TANDEM_EAGER_LIMIT=8k reads 8192).
2. The same under mpirun on 2 ranks: every rank lists them.
Exit 77 (skipped) where mpivars is not installed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import run_test  # noqa: E402


def fail(msg, out="", err=""):
    print(f"FAIL: {msg}")
    for name, text in (("stdout", out), ("stderr", err)):
        lines = text.splitlines()
        if lines:
            print(f"{name} (last 40 of {len(lines)} lines):")
            for line in lines[-40:]:
                print("  | " + line)
    sys.exit(1)


def tandem_lists(info, env):
    """Names and counts as tandem_info lists them through MPI_T."""
    r = subprocess.run([info, "--mpit"], env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"tandem_info --mpit exited {r.returncode}", r.stdout, r.stderr)
    sections = {}
    current = None
    for line in r.stdout.splitlines():
        m = re.match(r"^(\d+) (control variables|performance variables|categories|events)$", line)
        if m:
            current = m.group(2)
            sections[current] = {"count": int(m.group(1)), "items": []}
        elif current and line.startswith("  "):
            sections[current]["items"].append(line.strip())
    cvars = [re.split(r" = ", s)[0] for s in sections["control variables"]["items"]]
    pvars = [s.split()[0] for s in sections["performance variables"]["items"]]
    cats = {}
    for s in sections["categories"]["items"]:
        m = re.match(r"^(\S+): (\d+) control variables, (\d+) performance variables, (\d+) events, "
                     r"(\d+) subcategories$", s)
        cats[m.group(1)] = (int(m.group(2)), int(m.group(3)), int(m.group(5)))
    return cvars, pvars, cats


def check_listing(out, cvars, pvars, cats, copies=1):
    want = [(f"{len(cvars)} MPI Control Variables", "control variables"),
            (f"{len(pvars)} MPI Performance Variables", "performance variables"),
            (f"{len(cats)} MPI_T categories", "categories")]
    for text, what in want:
        n = out.count(text)
        if n != copies:
            return f"'{text}' appears {n} times, expected {copies} ({what} per tandem_info)"
    for name in cvars + pvars:
        if not re.search(r"^\t" + re.escape(name) + r"\s*[=\t:]", out, re.M):
            return f"mpivars does not list {name}"
    for name, (nc, np_, ns) in cats.items():
        if ns:
            line = (f"Category {name} has {nc} control variables, {np_} performance variables, "
                    f"and {ns} subcategories")
        elif nc or np_:
            line = (f"Category {name} has {nc} control variables, {np_} performance variables, "
                    f"and 0 subcategories")
        else:
            line = f"Category {name} defined but has no content"
        if line not in out:
            return f"mpivars does not say '{line}'"
    if not re.search(r"^\tTANDEM_EAGER_LIMIT\s*=8192\t", out, re.M):
        return "TANDEM_EAGER_LIMIT does not read 8192 (set to 8k in the environment)"
    if "Enum TANDEM_RNDV_PROTOCOL (7) values: auto(0),rget(1),rput(2),coop(3),rtr(4)," not in out:
        return "mpivars does not show TANDEM_RNDV_PROTOCOL's enumeration"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--info", required=True)
    a = ap.parse_args()
    mpivars = shutil.which("mpivars")
    if not mpivars:
        print("SKIP: mpivars (Debian's mpich package) is not installed")
        return 77
    env = dict(os.environ)
    env = {k: v for k, v in env.items() if not k.startswith("TANDEM_")}
    env["LD_LIBRARY_PATH"] = a.libdir + (":" + env["LD_LIBRARY_PATH"]
                                         if env.get("LD_LIBRARY_PATH") else "")
    env["TANDEM_EAGER_LIMIT"] = "8k"
    why = run_test.ldd_check(mpivars, env, "libmpich.so.12", a.libdir)
    if why:
        fail(why)
    cvars, pvars, cats = tandem_lists(a.info, env)
    if len(cvars) < 40 or len(pvars) < 60 or "tandem_p2p" not in cats:
        fail(f"tandem_info --mpit lists {len(cvars)} cvars, {len(pvars)} pvars, {sorted(cats)}")

    r = subprocess.run([mpivars], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or r.stderr.strip():
        fail(f"mpivars (singleton) exited {r.returncode} with stderr", r.stdout, r.stderr)
    why = check_listing(r.stdout, cvars, pvars, cats)
    if why:
        fail(f"mpivars (singleton): {why}", r.stdout, r.stderr)
    print(f"ok: mpivars lists Tandem's {len(cvars)} control and {len(pvars)} performance "
          f"variables and {len(cats)} categories")

    # line-buffered: both ranks write to one pipe, and a block-buffered write can end mid-line
    # with the other rank's block landing inside that line
    job = run_test.Job([a.mpirun, "-n", "2", "--timeout", "120", "stdbuf", "-oL", mpivars],
                       env=env, merge_stderr=False)
    rc, out, err = job.wait(timeout=150)
    problems = job.cleanup_problems()
    if rc != 0 or err.strip() or problems:
        fail(f"mpirun -n 2 mpivars: {run_test.describe_status(rc)} {problems}", out, err)
    why = check_listing(out, cvars, pvars, cats, copies=2)
    if why:
        fail(f"mpirun -n 2 mpivars: {why}", out, err)
    print("ok: mpirun -n 2 mpivars lists them on both ranks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
