#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run one multi-rank MPI test under mpirun and judge it.

usage: run_test.py --mpirun PATH -n N [--timeout S] [--env K=V]... [--expect fail|exit=N]
                   [--ld-library-path DIR] [--check-lib NAME]
                   [--launcher mpirun|hydra|hydra-port|hydra2|pmix|mpirun-hydra|slurm-pmi2|
                               slurm-pmix [--hosts H]]
                   [--nodes N [--cluster PATH]] [--node-split MODE] -- PROGRAM [ARGS...]

--launcher hydra* starts the job with MPICH's mpiexec.hydra instead (PMI-1 on PMI_FD,
PMI-1 with -pmi-port, PMI-2), skipped (77) where mpiexec.hydra is not installed; --hosts
adds "-launcher fork -hosts H": Hydra's nodes, all on this machine.
--launcher mpirun-hydra gives Tandem's mpirun the hosts (--hosts H, or the cluster's nodes
with --nodes) so that it hands the job to mpiexec.hydra, with Hydra's launcher chosen by its
environment (HYDRA_LAUNCHER=fork for --hosts, rsh through the cluster's script for --nodes).
--launcher pmix starts it with Open MPI's mpirun (mpirun.openmpi, a PMIx server), skipped
(77) where that is not installed: --oversubscribe, --allow-run-as-root as root, and no MCA
component of Open MPI's own transports (the ranks are Tandem's); with --nodes its daemons
go to the cluster's nodes through the cluster's script (plm_rsh_agent).

--launcher slurm-pmi2|slurm-pmix (with --nodes N) starts a private Slurm on the cluster's
nodes (tests/mpi/slurm_cluster.py: munged, slurmctld, one slurmd per node) and runs the
job as `srun -N N -n NP --ntasks-per-node NP/N --mpi=pmi2|pmix`; skipped (77) with the
reason where Slurm is not installed or its daemons cannot start here.

