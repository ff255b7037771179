# SPDX-License-Identifier: BSD-3-Clause
"""The namespace cluster (../shared/tools/netns-cluster) shared by concurrent users.

Tests of several worktrees, and bench/compare, may use the nodes at the same time, so:
- bringing nodes up and taking them down happens under an exclusive lock (LOCK);
- every user holds a shared lock (USERS) for as long as its job runs;
- the last user leaves takes the cluster down, but only when a user of this module
  brought it up (the marker file MADE): a cluster someone made by hand stays up;
- ctest's fixture holds the cluster for the whole run (hold, release): one more user.
`up` of the script is idempotent, but it also drops nodes beyond N, so it is called only
when fewer than N nodes exist. Where namespaces cannot be made (not root, no `ip netns`,
no script, `up` failing) `Cluster.enter` raises Unavailable with the reason: the caller
skips, it never passes.
"""

import fcntl
import os
import shutil
import signal
import subprocess
import time

LOCK = "/tmp/tandem-netns-cluster.lock"
USERS = "/tmp/tandem-netns-cluster.users"
MADE = "/tmp/tandem-netns-cluster.made"


class Unavailable(Exception):
    """The cluster cannot be made here; the message says why."""


def find_script(root):
    """The netns-cluster script beside the project's checkout (../shared/tools)."""
    for up in ("..", os.path.join("..", "..")):
        p = os.path.normpath(os.path.join(root, up, "shared", "tools", "netns-cluster"))
        if os.path.exists(p):
            return p
    return None


def _run(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class Cluster:
    def __init__(self, script, nodes):
        self.script = script
        self.nodes = nodes
        self.names = [f"node{i}" for i in range(nodes)]
        self._users = None

    def check(self):
        """None when the cluster can be made here, else the reason."""
        if not self.script or not os.path.exists(self.script):
            return f"no netns-cluster script (looked for {self.script or '../shared/tools'})"
        if os.geteuid() != 0:
            return "netns-cluster needs root to make network namespaces"
        if not shutil.which("ip"):
            return "no `ip` command (iproute2) to make network namespaces"
        return None

    def hosts(self):
        r = _run([self.script, "hosts"])
        return r.stdout.split() if r.returncode == 0 else []

    def launcher(self):
        return _run([self.script, "launcher"]).stdout.strip()

    def enter(self):
        why = self.check()
        if why:
            raise Unavailable(why)
        with open(LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not set(self.names) <= set(self.hosts()):
                was_up = bool(self.hosts())
                r = _run([self.script, "up", str(self.nodes)])
                if r.returncode != 0:
                    if not was_up:
                        _run([self.script, "down"])
                    raise Unavailable(f"netns-cluster up {self.nodes} failed (namespaces "
                                      f"cannot be made here): {r.stderr.strip()}")
                if not was_up:
                    open(MADE, "w").close()
            self._users = open(USERS, "a")
            fcntl.flock(self._users, fcntl.LOCK_SH)
        return self

    def leave(self):
        """Stop being a user; the last one takes down a cluster this module made."""
        if self._users is None:
            return
        with open(LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            fcntl.flock(self._users, fcntl.LOCK_UN)
            self._users.close()
            self._users = None
            with open(USERS, "a") as users:
                try:
                    fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    return  # someone else's job still runs on the nodes
                if os.path.exists(MADE):
                    _run([self.script, "down"])
                    os.unlink(MADE)

    def __enter__(self):
        return self.enter()

    def __exit__(self, *exc):
        self.leave()

    def exec(self, node, cmd, timeout=30):
        return _run([self.script, "exec", node] + cmd, timeout=timeout)

    def shm(self, node):
        """Names in /dev/shm as NODE sees it (None when it cannot be listed)."""
        r = self.exec(node, ["ls", "-1", "/dev/shm"])
        return set(r.stdout.split()) if r.returncode == 0 else None

    def node_pids(self, node):
        r = _run(["ip", "netns", "pids", node])
        return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def cleanup(script):
    """Take down a cluster the tests made when no job uses it (ctest's fixture cleanup:
    a test killed by its timeout never ran its own leave)."""
    if not script or not os.path.exists(script) or os.geteuid() != 0:
        return 0
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(USERS, "a") as users:
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return 0  # another job (another worktree's tests) still runs on the nodes
            if os.path.exists(MADE):
                _run([script, "down"])
                os.unlink(MADE)
    return 0


def hold(script, pidfile, nodes=2):
    """ctest's fixture setup: a process of its own is a user of the cluster until release()
    or until ctest (our parent) is gone, so that the tests do not each bring the nodes up
    and take them down again (about 0.3 s a test). Returns at once; where the cluster
    cannot be made, nothing is held and each test skips with the reason as before."""
    cluster = Cluster(script, nodes)
    if cluster.check():
        return 0
    watch = os.getppid()
    r, w = os.pipe()
    if os.fork():
        os.close(w)
        print(os.read(r, 4096).decode(errors="replace") or "the holder did not start")
        return 0
    os.close(r)
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        cluster.enter()
    except (Unavailable, OSError, subprocess.SubprocessError) as e:
        os.write(w, f"not held: {e}".encode())
        os._exit(0)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    os.write(w, f"held by pid {os.getpid()}".encode())
    os.close(w)
    while not stop:
        try:
            os.kill(watch, 0)
        except OSError:
            break  # ctest ended without the fixture's cleanup (killed)
        time.sleep(0.5)
    cluster.leave()
    try:
        os.unlink(pidfile)
    except OSError:
        pass
    os._exit(0)


def release(script, pidfile):
    """ctest's fixture cleanup: the holder leaves, then cleanup()."""
    try:
        with open(pidfile) as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            ours = b"netns_cluster.py" in f.read()
    except (OSError, ValueError):
        ours = False
    if ours:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while os.path.exists(pidfile) and time.monotonic() < deadline:
            time.sleep(0.05)
    return cleanup(script)


if __name__ == "__main__":
    import sys
    # netns_cluster.py [--hold PIDFILE | --release PIDFILE] SCRIPT
    if len(sys.argv) > 2 and sys.argv[1] in ("--hold", "--release"):
        fn = hold if sys.argv[1] == "--hold" else release
        sys.exit(fn(sys.argv[3] if len(sys.argv) > 3 else None, sys.argv[2]))
    sys.exit(cleanup(sys.argv[1] if len(sys.argv) > 1 else None))
