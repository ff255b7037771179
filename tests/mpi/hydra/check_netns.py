#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Jobs of two "nodes" made by netns-cluster (network namespaces with their own host name
and boot id, ../shared/tools/README.md), launched by mpiexec.hydra through its rsh launcher.

usage: check_netns.py --cluster PATH --bindir DIR

Until the inter-node transport exists (issue 27): 2 nodes x 2 ranks must fail at MPI_Init,
once, with the node map named, and end (no hang, nothing left on a node), whether the map
comes from PMI_process_mapping or from the host names and boot ids; one node through the
same launcher must run. Skipped (77) with the reason where the cluster cannot be made
(not root, no namespaces, no mpiexec.hydra). The nodes are brought up and, when this test
made them, taken down again; a cluster that was already up is used and left as it was.
"""

import argparse
import fcntl
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_test import Job, describe_status  # noqa: E402

SKIP = 77
MESSAGE = ("ranks 0-1 on node0, 2-3 on node1: this build has no inter-node transport yet "
           "(issue 27)")


def sh(cmd, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def node_pids(node):
    r = sh(["ip", "netns", "pids", node])
    return r.stdout.split() if r.returncode == 0 else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cluster", required=True, help="path of netns-cluster")
    ap.add_argument("--bindir", required=True, help="build/tests/mpi")
    a = ap.parse_args()
    hydra = shutil.which("mpiexec.hydra")
    if not hydra:
        print("SKIP: mpiexec.hydra is not installed (Debian's mpich package)")
        return SKIP
    if not os.path.exists(a.cluster):
        print(f"SKIP: no netns-cluster at {a.cluster}")
        return SKIP
    if os.geteuid() != 0:
        print("SKIP: netns-cluster needs root to make network namespaces")
        return SKIP
    # one user of the cluster at a time (other worktrees run this test too)
    lock = open("/tmp/tandem-netns-cluster.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    before = sh([a.cluster, "hosts"]).stdout.split()
    made = not {"node0", "node1"} <= set(before)
    if made:
        up = sh([a.cluster, "up", "2"])
        if up.returncode != 0:
            sh([a.cluster, "down"])
            print("SKIP: netns-cluster up 2 failed (namespaces cannot be made here):\n"
                  + up.stderr.strip())
            return SKIP
    problems = []
    try:
        launcher = sh([a.cluster, "launcher"]).stdout.strip()
        base = [hydra, "-launcher", "rsh", "-launcher-exec", launcher]
        runs = [
            ("2 nodes x 2 ranks", ["-hosts", "node0:2,node1:2", "-n", "4"], {}, "pt2pt/send_recv",
             False),
            ("2 nodes x 2 ranks, PMI-2, map from host names",
             ["-hosts", "node0:2,node1:2", "-n", "4"],
             {"TANDEM_PMI_VERSION": "2", "TANDEM_PMI_NODEMAP": "hosts"}, "pt2pt/send_recv",
             False),
            ("1 node x 2 ranks", ["-hosts", "node0:2", "-n", "2"], {}, "hydra/pmi_env", True),
        ]
        for title, args, extra, prog, ok in runs:
            env = dict(os.environ, MPIEXEC_TIMEOUT="60", **extra)
            job = Job(base + args + [os.path.join(a.bindir, prog)], env=env)
            rc, out, _ = job.wait(timeout=90)
            found = [ln for ln in out.splitlines() if MESSAGE in ln]
            bad = []
            if ok and (rc != 0 or not re.search(r"^\s*No Errors\s*$", out, re.M)):
                bad.append(f"ended with {describe_status(rc)}, expected 0 and No Errors")
            if not ok and (rc is None or rc == 0):
                bad.append(f"ended with {describe_status(rc)}, expected a failure")
            if not ok and len(found) != 1:
                bad.append(f"{len(found)} lines say '{MESSAGE}', expected 1")
            bad += job.cleanup_problems()
            for node in ("node0", "node1"):
                if node_pids(node):
                    bad.append(f"processes left on {node}: {' '.join(node_pids(node))}")
            if bad:
                problems.append(f"{title}: " + "; ".join(bad) + "\n  output:\n    "
                                + "\n    ".join(out.splitlines()[-20:]))
    finally:
        if made:
            sh([a.cluster, "down"])
        lock.close()
    if problems:
        print("FAIL:\n" + "\n".join(problems))
        return 1
    print("No Errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
