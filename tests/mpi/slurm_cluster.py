# SPDX-License-Identifier: BSD-3-Clause
"""A private Slurm on the namespace cluster (netns_cluster.py), for one test's job.

`Slurm(cluster).start()` writes a slurm.conf into a temporary directory (cluster
"tandem", slurmctld on node0 = 10.250.0.1, NodeName=node0..node<N-1> at their
addresses, one partition, proctrack/linuxproc, task/none, no accounting, all state
and logs in that directory, SlurmUser=root, MpiDefault=none, private ports), starts a
munged of its own (its own random key and socket, named by AuthInfo), slurmctld on
node0 and one `slurmd -N nodeX` inside each node (`netns-cluster exec`), and waits
until `sinfo` shows every node idle. `srun_command()` gives the srun line of a job,
`environment()` the variables srun needs (SLURM_CONF). `stop()` ends the daemons and
whatever they left (by a marker in their environment; slurmstepd, which overwrites its
environment, by name on the nodes), removes the directory, and runs even when starting
failed. Each node has its own TmpFS in the directory: the nodes share this machine's /tmp,
where mpi/pmix would make the same per-job directory on both. The daemons get SIGTERM when the process that started them
dies (a runner killed by ctest's timeout), and the next start kills what a killed one
left (STATE names it).

Only one private Slurm runs at a time on this machine (LOCK, held from start to stop):
the ports are fixed, and the nodes' 2 CPUs are what a job may use.

Where Slurm cannot run here (a program or plugin missing, a daemon that does not
start or whose nodes never become idle) `start` raises Unavailable with the reason and
the daemons' last log lines: the caller skips, it never passes.
"""

import ctypes
import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time

import netns_cluster

LOCK = "/tmp/tandem-slurm.lock"
STATE = "/tmp/tandem-slurm.state"   # the running private Slurm: its directory and marker
MARKER_VAR = "TDM_SLURM_ID"         # in every daemon's environment (not TANDEM_*)
CTLD_PORT = 16817                   # private: the packaged defaults are 6817/6818
SLURMD_PORT = 16818
SRUN_PORTS = "16900-16999"          # srun's listening ports (tasks' I/O, PMI-2's tree)
PLUGIN_DIRS = ["/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/slurm-wlm",
               "/usr/lib64/slurm", "/usr/lib/slurm"]
PR_SET_PDEATHSIG = 1


class Unavailable(Exception):
    """Slurm cannot run here; the message says why."""


def _plugin_dir():
    for d in PLUGIN_DIRS:
        if os.path.exists(os.path.join(d, "proctrack_linuxproc.so")):
            return d
    return None


def check(mpi=None):
    """None when a private Slurm can be started here (with the mpi/MPI plugin), else why."""
    missing = [p for p in ("slurmctld", "slurmd", "srun", "sinfo", "munged")
               if not shutil.which(p)]
    if missing:
        return (f"{', '.join(missing)} not installed (Debian's slurmctld, slurmd, "
                f"slurm-client and munge packages; scripts/install-deps.sh installs them)")
    d = _plugin_dir()
    if d is None:
        return "no Slurm plugin directory with proctrack_linuxproc.so found"
    if mpi and not os.path.exists(os.path.join(d, f"mpi_{mpi}.so")):
        return f"Slurm has no mpi/{mpi} plugin ({d}/mpi_{mpi}.so)"
    if os.geteuid() != 0:
        return "a private Slurm (SlurmUser=root, daemons in the nodes) needs root"
    return None


def _marked(pid, marker):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker.encode() in f.read().split(b"\0")
    except OSError:
        return False


def _kill_marked(marker):
    """SIGKILL every process whose environment carries the marker; returns how many."""
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid() and _marked(int(name), marker):
            try:
                os.kill(int(name), signal.SIGKILL)
                n += 1
            except OSError:
                pass
    return n


def _kill_stepds(cluster):
    """slurmstepd overwrites its environment (its process title), so the marker does not
    find it: on the cluster's nodes, where only these private Slurms run and only one at a
    time (LOCK), every slurmstepd is one of theirs."""
    for n in cluster.names:
        for pid in cluster.node_pids(n):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read().startswith(b"slurmstepd"):
                        os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _die_with_parent():
    os.setsid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _tail(path, n=12):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:]).rstrip()
    except OSError:
        return "(no log)"


