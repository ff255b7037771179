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

net_ucx, cluster = sys.argv[1], sys.argv[2]


def skip(why):
    print("skipped: " + why)
    sys.exit(77)


if os.geteuid() != 0:
    skip("network namespaces need root")
if not os.access(cluster, os.X_OK):
    skip("no netns-cluster at " + cluster)
if not shutil.which("ip") or not shutil.which("unshare"):
    skip("no ip or unshare command")
have = subprocess.run([cluster, "hosts"], capture_output=True, text=True).stdout.split()
made = False
if "node0" not in have or "node1" not in have:
    up = subprocess.run([cluster, "up", "2"], capture_output=True, text=True)
    if up.returncode != 0:
        skip("netns-cluster up 2 failed: " + (up.stderr or up.stdout).strip()[-300:])
    made = True

env = dict(os.environ, UCX_TLS="tcp", UCX_NET_DEVICES="ncl0", UCX_KEEPALIVE_INTERVAL="1s")
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
    if made:
        subprocess.run([cluster, "down"], capture_output=True)
if failed:
    sys.exit(1)
print("No Errors")
