#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/unit/net_ucx's cases across two netns-cluster nodes (../shared/tools): one
process in node0 and one in node1, UCX_TLS=tcp over ncl0, addresses through pipes; then
the same with the process in node1 killed mid-job. Exit 77 (with the reason) where
the nodes cannot be made: not root, no netns-cluster, no `ip`."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from netns_cluster import Cluster, Unavailable  # noqa: E402

net_ucx, script = sys.argv[1], sys.argv[2]


def skip(why):
    print("skipped: " + why)
    sys.exit(77)


if not shutil.which("unshare"):
    skip("no unshare command")
# the nodes are shared with other jobs (other worktrees' tests, bench/compare): bring
# them up and down only through the shared locks of netns_cluster.py
nodes = Cluster(script, 2)
try:
    nodes.enter()
except Unavailable as e:
    skip(str(e))
cluster = script

# the kill case checks that operations pending toward the dead peer fail: UCX's peer
# error mode promises that (ucx.h)
env = dict(os.environ, UCX_TLS="tcp", UCX_NET_DEVICES="ncl0", UCX_KEEPALIVE_INTERVAL="1s",
           TANDEM_UCX_PEER_ERRORS="1")
failed = 0
try:
    for case in ("traffic", "kill"):
        r01, w01 = os.pipe()
        r10, w10 = os.pipe()
        procs = []
        for rank, node in ((0, "node0"), (1, "node1")):
            rfd, wfd = (r10, w01) if rank == 0 else (r01, w10)
            procs.append(subprocess.Popen(
                [cluster, "exec", node, net_ucx, "child", str(rank), str(rfd), str(wfd), case],
                pass_fds=(rfd, wfd), env=env))
        for fd in (r01, w01, r10, w10):
            os.close(fd)
        for rank, p in enumerate(procs):
            try:
                rc = p.wait(timeout=200)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = "a hang"
            # the killed process ends by SIGKILL; sh -c under `ip netns exec` reports it as 137
            if case == "kill" and rank == 1 and rc in (-9, 137):
                continue
            if rc != 0:
                print("%s: rank %d on node%d ended with %s" % (case, rank, rank, rc))
                failed += 1
finally:
    nodes.leave()
if failed:
    sys.exit(1)
print("No Errors")
