#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks of mpirun itself: exit codes, teardown, signals, input and output, cleanup.

usage: check_launch.py --mpirun PATH (--fake FAKE_RANK | --mpi MPI_LAUNCH) [-k SUBSTRING]

--fake runs every check with fake_rank, which speaks the launcher contract directly, so
mpirun is tested without the library; --mpi runs the checks that have an MPI version with
mpi_launch (real MPI_Init, MPI_Abort, ...). After every job: no process of it may remain
and nothing named tandem* may appear in /dev/shm. Ends with "N passed, N failed".
"""

import argparse
import fcntl
import os
import re
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_test import (MARKER_VAR, check_shm, describe_status, leftovers,  # noqa: E402
                      shm_snapshot)

# Teardown takes well under a second after the failure (GRACE_MS is 0.4 s), but a test
# must not depend on timing: an upper bound here only catches a teardown that waits for
# something that never comes (a hang ended by mpirun's own timeout, a stuck rank), so every
# one is HEADROOM times what a quiet machine needs. Lower bounds (a timeout must not fire
# early) hold whatever the load. An MPI job also pays for MPI_Init.
SLACK_FAKE = 1.5
SLACK_MPI = 4.0
HEADROOM = 8


class Result:
    def __init__(self):
        self.rc = None
        self.out = ""
        self.err = ""
        self.elapsed = 0.0
        self.since_signal = None
        self.problems = []


def run(ctx, argv, stdin=None, env=None, timeout=30.0, ready=None, send=None, tty=False,
        steps=None):
    """Run mpirun with argv. ready=(regex, count): wait for count matching stdout lines,
    then send signal `send` to mpirun. steps=[(stream, regex, count, signal), ...] does the
    same in turn, `stream` "out" or "err". Returns a Result (problems: leftovers, shm)."""
    import uuid
    res = Result()
    marker_val = uuid.uuid4().hex
    full_env = dict(os.environ if env is None else env)
    full_env[MARKER_VAR] = marker_val
    marker = f"{MARKER_VAR}={marker_val}"
    shm_before = shm_snapshot()
    cmd = [ctx.mpirun] + argv

    master = slave = None
    if tty:
        master, slave = os.openpty()

        def preexec():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        stdin_arg = slave
    else:
        preexec = None
        stdin_arg = subprocess.PIPE if stdin is not None else subprocess.DEVNULL

    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=full_env, stdin=stdin_arg, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=preexec,
                            start_new_session=not tty)
    session = proc.pid
    if slave is not None:
        os.close(slave)
    bufs = {"out": [], "err": []}

    def reader(stream, key):
        for line in iter(stream.readline, b""):
            bufs[key].append(line.decode("utf-8", "replace"))
    threads = [threading.Thread(target=reader, args=(proc.stdout, "out"), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, "err"), daemon=True)]
    for t in threads:
        t.start()
    if tty:
        os.write(master, stdin)
        os.write(master, b"\x04")  # end of file on a terminal
    elif stdin is not None:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass

    deadline = start + timeout
    signal_at = None
    if ready is not None:
        steps = [("out", ready[0], ready[1], send)]
    for stream, pattern, count, sig in steps or []:
        while time.monotonic() < deadline and proc.poll() is None:
            if sum(1 for x in list(bufs[stream]) if re.search(pattern, x)) >= count:
                break
            time.sleep(0.02)
        if proc.poll() is None:
            signal_at = time.monotonic()
            proc.send_signal(sig)
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        res.rc = proc.returncode
    except subprocess.TimeoutExpired:
        res.problems.append(f"mpirun did not end within {timeout:g} s (killed)")
        proc.kill()
        proc.wait()
    end = time.monotonic()
    for t in threads:
        t.join(timeout=5)
    if master is not None:
        os.close(master)
    res.elapsed = end - start
    if signal_at is not None:
        res.since_signal = end - signal_at
    res.out = "".join(bufs["out"])
    res.err = "".join(bufs["err"])
    left = leftovers(session, marker)
    if left:
        res.problems.append("processes remained after mpirun ended: " + "; ".join(left))
    shm = check_shm(shm_before)
    if shm:
        res.problems.append("left in /dev/shm: " + ", ".join(shm))
    return res


def expect(res, rc=None, nonzero=False, out=(), err=(), not_out=(), not_err=(), max_s=None,
           min_s=None, max_after_signal=None):
    p = list(res.problems)
    if rc is not None and res.rc != rc:
        p.append(f"expected exit status {rc}, got {describe_status(res.rc)}")
    if nonzero and (res.rc == 0 or res.rc is None):
        p.append(f"expected a non-zero exit status, got {describe_status(res.rc)}")
    for pat in out:
        if not re.search(pat, res.out, re.M):
            p.append(f"stdout has no match for /{pat}/")
    for pat in not_out:
        if re.search(pat, res.out, re.M):
            p.append(f"stdout matches /{pat}/ but must not")
    for pat in err:
        if not re.search(pat, res.err, re.M):
            p.append(f"stderr has no match for /{pat}/")
    for pat in not_err:
        if re.search(pat, res.err, re.M):
            p.append(f"stderr matches /{pat}/ but must not")
    if max_s is not None and res.elapsed > max_s * HEADROOM:
        p.append(f"took {res.elapsed:.2f} s, more than {max_s * HEADROOM:g} s")
    if min_s is not None and res.elapsed < min_s:
        p.append(f"took {res.elapsed:.2f} s, less than {min_s:g} s")
    if max_after_signal is not None and res.since_signal is not None \
            and res.since_signal > max_after_signal * HEADROOM:
        p.append(f"ended {res.since_signal:.2f} s after the signal, more than "
                 f"{max_after_signal * HEADROOM:g} s")
    if max_after_signal is not None and res.since_signal is None:
        p.append("the job ended before it could be signalled")
    if p:
        p.append(f"exit: {describe_status(res.rc)} after {res.elapsed:.2f} s")
        p.append("stdout: " + (res.out[-1500:].replace("\n", "\n        ") or "(none)"))
        p.append("stderr: " + (res.err[-3000:].replace("\n", "\n        ") or "(none)"))
    return p


# ---- the checks: each returns a list of problems; `ctx.kind` is "fake" or "mpi" --------

def prog_args(ctx, fake, mpi):
    return [ctx.prog] + (fake if ctx.kind == "fake" else mpi)


def slack(ctx):
    return SLACK_FAKE if ctx.kind == "fake" else SLACK_MPI


def check_contract(ctx):
    ncpu = len(os.sched_getaffinity(0))
    p = []
    for np_ in (1, 3):
        r = run(ctx, ["-n", str(np_), ctx.prog, "*=init,env,fds,fin"])
        pats = []
        for k in range(np_):
            pats += [rf"^rank {k} TANDEM_RANK={k}$", rf"^rank {k} TANDEM_SIZE={np_}$",
                     rf"^rank {k} TANDEM_LOCAL_RANK={k}$",
                     rf"^rank {k} TANDEM_LOCAL_SIZE={np_}$",
                     rf"^rank {k} TANDEM_OVERSUBSCRIBED={1 if np_ > ncpu else 0}$",
                     rf"^rank {k} fds ok$"]
        p += expect(r, rc=0, out=pats)
        ids = set(re.findall(r"TANDEM_JOBID=(.*)$", r.out, re.M))
        if len(ids) != 1 or "" in ids or "(unset)" in ids:
            p.append(f"ranks of one job must share one non-empty TANDEM_JOBID, got {ids}")
    return p


def check_hello(ctx):
    r = run(ctx, ["-n", "2"] + prog_args(ctx, ["*=init,print:hello,eprint:err,fin"],
                                         ["hello"]))
    return expect(r, rc=0, out=[r"^hello from rank 0\b", r"^hello from rank 1\b"],
                  err=[r"^err from rank 0$", r"^err from rank 1$"])


def check_exit_code(ctx):
    r = run(ctx, ["-n", "2"] + prog_args(ctx, ["1=init,fin,sleep:200,exit:3", "*=init,fin,hang"],
                                         ["exit", "3"]))
    return expect(r, rc=3, err=[r"^mpirun: rank 1 \(pid \d+\) exited with status 3; ending the job$"],
                  max_s=0.2 + slack(ctx))


def check_signal(ctx):
    r = run(ctx, ["-n", "2"] + prog_args(ctx, ["1=init,sleep:300,kill:9", "*=init,hang"],
                                         ["kill"]))
    return expect(r, rc=128 + 9,
                  err=[r"^mpirun: rank 1 \(pid \d+\) killed by signal 9 \(Killed\); ending the job$"],
                  max_s=0.3 + slack(ctx))


def check_abort(ctx):
    r = run(ctx, ["-n", "3"] + prog_args(ctx, ["1=init,sleep:200,abort:7", "*=init,hang"],
                                         ["abort", "7"]))
    return expect(r, rc=7,
                  err=[r"^mpirun: rank 1 \(pid \d+\) called MPI_Abort with error code 7; "
                       r"ending the job$"],
                  max_s=0.2 + slack(ctx))


def check_fatal(ctx):
    # a fatal error is not a call of MPI_Abort: mpirun must not say it was
    r = run(ctx, ["-n", "2"] + prog_args(ctx, ["1=init,sleep:200,fatal:4", "*=init,hang"],
                                         ["fatal"]))
    return expect(r, rc=4 if ctx.kind == "fake" else 1,
                  err=[r"^mpirun: rank 1 \(pid \d+\) stopped at a fatal MPI error \(its message "
                       r"is above\); ending the job$"],
                  not_err=[r"MPI_Abort"], max_s=0.2 + slack(ctx))


def check_no_finalize(ctx):
    r = run(ctx, ["-n", "2"] + prog_args(ctx, ["1=init,sleep:200,exit:0", "*=init,hang"],
                                         ["nofinalize"]))
    return expect(r, nonzero=True,
                  err=[r"^mpirun: rank 1 \(pid \d+\) exited without calling MPI_Finalize"],
                  max_s=0.2 + slack(ctx))


def check_sigkill_escalation(ctx):
    # rank 0 ignores SIGTERM: only the SIGKILL after the grace period ends it
    r = run(ctx, ["-n", "2", ctx.prog, "1=init,sleep:200,exit:5", "*=init,ignterm,hang"])
    return expect(r, rc=5, err=[r"rank 1 \(pid \d+\) exited with status 5"], max_s=2.0)


def check_timeout(ctx):
    r = run(ctx, ["-n", "2", "--timeout", "2"] + prog_args(ctx, ["*=init,hang"], ["hang"]))
    return expect(r, rc=124, err=[r"^mpirun: job timed out after 2 s; killing 2 ranks$"],
                  min_s=1.9, max_s=2.0 + slack(ctx))


# what each rank of `mpi_launch pending` must print about its operations (rank 2 and up:
# a receive from any source); `where` is rank 0's state
def _pending_lines(np_, where0):
    pid = r"tandem\[{}:\d+\] "
    lines = [pid.format(0) + r"pending operations of rank 0, " + where0,
             pid.format(0) + r"pending: Irecv from rank 1 tag 77 on MPI_COMM_WORLD, 4-byte "
                             r"buffer: posted, no matching message has come$",
             pid.format(0) + r"pending: Isend to rank 1 tag 78 on MPI_COMM_WORLD, 1048576 bytes: "
                             r"rendezvous, RTS sent; waiting for rank 1 to post a matching "
                             r"receive \(CTS\)$",
             pid.format(0) + r"end of pending operations: 2 pending, 0 unexpected",
             pid.format(1) + r"pending operations of rank 1, waiting in an MPI call:$",
             pid.format(1) + r"pending: Irecv from rank 0 tag 79 on MPI_COMM_WORLD, 4-byte "
                             r"buffer: posted, no matching message has come$",
             pid.format(1) + r"unexpected: message from rank 0 tag 78 on MPI_COMM_WORLD, "
                             r"1048576 bytes: rendezvous \(RTS\); the sender waits for a "
                             r"matching receive$",
             pid.format(1) + r"end of pending operations: 1 pending, 1 unexpected"]
    for k in range(2, np_):
        lines.append(pid.format(k) + r"pending: Recv from any source tag 4242 on MPI_COMM_WORLD")
    return lines


def check_timeout_dump(ctx):
    # a hung job: on --timeout every rank says what it waits for before it is killed
    r = run(ctx, ["-n", "3", "--timeout", "3", ctx.prog, "pending", "wait"])
    return expect(r, rc=124, err=[r"^mpirun: job timed out after 3 s; killing 3 ranks$"] +
                  _pending_lines(3, r"waiting in an MPI call:$"),
                  min_s=2.9, max_s=3.0 + slack(ctx))


def _check_sigusr1(ctx, how, where0):
    # SIGUSR1 to mpirun reaches every rank, which prints and goes on; SIGTERM ends the job
    r = run(ctx, ["-n", "3", ctx.prog, "pending", how],
            steps=[("out", r"^ready from rank", 3, signal.SIGUSR1),
                   ("err", r"end of pending operations", 3, signal.SIGTERM)])
    return expect(r, rc=128 + 15, err=_pending_lines(3, where0), max_after_signal=1.5)


def check_sigusr1_compute(ctx):
    # rank 0 computes outside MPI: the handler itself prints
    return _check_sigusr1(ctx, "compute", r"not waiting in MPI \(computing, or between calls\):$")


def check_sigusr1_thread(ctx):
    # rank 0's main thread blocks SIGUSR1: another thread takes it and the MPI thread prints
    return _check_sigusr1(ctx, "thread", r"waiting in an MPI call:$")


def check_dump_answer(ctx):
    # ranks answer "D" once they have printed: mpirun ends the job without waiting out the
    # 2 s it allows for the dumps; a rank that does not answer is waited for that long
    p = []
    r = run(ctx, ["-n", "2", "--timeout", "1", ctx.prog, "*=init,dumper,print:ready,hang"])
    p += expect(r, rc=124, out=[r"^rank 0 dumped$", r"^rank 1 dumped$"], min_s=0.9,
                max_s=1.0 + slack(ctx))
    r = run(ctx, ["-n", "2", "--timeout", "1", ctx.prog, "*=init,ignusr1,print:ready,hang"])
    p += expect(r, rc=124, min_s=2.9, max_s=3.0 + slack(ctx))
    return p


def check_peer_vanished(ctx):
    # rank 1 exits with a rendezvous message in flight, under a shell that outlives it so
    # that mpirun does not end the job: rank 0's read finds it gone, which is no permission
    # problem and must not be reported as one. RGET: the receiver reads, whatever the
    # protocol choice would be (a sender-side copy would leave it waiting for a FIN)
    env = dict(os.environ, TANDEM_RNDV_PROTOCOL="rget")
    r = run(ctx, ["-n", "2", "sh", "-c", '"$0" vanish; exec sleep 100', ctx.prog], env=env,
            steps=[("err", r"has exited|not permitted", 1, signal.SIGTERM)])
    return expect(r, rc=128 + 15,
                  err=[r"^tandem\[0:\d+\] cma error: rank 1 \(pid \d+\) has exited during a "
                       r"transfer with this rank \(No such process\); the transfer cannot "
                       r"complete$"],
                  not_err=[r"not permitted", r"ptrace", r"pipeline"])


def check_cma_denied(ctx):
    # process_vm_readv/writev refused (a seccomp profile): TANDEM_CMA=on fails MPI_Init
    # saying so (not "out of memory"); auto falls back to the pipeline with one warning
    p = []
    env = dict(os.environ, TANDEM_CMA="on")
    r = run(ctx, ["-n", "2", ctx.prog, "nocma"], env=env)
    if r.rc == 77 or "seccomp filters are not available" in r.out:
        return []
    p += expect(r, nonzero=True,
                err=[r"cma error: TANDEM_CMA=on, but single-copy transfers \(CMA\) with rank "
                     r"[01] \(pid \d+\) are not permitted: process_vm_readv failed: Operation "
                     r"not permitted",
                     r"mpi error: MPI initialisation: point-to-point communication cannot start: "
                     r"TANDEM_CMA=on, but single-copy transfers \(CMA\) are not available",
                     r"^mpirun: rank [01] \(pid \d+\) stopped at a fatal MPI error"],
                not_err=[r"out of memory", r"MPI_Abort"])
    env = dict(os.environ, TANDEM_CMA="auto")
    r = run(ctx, ["-n", "2", ctx.prog, "nocma"], env=env)
    p += expect(r, rc=0, out=[r"^nocma ok from rank 0$", r"^nocma ok from rank 1$"],
                err=[r"cma warn: single-copy transfers \(CMA\) with rank [01] are not "
                     r"permitted: Operation not permitted"])
    if len(re.findall(r"cma warn", r.err)) != 1:
        p.append("expected one CMA warning for the job")
    return p


def check_timeout_env(ctx):
    env = dict(os.environ, MPIEXEC_TIMEOUT="1")
    r = run(ctx, ["-n", "2", ctx.prog, "*=init,hang"], env=env)
    return expect(r, rc=124, err=[r"job timed out after 1 s; killing 2 ranks"], min_s=0.9,
                  max_s=2.5)


def _check_forwarded(ctx, sig):
    r = run(ctx, ["-n", "3"] + prog_args(ctx, ["*=init,trap,print:ready,hang"], ["trap"]),
            ready=(r"^ready from rank", 3), send=sig)
    got = [rf"^rank {k} got signal {int(sig)}$" for k in range(3)]
    return expect(r, rc=128 + int(sig), out=got,
                  err=[rf"^mpirun: received signal {int(sig)} \(.*\); forwarding it to 3 ranks$"],
                  max_after_signal=1.5)


def check_sigterm(ctx):
    return _check_forwarded(ctx, signal.SIGTERM)


def check_sigint(ctx):
    return _check_forwarded(ctx, signal.SIGINT)


def check_sigterm_ignored(ctx):
    # ranks that ignore the forwarded SIGTERM are killed after the grace period
    r = run(ctx, ["-n", "2", ctx.prog, "*=init,ignterm,print:ready,hang"],
            ready=(r"^ready from rank", 2), send=signal.SIGTERM)
    return expect(r, rc=128 + 15, max_after_signal=1.5)


def check_stdin(ctx):
    data = b"alpha\nbeta\n"
    r = run(ctx, ["-n", "2"] + prog_args(ctx, ["0=init,cat,fin", "*=init,cat,print:done,fin"],
                                         ["stdin"]), stdin=data)
    if ctx.kind == "fake":
        p = expect(r, rc=0, out=[r"^alpha$", r"^beta$", r"^done from rank 1$"])
        if r.out.count("alpha") != 1:
            p.append(f"stdin must reach rank 0 only; 'alpha' appears {r.out.count('alpha')} times")
        return p
    return expect(r, rc=0, out=[r"^rank 0 read 11 bytes: 'alpha'$", r"^rank 1 read 0 bytes: ''$"])


def check_stdin_tty(ctx):
    # a terminal is relayed by mpirun (rank 0 is not in the terminal's foreground group)
    r = run(ctx, ["-n", "2", ctx.prog, "0=init,cat,fin", "*=init,cat,print:done,fin"],
            stdin=b"from the terminal\n", tty=True, timeout=15)
    p = expect(r, rc=0, out=[r"^from the terminal$", r"^done from rank 1$"])
    if r.out.count("from the terminal") != 1:
        p.append("terminal input must reach rank 0 only")
    return p


def check_tag_output(ctx):
    r = run(ctx, ["-n", "2", "--tag-output"] + prog_args(
        ctx, ["*=init,print:hello,eprint:err,partial:tail,fin"], ["hello"]))
    p = expect(r, rc=0, out=[r"^\[0\] hello from rank 0\b", r"^\[1\] hello from rank 1\b"],
               err=[r"^\[0\] err from rank 0$", r"^\[1\] err from rank 1$"])
    if ctx.kind == "fake":
        p += expect(r, out=[r"^\[0\] tail$", r"^\[1\] tail$"])
    untagged = [x for x in (r.out + r.err).splitlines()
                if x and not re.match(r"^\[\d+\] ", x)]
    if untagged:
        p.append(f"lines without a [rank] tag: {untagged[:5]}")
    return p


def check_tag_output_volume(ctx):
    n = 20000
    r = run(ctx, ["-n", "2", "--tag-output", ctx.prog, f"*=init,lines:{n},fin"])
    p = expect(r, rc=0)
    for k in range(2):
        lines = re.findall(rf"^\[{k}\] rank {k} line (\d+)$", r.out, re.M)
        if [int(x) for x in lines] != list(range(n)):
            p.append(f"rank {k}: {len(lines)} of {n} lines came through in order")
    return p


def check_not_found(ctx):
    p = []
    r = run(ctx, ["-n", "2", "/nonexistent/tandem-prog"])
    p += expect(r, rc=127, err=[r"^mpirun: cannot start rank 0: /nonexistent/tandem-prog: "
                                r"No such file or directory$"], max_s=2.0)
    r = run(ctx, ["-n", "2", "tandem-no-such-command-xyz"])
    p += expect(r, rc=127, err=[r"cannot start rank 0: tandem-no-such-command-xyz"], max_s=2.0)
    with tempfile.NamedTemporaryFile(prefix="tandem-noexec-", delete=True) as f:
        r = run(ctx, ["-n", "2", f.name])
        p += expect(r, rc=126, err=[r"cannot start rank 0: .*Permission denied"], max_s=2.0)
    return p


def check_grandchildren(ctx):
    p = []
    r = run(ctx, ["-n", "2", ctx.prog, "*=init,spawn,spawnsid,fin"])
    p += expect(r, rc=0)
    r = run(ctx, ["-n", "2", ctx.prog, "1=init,spawn,spawnsid,sleep:200,kill:9",
                  "*=init,spawn,spawnsid,hang"])
    p += expect(r, rc=137, max_s=0.2 + SLACK_FAKE)
    return p


def check_mpirun_killed(ctx):
    # SIGKILL cannot be forwarded: ranks die of their parent-death signal and the
    # watchdog kills what they started; the leftover check in run() verifies it
    r = run(ctx, ["-n", "3", ctx.prog, "*=init,spawn,print:ready,hang"],
            ready=(r"^ready from rank", 3), send=signal.SIGKILL)
    return expect(r, rc=-9, max_after_signal=1.0)


def check_bind(ctx):
    cpus = sorted(os.sched_getaffinity(0))
    p = []
    r = run(ctx, ["-n", "3", "--bind-to", "core", ctx.prog, "*=init,affinity,fin"])
    p += expect(r, rc=0, out=[rf"^rank {k} cpus {cpus[k % len(cpus)]}$" for k in range(3)])
    r = run(ctx, ["-n", "2", "--bind-to", "none", ctx.prog, "*=init,affinity,fin"])
    allc = " ".join(str(c) for c in cpus)
    p += expect(r, rc=0, out=[rf"^rank {k} cpus {allc}$" for k in range(2)])
    r = run(ctx, ["-n", "1", "--bind-to", "socket", ctx.prog])
    p += expect(r, rc=2, err=[r"--bind-to takes core, hwthread or none"])
    # by default 2 or more ranks that do not outnumber the CPUs take equal blocks of them
    # in order (a waiting rank polls, and unbound ranks that wake each other end up on one
    # CPU; a block, not one CPU, leaves a rank's own threads room); one rank, more ranks
    # than CPUs, or forced sharing stay unbound
    if len(cpus) >= 2:
        b = len(cpus) // 2
        block = [" ".join(str(c) for c in cpus[k * b:(k + 1) * b]) for k in range(2)]
        r = run(ctx, ["-n", "2", ctx.prog, "*=init,affinity,fin"])
        p += expect(r, rc=0, out=[rf"^rank {k} cpus {block[k]}$" for k in range(2)])
        env = dict(os.environ, TANDEM_OVERSUBSCRIBED="1")
        r = run(ctx, ["-n", "2", ctx.prog, "*=init,affinity,fin"], env=env)
        p += expect(r, rc=0, out=[rf"^rank {k} cpus {allc}$" for k in range(2)])
    n = len(cpus) + 1
    r = run(ctx, ["-n", str(n), ctx.prog, "*=init,affinity,fin"])
    p += expect(r, rc=0, out=[rf"^rank {k} cpus {allc}$" for k in range(n)])
    r = run(ctx, ["-n", "1", ctx.prog, "*=init,affinity,fin"])
    p += expect(r, rc=0, out=[rf"^rank 0 cpus {allc}$"])
    return p


def check_options(ctx):
    p = []
    r = run(ctx, ["--help"])
    p += expect(r, rc=0, out=[r"^usage: mpirun"])
    r = run(ctx, ["--version"])
    p += expect(r, rc=0, out=[r"Tandem MPI"])
    r = run(ctx, ["--bogus", "-n", "2", ctx.prog])
    p += expect(r, rc=2, err=[r"^mpirun: unknown option '--bogus'"])
    r = run(ctx, ["-n", "2"])
    p += expect(r, rc=2, err=[r"no program given"])
    r = run(ctx, ["-n", "0", ctx.prog])
    p += expect(r, rc=2, err=[r"-n needs an integer"])
    r = run(ctx, ["-n", "2", "--timeout", "soon", ctx.prog])
    p += expect(r, rc=2, err=[r"--timeout needs a number of seconds"])
    r = run(ctx, ["-host", "localhost", "--oversubscribe", "--allow-run-as-root", "-ppn", "2",
                  "-np", "2", ctx.prog, "*=init,fin"])
    p += expect(r, rc=0)
    r = run(ctx, ["-n", "2", "-x", "TDM_CHECK_X=ex", "-genv", "TDM_CHECK_G", "gee", "env"])
    p += expect(r, rc=0, out=[r"^TDM_CHECK_X=ex$", r"^TDM_CHECK_G=gee$"])
    r = run(ctx, ["-n", "1", "-wdir", "/", "pwd"])
    p += expect(r, rc=0, out=[r"^/$"])
    r = run(ctx, ["-n", "2", "-wdir", "/nonexistent/tandem", "pwd"])
    p += expect(r, rc=126, err=[r"cannot start rank 0: working directory /nonexistent/tandem"])
    return p


def check_hosts_hydra(ctx):
    # ranks on other hosts: mpirun hands the job to mpiexec.hydra (a stand-in here that
    # prints what it was given), or says what to install when there is none
    p = []
    with tempfile.TemporaryDirectory() as d:
        fake = os.path.join(d, "mpiexec.hydra")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\necho "hydra argv: $*"\necho "hydra env: '
                    'MPIEXEC_TIMEOUT=$MPIEXEC_TIMEOUT TDM_CHECK_X=$TDM_CHECK_X"\nexit 3\n')
        os.chmod(fake, 0o755)
        env = dict(os.environ, PATH=d + ":" + os.environ.get("PATH", ""))
        r = run(ctx, ["-H", "nodeA:2,nodeB:2", "-n", "4", "--timeout", "30", "-x",
                      "TDM_CHECK_X=ex", "-ppn", "2", "-l", ctx.prog, "a", "b c"], env=env)
        p += expect(r, rc=3, out=[rf"^hydra argv: -n 4 -hosts nodeA:2,nodeB:2 -ppn 2 "
                                  rf"-prepend-rank {re.escape(ctx.prog)} a b c$",
                                  r"^hydra env: MPIEXEC_TIMEOUT=30 TDM_CHECK_X=ex$"])
        r = run(ctx, ["--hostfile", "/tmp/hosts.tandem", "-np", "3", "-wdir", "/", ctx.prog],
                env=env)
        p += expect(r, rc=3, out=[rf"^hydra argv: -n 3 -f /tmp/hosts.tandem -wdir / "
                                  rf"{re.escape(ctx.prog)}$"])
        # this host alone stays with mpirun
        r = run(ctx, ["-hosts", "localhost:2", "-n", "2", ctx.prog, "*=init,fin"], env=env)
        p += expect(r, rc=0, not_out=[r"hydra argv"])
        empty = os.path.join(d, "empty")
        os.mkdir(empty)
        r = run(ctx, ["-host", "elsewhere.invalid", "-n", "2", ctx.prog],
                env=dict(os.environ, PATH=empty))
        p += expect(r, rc=127, err=[r"--hosts elsewhere.invalid names other hosts.*mpiexec.hydra"
                                    r", which is not installed.*apt-get install mpich"])
    return p


def check_plain_programs(ctx):
    # programs that never call MPI_Init: only their exit status counts
    p = []
    r = run(ctx, ["-n", "2", "true"])
    p += expect(r, rc=0)
    r = run(ctx, ["-n", "2", "false"])
    p += expect(r, rc=1, err=[r"^mpirun: rank [01] \(pid \d+\) exited with status 1"])
    r = run(ctx, ["-n", "2", "sh", "-c", 'exec "$0" 1=init,fin "*=init,fin"', ctx.prog])
    p += expect(r, rc=0)
    return p


def check_many_ranks(ctx):
    p = []
    r = run(ctx, ["-n", "32", ctx.prog, "*=init,fin"])
    p += expect(r, rc=0, max_s=10)
    r = run(ctx, ["-n", "32", ctx.prog, "17=init,sleep:300,kill:11", "*=init,hang"])
    p += expect(r, rc=128 + 11, err=[r"rank 17 \(pid \d+\) killed by signal 11"], max_s=5)
    return p


def check_shm_harness(ctx):
    # the /dev/shm check blames a test only for names nobody holds any more: a name a
    # concurrent job still has open is that job's, and must be neither reported nor removed
    p = []
    before = shm_snapshot()
    held = f"/dev/shm/tandem-harness-held-{os.getpid()}"
    leak = f"/dev/shm/tandem-harness-leak-{os.getpid()}"
    fd = os.open(held, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        open(leak, "w").close()
        got = check_shm(before)
        if got != [os.path.basename(leak)]:
            p.append(f"check_shm reported {got}, want only {os.path.basename(leak)}")
        if not os.path.exists(held):
            p.append("check_shm removed a name a living process holds open")
        if os.path.exists(leak):
            p.append("check_shm left the leaked name in place")
    finally:
        os.close(fd)
        for n in (held, leak):
            try:
                os.unlink(n)
            except OSError:
                pass
    return p


# name, function, runs with the MPI program too ("only": with the MPI program alone)
CHECKS = [
    ("contract", check_contract, False),
    ("hello", check_hello, True),
    ("exit-code", check_exit_code, True),
    ("signal", check_signal, True),
    ("abort", check_abort, True),
    ("fatal", check_fatal, True),
    ("no-finalize", check_no_finalize, True),
    ("sigkill-escalation", check_sigkill_escalation, False),
    ("timeout", check_timeout, True),
    ("timeout-env", check_timeout_env, False),
    ("dump-answer", check_dump_answer, False),
    ("timeout-dump", check_timeout_dump, "only"),
    ("sigusr1-compute", check_sigusr1_compute, "only"),
    ("sigusr1-thread", check_sigusr1_thread, "only"),
    ("peer-vanished", check_peer_vanished, "only"),
    ("cma-denied", check_cma_denied, "only"),
    ("sigterm", check_sigterm, True),
    ("sigint", check_sigint, False),
    ("sigterm-ignored", check_sigterm_ignored, False),
    ("stdin", check_stdin, True),
    ("stdin-tty", check_stdin_tty, False),
    ("tag-output", check_tag_output, True),
    ("tag-output-volume", check_tag_output_volume, False),
    ("not-found", check_not_found, False),
    ("grandchildren", check_grandchildren, False),
    ("mpirun-killed", check_mpirun_killed, False),
    ("bind", check_bind, False),
    ("options", check_options, False),
    ("hosts-hydra", check_hosts_hydra, False),
    ("plain-programs", check_plain_programs, False),
    ("many-ranks", check_many_ranks, False),
    ("shm-harness", check_shm_harness, False),
]


class Ctx:
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mpirun", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--fake", help="fake_rank program (no library)")
    g.add_argument("--mpi", help="mpi_launch program (linked to the library)")
    ap.add_argument("-k", default="", help="run only checks whose name contains this")
    a = ap.parse_args()
    ctx = Ctx()
    ctx.mpirun = os.path.abspath(a.mpirun)
    ctx.kind = "fake" if a.fake else "mpi"
    ctx.prog = os.path.abspath(a.fake or a.mpi)
    passed = failed = 0
    for name, fn, with_mpi in CHECKS:
        if a.k not in name or (ctx.kind == "mpi" and not with_mpi) or \
                (ctx.kind == "fake" and with_mpi == "only"):
            continue
        t0 = time.monotonic()
        try:
            problems = fn(ctx)
        except Exception as e:  # a crash of the check is a failure, not the end of the run
            problems = [f"check raised {type(e).__name__}: {e}"]
        dt = time.monotonic() - t0
        if problems:
            failed += 1
            print(f"FAIL {ctx.kind}/{name} ({dt:.2f} s)")
            for line in problems:
                print("     " + line)
        else:
            passed += 1
            print(f"ok   {ctx.kind}/{name} ({dt:.2f} s)")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