class Slurm:
    def __init__(self, cluster, mpi=None):
        self.cluster = cluster
        self.mpi = mpi
        self.dir = None
        self.procs = {}   # name -> Popen
        self.marker = f"{MARKER_VAR}={secrets.token_hex(16)}"
        self._lock = None

    # ---- configuration ------------------------------------------------------------------
    def _path(self, *parts):
        return os.path.join(self.dir, *parts)

    def _write_conf(self):
        nodes = self.cluster.names
        lines = [
            "ClusterName=tandem",
            "SlurmctldHost=node0(10.250.0.1)",
            f"SlurmctldPort={CTLD_PORT}",
            f"SlurmdPort={SLURMD_PORT}",
            f"SrunPortRange={SRUN_PORTS}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self._path('munge.socket')}",
            f"PluginDir={_plugin_dir()}",
            f"StateSaveLocation={self._path('ctld')}",
            f"SlurmdSpoolDir={self._path('spool-%n')}",
            # the nodes share this machine's /tmp: mpi/pmix's per-job directory there would
            # be made by both (and be left by a killed one)
            f"TmpFS={self._path('tmp-%n')}",
            f"SlurmctldPidFile={self._path('slurmctld.pid')}",
            f"SlurmdPidFile={self._path('slurmd-%n.pid')}",
            f"SlurmctldLogFile={self._path('slurmctld.log')}",
            f"SlurmdLogFile={self._path('slurmd-%n.log')}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SwitchType=switch/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=none",
            "ReturnToService=2",
            # a node's namespace has the machine's CPUs; 4 slots each lets 2 x 2 and
            # 2 x 3 jobs run (the ranks then yield while they wait, as under mpirun)
            "SlurmdParameters=config_overrides",
            "InactiveLimit=0",
            "KillWait=5",
            "MessageTimeout=30",
            "SlurmdTimeout=120",
            "SchedulerType=sched/builtin",
        ]
        for i, n in enumerate(nodes):
            lines.append(f"NodeName={n} NodeAddr=10.250.0.{i + 1} NodeHostname={n} "
                         f"CPUs=4 State=UNKNOWN")
        lines.append(f"PartitionName=tandem Nodes={','.join(nodes)} Default=YES "
                     f"MaxTime=INFINITE State=UP OverSubscribe=YES")
        with open(self._path("slurm.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")
        # slurmd 22.05 starts its cgroup plugin whatever the other plugins are, and its
        # autodetection finds no cgroup file system under a node's own /sys: naming the
        # version skips the detection; nothing then uses cgroups (proctrack/linuxproc)
        with open(self._path("cgroup.conf"), "w") as f:
            f.write("CgroupPlugin=cgroup/v1\n")

    def environment(self, env=None):
        e = dict(os.environ if env is None else env)
        e["SLURM_CONF"] = self._path("slurm.conf")
        return e

    def _daemon_env(self):
        e = self.environment()
        for k in [k for k in e if k.startswith("SLURM_") and k != "SLURM_CONF"]:
            del e[k]  # a runner started inside a Slurm job must not pass its job on
        k, v = self.marker.split("=", 1)
        e[k] = v
        return e

    # ---- daemons --------------------------------------------------------------------------
    def _spawn(self, name, cmd, node=None):
        if node is not None:
            cmd = [self.cluster.script, "exec", node] + cmd
        out = open(self._path(f"{name}.out"), "w")
        self.procs[name] = subprocess.Popen(cmd, env=self._daemon_env(), stdin=subprocess.DEVNULL,
                                            stdout=out, stderr=subprocess.STDOUT,
                                            preexec_fn=_die_with_parent)
        out.close()

    def logs(self, lines=12):
        """The last lines of every daemon's log and output (for a reason or a failure)."""
        out = []
        for name in ["munged", "slurmctld"] + [f"slurmd-{n}" for n in self.cluster.names]:
            log = self._path(f"{name}.log")
            if os.path.exists(log) or os.path.exists(self._path(f"{name}.out")):
                out.append(f"--- {name}.log:\n{_tail(log, lines)}\n--- {name} output:\n"
                           f"{_tail(self._path(name + '.out'), 5)}")
        return "\n".join(out)

    def _fail(self, why):
        logs = self.logs()
        raise Unavailable(why + ("\n" + logs if logs else ""))

    def _dead(self):
        return [n for n, p in self.procs.items() if p.poll() is not None]

    def _wait(self, what, ready, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            dead = self._dead()
            if dead:
                self._fail(f"{', '.join(dead)} exited while waiting for {what}")
            time.sleep(0.2)
        self._fail(f"{what} did not happen within {timeout} s")

    def sinfo(self):
        r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.environment(),
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return {}
        return dict(line.split()[:2] for line in r.stdout.splitlines() if len(line.split()) > 1)

    def _clean_stale(self):
        """What a private Slurm left whose runner was killed before its stop ran."""
        _kill_stepds(self.cluster)
        try:
            with open(STATE) as f:
                st = json.load(f)
        except (OSError, ValueError):
            return
        _kill_marked(st.get("marker", "-"))
        d = st.get("dir", "")
        if d.startswith(os.path.join(tempfile.gettempdir(), "tandem-slurm-")):
            shutil.rmtree(d, ignore_errors=True)
        os.unlink(STATE)

    def start(self, timeout=60):
        why = check(self.mpi)
        if why:
            raise Unavailable(why)
        self._lock = open(LOCK, "a")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self._clean_stale()
        self.dir = tempfile.mkdtemp(prefix="tandem-slurm-")
        os.chmod(self.dir, 0o711)  # munged wants its socket's directory searchable by all
        with open(STATE, "w") as f:
            json.dump({"dir": self.dir, "marker": self.marker}, f)
        os.mkdir(self._path("ctld"))
        for n in self.cluster.names:
            os.mkdir(self._path(f"spool-{n}"))
            os.mkdir(self._path(f"tmp-{n}"))
        key = self._path("munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        os.write(fd, secrets.token_bytes(1024))
        os.close(fd)
        self._write_conf()

        self._spawn("munged", ["munged", "-F", "--force", f"--socket={self._path('munge.socket')}",
                               f"--key-file={key}", f"--pid-file={self._path('munged.pid')}",
                               f"--seed-file={self._path('munged.seed')}"])
        self._wait("munged's socket", lambda: os.path.exists(self._path("munge.socket")), timeout)
        conf = self._path("slurm.conf")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", conf], node="node0")
        for n in self.cluster.names:
            self._spawn(f"slurmd-{n}", ["slurmd", "-D", "-N", n, "-f", conf], node=n)
        want = set(self.cluster.names)
        self._wait("every node idle in sinfo",
                   lambda: {n for n, s in self.sinfo().items() if s == "idle"} >= want, timeout)
        return self

    def srun_command(self, np, cmd, mpi=None, timeout=None, extra=()):
        """srun of NP tasks, NP/N on each of the N nodes, block-distributed."""
        nodes = len(self.cluster.names)
        full = ["srun", "-N", str(nodes), "-n", str(np), f"--ntasks-per-node={np // nodes}",
                "--distribution=block", f"--mpi={mpi or self.mpi or 'none'}",
                "--kill-on-bad-exit=1", "--overcommit"]
        if timeout:
            full.append(f"--time={max(1, (int(timeout) + 59) // 60)}")
        return full + list(extra) + list(cmd)

    def stop(self):
        if self.dir is None:
            return
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        deadline = time.monotonic() + 10
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        _kill_marked(self.marker)  # anything else the daemons left
        _kill_stepds(self.cluster)
        for p in self.procs.values():
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        try:
            os.unlink(STATE)
        except OSError:
            pass
        if self._lock:
            self._lock.close()
            self._lock = None

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":
    # by hand: python3 slurm_cluster.py [pmi2|pmix] -- PROGRAM ARGS (4 tasks on 2 nodes)
    import sys
    args = sys.argv[1:]
    mpi = args.pop(0) if args and args[0] != "--" else "pmi2"
    prog = args[1:] if args and args[0] == "--" else ["hostname"]
    script = netns_cluster.find_script(os.path.join(os.path.dirname(__file__), "..", ".."))
    with netns_cluster.Cluster(script, 2) as cl, Slurm(cl, mpi) as s:
        r = subprocess.run(s.srun_command(4, prog), env=s.environment(), timeout=120)
        if r.returncode:
            print(s.logs(30))
        sys.exit(r.returncode)
