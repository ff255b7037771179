#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run the lines of tests/mpi/threads/testlist on MPICH or Open MPI (the anchors).

usage: anchors.py [--impl mpich|openmpi] [--filter REGEX] [--timeout-scale F] [--keep DIR]

The same harness as tests/mpi/rma/anchors.py (its helpers are imported from there): each
program is built with the anchor's wrapper and each testlist line run with its launcher;
TANDEM_* variables mean nothing to the anchors, so lines that differ only in them run
once; lines commented out with "#! " (waiting for Tandem) run too. Every test asks for
MPI_THREAD_MULTIPLE and fails when it gets less, so a pass here also says the anchor
provided it. KNOWN lists where an anchor is known to fail a
line ("known" when it fails, "FIXED?" when it passes). Not part of ctest: a check of the
tests themselves against real MPI implementations.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "rma"))
import anchors as rma_anchors  # noqa: E402

# (impl, regex over "name np args"): why the anchor fails it
KNOWN = []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impl", choices=sorted(rma_anchors.IMPLS), default="mpich")
    ap.add_argument("--filter", default="", help="regex over 'name np args'")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--keep", help="build into this directory (default: a temporary one)")
    a = ap.parse_args()
    impl = rma_anchors.IMPLS[a.impl]
    bindir = a.keep or tempfile.mkdtemp(prefix="thrtest-anchor-")
    os.makedirs(bindir, exist_ok=True)
    # lines commented out with "#! " (waiting for Tandem) are the anchors' lines too
    with open(os.path.join(HERE, "testlist")) as f:
        text = re.sub(r"^#! ", "", f.read(), flags=re.M)
    listed = os.path.join(bindir, "testlist")
    with open(listed, "w") as f:
        f.write(text)
    tests = [t for t in rma_anchors.parse_testlist(listed)
             if re.search(a.filter, " ".join([t[0], str(t[1])] + list(t[2])))]
    env = dict(os.environ)
    env.update(impl["env"])
    for name in sorted({t[0] for t in tests}):
        cmd = [impl["cc"], "-O2", "-pthread", "-Wall", "-Wno-stringop-overflow", "-o", os.path.join(bindir, name),
               os.path.join(HERE, name + ".c"), "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            print(f"BUILD FAIL {name}:\n{r.stderr}")
            return 1
    counts = {"pass": 0, "FAIL": 0, "known": 0, "FIXED?": 0}
    for name, np_, args, expect, timeout in tests:
        label = " ".join([name, str(np_)] + list(args))
        run = [x.format(np=np_) for x in impl["run"]] + [os.path.join(bindir, name)] + list(args)
        t0 = time.monotonic()
        shm_before = set(os.listdir("/dev/shm"))
        p = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout * a.timeout_scale)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rma_anchors.kill_strays(os.path.join(bindir, name))
            out, _ = p.communicate()
            rc = None
            rma_anchors.remove_orphans(set(os.listdir("/dev/shm")) - shm_before)
        dt = time.monotonic() - t0
        if expect == "pass":
            ok = rc == 0 and re.search(r"^\s*No Errors\s*$", out, re.M)
        elif expect == "fail":
            ok = rc not in (0, None)
        else:
            ok = rc == int(expect[5:])
        why = next((w for i, rx, w in KNOWN if i == a.impl and re.search(rx, label)), None)
        verdict = ("FIXED?" if why else "pass") if ok else ("known" if why else "FAIL")
        counts[verdict] += 1
        status = "timeout" if rc is None else f"rc {rc}"
        print(f"{verdict:6} {label:45} {status:8} {dt:6.1f}s" + (f"  ({why})" if why else ""))
        if verdict == "FAIL":
            for line in out.strip().splitlines()[-8:]:
                print("         | " + line[:200])
        sys.stdout.flush()
    print(" ".join(f"{k} {v}" for k, v in counts.items()))
    if not a.keep:
        shutil.rmtree(bindir, ignore_errors=True)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