--nodes N runs the job on N nodes of the namespace cluster (../shared/tools/netns-cluster,
tests/mpi/netns_cluster.py), -n/N ranks on each: mpiexec.hydra -launcher rsh -launcher-exec
<the cluster's launcher> -hosts node0:M,node1:M,..., every --env as -genv. The cluster is
brought up when missing and taken down by its last user; the test is skipped (77) with
the reason where namespaces cannot be made (not root, no ip netns). Afterwards /dev/shm
as each node sees it and each node's processes are checked too.
--node-split MODE makes the ranks of this one host believe they are on several nodes
(TANDEM_NODE_SPLIT, the library's tunable): every inter-node path without namespaces.

A test passes when the job exits 0 and its output has a line "No Errors" (MPICH's
convention, leading spaces allowed). With --expect fail it passes when the job exits
non-zero; with --expect exit=N when it exits N. Exit status 77 of the job means
"not applicable here": the runner exits 77 too (ctest's SKIP_RETURN_CODE).

After every test, whatever the verdict: no process of the test may remain (found by
session and by a marker variable in the environment) and nothing named tandem* may have
appeared in /dev/shm. Either makes the test fail (and is cleaned up).

The helpers below are also used by launch/check_launch.py.
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import netns_cluster  # noqa: E402

SKIP = 77
# the one place that names the library's fake-node tunable (src/base/params.def)
NODE_SPLIT_VAR = "TANDEM_NODE_SPLIT"
MARKER_VAR = "TDM_RUNTEST_ID"  # not TANDEM_*: the library reports unknown TANDEM_ names
NO_ERRORS = re.compile(r"^\s*No Errors\s*$", re.M)


def shm_snapshot():
    try:
        return {n for n in os.listdir("/dev/shm") if n.lower().startswith("tandem")}
    except OSError:
        return set()


def _proc_stat(pid):
    """(ppid, session) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    # state ppid pgrp session ...
    return int(rest[1]), int(rest[3]), rest[0]


def _has_marker(pid, marker):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker.encode() in f.read().split(b"\0")
    except OSError:
        return False


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def test_processes(session, marker):
    """Processes that belong to a test: in its session or carrying its marker."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me:
            continue
        st = _proc_stat(pid)
        if st is None or st[2] == "Z":
            continue  # gone, or dead and only waiting to be reaped
        if st[1] == session or _has_marker(pid, marker):
            found.append(pid)
    return found


def leftovers(session, marker, wait=1.0):
    """Wait up to `wait` s for the test's processes to go; kill and return the rest."""
    deadline = time.monotonic() + wait
    while True:
        left = test_processes(session, marker)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    described = [f"pid {p}: {_cmdline(p)}" for p in left]
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return described


def _shm_in_use(names):
    """The names some living process still has open or mapped."""
    used = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as f:
                maps = f.read()
            fdnames = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        fds = []
        for fd in fdnames:
            try:  # a descriptor may close while we look
                fds.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
        for n in names:
            path = "/dev/shm/" + n
            if path in maps or any(l.startswith(path) for l in fds):
                used.add(n)
    return used


def check_shm(before):
    """Names of tandem* objects that appeared in /dev/shm since `before` (removed).
    A name another job still holds is its own (a job launched by Hydra may use one for
    an instant while tests run in parallel), not this test's leak: it is left alone."""
    new = shm_snapshot() - before
    if new:
        new -= _shm_in_use(new)
    new = sorted(new)
    for n in new:
        try:
            os.unlink(os.path.join("/dev/shm", n))
        except OSError:
            pass
    return new


def tandem_names(names):
    return {n for n in names or () if n.lower().startswith("tandem")}


def node_problems(cluster, job, shm_before):
    """What the job left on the nodes of the cluster: its processes (by marker) and the
    tandem* objects each node's /dev/shm gained that no living process holds."""
    problems = []
    deadline = time.monotonic() + 1.0
    while True:
        left = {n: [p for p in cluster.node_pids(n) if _has_marker(p, job.marker)]
                for n in cluster.names}
        if not any(left.values()) or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for n, pids in left.items():
        if pids:
            problems.append(f"processes of the test remained on {n}: "
                            + "; ".join(f"pid {p}: {_cmdline(p)}" for p in pids))
    seen = {}  # name -> the nodes whose /dev/shm has it (they may share this host's)
    for n in cluster.names:
        new = tandem_names(cluster.shm(n)) - shm_before.get(n, set())
        for name in new - _shm_in_use(new):
            seen.setdefault(name, []).append(n)
    for name in sorted(seen):
        problems.append(f"left in /dev/shm on {', '.join(seen[name])} (removed now): {name}")
        for n in seen[name]:
            cluster.exec(n, ["rm", "-f", "/dev/shm/" + name])
    return problems


def describe_status(rc):
    if rc is None:
        return "did not end"
    if rc < 0:
        return f"killed by signal {-rc} ({signal.Signals(-rc).name})"
    if rc > 128 and rc - 128 < 65:
        try:
            return f"exit status {rc} (128+{rc - 128}: {signal.Signals(rc - 128).name})"
        except ValueError:
            pass
    return f"exit status {rc}"


class Job:
    """One mpirun started in a session of its own, with a marker in its environment."""

    def __init__(self, cmd, env=None, stdin=subprocess.DEVNULL, merge_stderr=True,
                 preexec_fn=None):
        self.marker = f"{MARKER_VAR}={os.urandom(16).hex()}"
        full_env = dict(os.environ if env is None else env)
        k, v = self.marker.split("=", 1)
        full_env[k] = v
        self.cmd = cmd
        self.env = full_env
        self.shm_before = shm_snapshot()
        self.start = time.monotonic()
        kwargs = {}
        if preexec_fn is not None:
            kwargs["preexec_fn"] = preexec_fn
        else:
            kwargs["start_new_session"] = True
        self.proc = subprocess.Popen(
            cmd, env=full_env, stdin=stdin, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, **kwargs)
        self.session = self.proc.pid
        self.elapsed = None

    def wait(self, timeout):
        """Wait for mpirun; returns (rc or None if it had to be killed, stdout, stderr).
        Output is read until mpirun ends and then only briefly: a process left behind
        that holds the pipe open must not stall the runner (it is reported later)."""
        chunks = {"out": [], "err": []}

        def reader(stream, key):
            for block in iter(lambda: stream.read1(65536), b""):
                chunks[key].append(block)
        threads = [threading.Thread(target=reader, args=(self.proc.stdout, "out"), daemon=True)]
        if self.proc.stderr is not None:
            threads.append(threading.Thread(target=reader, args=(self.proc.stderr, "err"),
                                            daemon=True))
        for t in threads:
            t.start()
        # a blocking wait and a timer, not wait(timeout=), which polls with sleeps of up to
        # 50 ms and so noticed the end of each of the suite's short jobs late
        expired = threading.Event()

        def expire():
            expired.set()
            self.kill_all()
            self.proc.kill()
        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        rc = self.proc.wait()
        timer.cancel()
        if expired.is_set():
            rc = None
        self.elapsed = time.monotonic() - self.start
        for t in threads:
            t.join(timeout=2)
        out = b"".join(chunks["out"]).decode("utf-8", "replace")
        err = b"".join(chunks["err"]).decode("utf-8", "replace")
        return rc, out, err

    def kill_all(self):
        for p in test_processes(self.session, self.marker):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass

    def cleanup_problems(self):
        """After the job: a list of problems (leftover processes, /dev/shm objects)."""
        problems = []
        left = leftovers(self.session, self.marker)
        if left:
            problems.append("processes of the test remained after mpirun ended (killed now):")
            problems.extend("  " + d for d in left)
        shm = check_shm(self.shm_before)
        if shm:
            problems.append("left in /dev/shm (removed now): " + ", ".join(shm))
        return problems


def ldd_check(prog, env, libname, libdir):
    """None if `libname` of `prog` resolves inside `libdir`, else the reason."""
    try:
        out = subprocess.run(["ldd", prog], env=env, capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None  # no ldd: nothing to check with
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == libname:
            path = parts[2] if len(parts) > 2 and parts[1] == "=>" else ""
            if path and os.path.realpath(os.path.dirname(path)) == os.path.realpath(libdir):
                return None
            if path and os.path.realpath(path).startswith(os.path.realpath(libdir) + os.sep):
                return None
            return f"{libname} resolves to '{path}', not into {libdir}"
    return f"{prog} does not need {libname}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("-n", "--np", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--env", action="append", default=[], metavar="K=V")
    ap.add_argument("--expect", default="pass", help="pass (default), fail, or exit=N")
    ap.add_argument("--ld-library-path", help="prepend DIR to LD_LIBRARY_PATH")
    ap.add_argument("--check-lib", help="check with ldd that this library comes from "
                    "--ld-library-path")
    ap.add_argument("--mpirun-arg", action="append", default=[])
    ap.add_argument("--count-lines", action="append", default=[], metavar="N:REGEX",
                    help="the job's output must have exactly N lines matching REGEX "
                         "(e.g. a warning printed once per job); N-M: from N to M lines")
    ap.add_argument("--launcher", default="mpirun",
                    choices=["mpirun", "hydra", "hydra-port", "hydra2", "pmix", "mpirun-hydra",
                             "slurm-pmi2", "slurm-pmix"])
    ap.add_argument("--hosts", help="with a hydra launcher: -launcher fork -hosts H")
    ap.add_argument("--nodes", type=int, help="run on N nodes of the namespace cluster")
    ap.add_argument("--cluster", help="path of netns-cluster (default: ../shared/tools)")
    ap.add_argument("--node-split", metavar="MODE",
                    help=f"split this host's ranks into fake nodes ({NODE_SPLIT_VAR}=MODE)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    if not cmd:
        ap.error("no program given")

    env = dict(os.environ)
    shown_env = []
    for kv in a.env:
        if "=" not in kv:
            ap.error(f"--env needs K=V, not '{kv}'")
        k, v = kv.split("=", 1)
        env[k] = v
        shown_env.append(kv)
    if a.node_split:
        env[NODE_SPLIT_VAR] = a.node_split
        shown_env.append(f"{NODE_SPLIT_VAR}={a.node_split}")
    if a.ld_library_path:
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = a.ld_library_path + (":" + old if old else "")
        shown_env.append("LD_LIBRARY_PATH=" + env["LD_LIBRARY_PATH"])

    cluster = None
    if a.nodes:
        if a.np % a.nodes:
            ap.error(f"-n {a.np} is not a multiple of --nodes {a.nodes}")
        if a.hosts:
            ap.error("--nodes and --hosts exclude each other")
        if a.launcher == "mpirun":
            a.launcher = "hydra"  # only Hydra reaches other nodes (its rsh launcher)
        script = a.cluster or netns_cluster.find_script(
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
        cluster = netns_cluster.Cluster(script, a.nodes)
        why = cluster.check()
        if why:
            print(f"SKIP: {why}")
            return SKIP

    slurm = None
    if a.launcher.startswith("slurm-"):
        import slurm_cluster  # only here: its imports cost every other test's start
        if not cluster:
            ap.error(f"--launcher {a.launcher} needs --nodes (Slurm's nodes are the cluster's)")
        why = slurm_cluster.check(a.launcher[len("slurm-"):])
        if why:
            print(f"SKIP: {why}")
            return SKIP
        slurm = slurm_cluster.Slurm(cluster, a.launcher[len("slurm-"):])
        # srun passes its whole environment on to the tasks (--export=ALL); SLURM_CONF,
        # which names the private Slurm, is added once it runs
        full = slurm.srun_command(a.np, cmd, timeout=a.timeout)
    elif a.launcher == "mpirun":
        full = [a.mpirun, "-n", str(a.np), "--timeout", f"{a.timeout:g}"] + a.mpirun_arg + cmd
    elif a.launcher == "mpirun-hydra":
        if not shutil.which("mpiexec.hydra"):
            print("SKIP: mpiexec.hydra is not installed (Debian's mpich package; "
                  "scripts/install-deps.sh installs it)")
            return SKIP
        if cluster:
            hosts = ",".join(f"{n}:{a.np // a.nodes}" for n in cluster.names)
            env["HYDRA_LAUNCHER"] = "rsh"
            env["HYDRA_LAUNCHER_EXEC"] = cluster.script
        elif a.hosts:
            hosts = a.hosts
            env["HYDRA_LAUNCHER"] = "fork"
        else:
            ap.error("--launcher mpirun-hydra needs --hosts or --nodes")
        shown_env += [f"HYDRA_LAUNCHER={env['HYDRA_LAUNCHER']}"] + (
            [f"HYDRA_LAUNCHER_EXEC={cluster.script}"] if cluster else [])
        full = [a.mpirun, "-n", str(a.np), "--timeout", f"{a.timeout:g}", "--hosts",
                hosts] + a.mpirun_arg + cmd
    elif a.launcher == "pmix":
        if a.hosts:
            ap.error("--launcher pmix takes --nodes, not --hosts")
        ompi = shutil.which("mpirun.openmpi") or shutil.which("orterun")
        if not ompi:
            print("SKIP: Open MPI's mpirun (mpirun.openmpi) is not installed (Debian's "
                  "openmpi-bin package; scripts/install-deps.sh installs it)")
            return SKIP
        full = [ompi, "-n", str(a.np), "--oversubscribe", "--timeout",
                f"{max(1, int(a.timeout))}"]
        if os.geteuid() == 0:
            full.append("--allow-run-as-root")
        # its daemon starts the ranks and serves PMIx; its own transports stay unused
        full += ["--mca", "btl", "self", "--mca", "pml", "ob1"]
        if cluster:
            # its daemons on the nodes through the cluster's remote shell, talking back
            # over the cluster's bridge
            ppn = a.np // a.nodes
            full += ["--mca", "plm_rsh_agent", cluster.script, "--bind-to", "none",
                     "--mca", "oob_tcp_if_include", "10.250.0.0/24",
                     "-H", ",".join(f"{n}:{ppn}" for n in cluster.names)]
        for kv in shown_env:
            full += ["-x", kv.split("=", 1)[0]]
        full += cmd
    else:
        hydra = shutil.which("mpiexec.hydra")
        if not hydra:
            print("SKIP: mpiexec.hydra is not installed (Debian's mpich package; "
                  "scripts/install-deps.sh installs it)")
            return SKIP
        full = [hydra, "-n", str(a.np)]
        if a.launcher == "hydra-port":
            full.append("-pmi-port")
        if a.hosts:
            full += ["-launcher", "fork", "-hosts", a.hosts]
        # Hydra passes the whole environment on; MPIEXEC_TIMEOUT is its --timeout
        env["MPIEXEC_TIMEOUT"] = f"{max(1, int(a.timeout))}"
        if a.launcher == "hydra2":
            env["TANDEM_PMI_VERSION"] = "2"
            shown_env.append("TANDEM_PMI_VERSION=2")
        if cluster:
            ppn = a.np // a.nodes
            full += ["-launcher", "rsh", "-launcher-exec", cluster.script,
                     "-hosts", ",".join(f"{n}:{ppn}" for n in cluster.names)]
            # the launcher passes the environment on too; -genv says it on the line
            for kv in shown_env:
                full += ["-genv"] + kv.split("=", 1)
        full += a.mpirun_arg + cmd
    shown = " ".join(shlex.quote(x) for x in shown_env + full)

    if a.check_lib:
        why = ldd_check(cmd[0], env, a.check_lib, a.ld_library_path or "")
        if why:
            print(f"FAIL: {why}\ncommand: {shown}")
            return 1

    if cluster:
        try:
            cluster.enter()
        except netns_cluster.Unavailable as e:
            print(f"SKIP: {e}")
            return SKIP
    daemon_logs = ""
    try:
        if slurm:
            try:
                slurm.start()
            except slurm_cluster.Unavailable as e:
                print(f"SKIP: Slurm's daemons cannot run here: {e}")
                return SKIP
            env = slurm.environment(env)
        node_shm = {n: tandem_names(cluster.shm(n)) for n in cluster.names} if cluster else {}
        job = Job(full, env=env)
        # mpirun's own --timeout ends the job; this guard is for an mpirun that hangs itself
        rc, out, _ = job.wait(timeout=a.timeout + 15)
        problems = node_problems(cluster, job, node_shm) if cluster else []
        problems += job.cleanup_problems()
        if slurm:
            daemon_logs = slurm.logs()
    finally:
        if slurm:
            slurm.stop()
        if cluster:
            cluster.leave()

    if rc == SKIP and a.expect == "pass":
        print(out, end="")
        print(f"SKIP: the test says it does not apply here (exit status {SKIP})")
        return SKIP if not problems else 1

    verdict = []
    if a.expect == "pass":
        if rc != 0:
            verdict.append(f"the job ended with {describe_status(rc)}, expected 0")
        elif not NO_ERRORS.search(out):
            verdict.append("the output has no 'No Errors' line")
        elif a.launcher != "mpirun" and a.np > 1 and len(NO_ERRORS.findall(out)) != 1:
            # rank 0 says it once; processes that each ran as a singleton say it each
            verdict.append(f"{len(NO_ERRORS.findall(out))} 'No Errors' lines, expected 1 "
                           f"(rank 0's): did the processes form one job?")
    elif a.expect == "fail":
        if rc == 0 or rc is None:
            verdict.append(f"the job ended with {describe_status(rc)}, expected a failure")
    elif a.expect.startswith("exit="):
        want = int(a.expect[5:])
        if rc != want:
            verdict.append(f"the job ended with {describe_status(rc)}, expected {want}")
    else:
        ap.error(f"bad --expect '{a.expect}'")
    for spec in a.count_lines:
        want, _, pattern = spec.partition(":")
        lo, _, hi = want.partition("-")
        got = sum(1 for line in out.splitlines() if re.search(pattern, line))
        if not int(lo) <= got <= int(hi or lo):
            verdict.append(f"{got} output lines match '{pattern}', expected {want}")
    if rc is None:
        verdict.append(f"mpirun itself did not end within {a.timeout + 15:g} s (killed)")
    verdict.extend(problems)

    if verdict:
        lines = out.splitlines()
        print("FAIL: " + "\n      ".join(verdict))
        print(f"command: {shown}")
        print(f"result: {describe_status(rc)} after {job.elapsed:.2f} s")
        tail = lines[-60:]
        if len(lines) > len(tail):
            print(f"last {len(tail)} of {len(lines)} output lines:")
        else:
            print("output:" if lines else "output: (none)")
        for line in tail:
            print("  | " + line)
        if daemon_logs:
            print("Slurm's daemons:\n" + daemon_logs)
        return 1
    print(f"passed in {job.elapsed:.2f} s: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
