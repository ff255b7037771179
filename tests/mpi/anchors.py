#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run the lines of tests/mpi/AREA/testlist on MPICH or Open MPI (the anchors).

usage: anchors.py AREA [--impl mpich|openmpi] [--filter REGEX] [--timeout-scale F] [--keep DIR]

AREA is rma or threads (any area whose programs use nothing but MPI). Each program is
built with the anchor's wrapper (mpicc.mpich or mpicc.openmpi) and each testlist line is
run with its launcher (mpiexec.hydra, or mpirun.openmpi with --oversubscribe and osc
sm,pt2pt: osc rdma of Open MPI 4.1.4 crashes in Compare_and_swap over vader, osc ucx gets
Fetch_and_op on doubles wrong). TANDEM_* variables mean nothing to the anchors: lines that
differ only in them run once; lines commented out with "#! " (waiting for Tandem) run
too. A line passes as on Tandem (exit 0 and "No Errors", or the expected failure); the
threads programs ask for MPI_THREAD_MULTIPLE and fail when they get less, so a pass there
also says the anchor provided it. Lines listed in KNOWN below are where the anchor is
known to be wrong or not to check; they are run and reported as "known" when they fail,
"FIXED?" when they pass.
Not part of ctest: a check of the tests themselves against real MPI implementations.
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# per area, (impl, regex over "name np args"): why the anchor fails it
KNOWN = {
    "rma": [
        ("mpich", r"^busy_target ", "passive target needs the target's progress (MPICH 4.0.2)"),
        ("mpich", r"^epoch10m [2-9] ",
         "keeps an object per queued Put: 3 GiB peak RSS for 10M Puts"),
        ("mpich", r"^errors \d+ (range|all)?$", "no range check: writes where told, crashes"),
        ("mpich", r"^errors \d+$", "no range check: writes where told, crashes"),
        ("mpich", r"^errors [23] sync$", "a Put to a target not locked is taken"),
        ("mpich", r"^errors \d+ type$",
         "mixed basic types in Accumulate: takes them, or asserts in yaksa"),
        ("mpich", r"^errors \d+ op$", "BAND on double, MAXLOC on int taken (and may hang after)"),
        ("mpich", r"^errors \d+ args$", "MPI_ERR_ARG for bad asserts and lock types"),
        ("mpich", r"^errors \d+ attach$",
         "overlapping attach and detach of unattached memory not detected"),
        ("mpich", r"^errors \d+ conflict$",
         "MPI_ERR_RMA_SYNC for every conflict; takes a Post in a Lock_all epoch, a Lock of its "
         "own exposed window and a Lock beside a Start, then hangs"),
        ("mpich", r"^attrs 3$", "MPI_WIN_BASE of Win_allocate is off by 8 bytes on rank 2"),
        ("openmpi", r"^ops \d+ (allocate|shared|shared_noncontig) pscw_nocheck",
         "osc sm hangs with MPI_MODE_NOCHECK on Post and Start"),
        ("openmpi", r"^attrs ", "new Win_create/dynamic windows are named 'pt2pt window N'"),
        ("openmpi", r"^epoch10m \d+ (create|dynamic)", "osc pt2pt: 630 MiB peak RSS"),
        ("openmpi", r"^errors \d+( (sync|conflict|range|type|op|args|attach))?$",
         "many classes not detected (conflict: only a second Lock of one target is "
         "MPI_ERR_RMA_CONFLICT, as on Tandem; the rest MPI_ERR_RMA_SYNC or taken)"),
        ("openmpi", r"^ops \d+ (create|dynamic) \S+ (1024|4096|65536)$",
         "osc pt2pt: derived get_accumulates of 8 KiB and more use a wrong target layout, "
         "and corrupt the heap"),
        ("openmpi", r"^shared \d+ noncontig", "osc sm: shared_query of an alloc_shared_noncontig "
         "window gives sizes rounded up to pages"),
        ("openmpi", r"^busy_target \d+ (create|dynamic)", "osc pt2pt needs the target's progress"),
    ],
    "threads": [],
}

IMPLS = {
    "mpich": {"cc": "mpicc.mpich", "run": ["mpiexec.hydra", "-n", "{np}"], "env": {}},
    "openmpi": {
        "cc": "mpicc.openmpi",
        "run": ["mpirun.openmpi", "--oversubscribe", "--mca", "osc", "sm,pt2pt",
                "-n", "{np}"],
        "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
    },
}


def kill_strays(exe):
    """Kill the processes running `exe` (Open MPI's ranks outlive a killed mpirun)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode(errors="replace")
            if argv0 == exe:
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def remove_orphans(names):
    """Remove /dev/shm objects a killed job left: new since it started, mapped by nobody."""
    maps = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as f:
                maps.append(f.read())
        except OSError:
            pass
    for n in names:
        if not any("/dev/shm/" + n in m for m in maps):
            try:
                os.unlink(os.path.join("/dev/shm", n))
            except OSError:
                pass


def parse_testlist(path):
    lines = []
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = shlex.split(line)
            name, np_ = fields[0], int(fields[1])
            args, expect, timeout = [], "pass", 60
            for o in fields[2:]:
                if o.startswith("arg="):
                    args.append(o[4:])
                elif o.startswith("timeout="):
                    timeout = int(o[8:])
                elif o == "expect=fail":
                    expect = "fail"
                elif o.startswith("exit="):
                    expect = o
            lines.append((name, np_, tuple(args), expect, timeout))
    seen, out = set(), []
    for t in lines:
        key = t[:4]
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("area", choices=sorted(KNOWN))
    ap.add_argument("--impl", choices=sorted(IMPLS), default="mpich")
    ap.add_argument("--filter", default="", help="regex over 'name np args'")
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--keep", help="build into this directory (default: a temporary one)")
    a = ap.parse_args()
    impl = IMPLS[a.impl]
    known = KNOWN[a.area]
    area_dir = os.path.join(HERE, a.area)
    bindir = a.keep or tempfile.mkdtemp(prefix=f"{a.area}-anchor-")
    os.makedirs(bindir, exist_ok=True)
    # lines commented out with "#! " (waiting for Tandem) are the anchors' lines too
    with open(os.path.join(area_dir, "testlist")) as f:
        text = re.sub(r"^#! ", "", f.read(), flags=re.M)
    listed = os.path.join(bindir, "testlist")
    with open(listed, "w") as f:
        f.write(text)
    tests = [t for t in parse_testlist(listed)
             if re.search(a.filter, " ".join([t[0], str(t[1])] + list(t[2])))]
    env = dict(os.environ)
    env.update(impl["env"])
    for name in sorted({t[0] for t in tests}):
        cmd = [impl["cc"], "-O2", "-pthread", "-Wall", "-Wno-stringop-overflow",
               "-o", os.path.join(bindir, name), os.path.join(area_dir, name + ".c"), "-lm"]
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
            os.killpg(p.pid, signal.SIGKILL)  # the launcher's session: it and its ranks
            kill_strays(os.path.join(bindir, name))  # ranks that left the session
            out, _ = p.communicate()
            rc = None
            remove_orphans(set(os.listdir("/dev/shm")) - shm_before)
        dt = time.monotonic() - t0
        if expect == "pass":
            ok = rc == 0 and re.search(r"^\s*No Errors\s*$", out, re.M)
        elif expect == "fail":
            ok = rc not in (0, None)
        else:
            ok = rc == int(expect[5:])
        why = next((w for i, rx, w in known if i == a.impl and re.search(rx, label)), None)
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
