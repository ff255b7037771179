#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The mpi4py wheel from PyPI, unchanged, on Tandem's libmpi.so.12.

usage: check_mpi4py.py --mpirun MPIRUN --libdir DIR --venv DIR [-n N] [--timeout S]

The wheel on PyPI is built against MPICH 4 and loads whatever libmpi.so.12 the
dynamic linker finds first: here Tandem's (DIR first on LD_LIBRARY_PATH). It
calls the MPI-4 large-count forms (MPI_Send_c, MPI_Bcast_c, MPI_Gatherv_c, ...)
wherever it passes a count. A virtual environment with the pinned wheel is made
once in --venv (pip, binary wheels only); if PyPI cannot be reached the check
is skipped (exit 77), never passed. Then mpi4py_prog.py runs on N ranks and
must end with "No Errors" and exit 0.
"""
import argparse
import os
import subprocess
import sys
import venv

MPI4PY = "mpi4py==4.1.2"
HERE = os.path.dirname(os.path.abspath(__file__))


def ensure_venv(path):
    py = os.path.join(path, "bin", "python")
    stamp = os.path.join(path, "tandem-" + MPI4PY)
    if os.path.exists(stamp):
        return py
    if not os.path.exists(py):
        try:
            venv.EnvBuilder(with_pip=True).create(path)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"FAIL: cannot make a virtual environment with pip in {path} ({e}); "
                  "scripts/install-deps.sh installs python3-venv")
            sys.exit(1)
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--only-binary=:all:", MPI4PY], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        print(f"skip: pip could not install the {MPI4PY} wheel:\n{r.stdout}{r.stderr}")
        sys.exit(77)
    open(stamp, "w").close()
    return py


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--venv", required=True)
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    py = ensure_venv(a.venv)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = a.libdir + (":" + env["LD_LIBRARY_PATH"]
                                         if env.get("LD_LIBRARY_PATH") else "")
    cmd = [a.mpirun, "-n", str(a.n), "--timeout", f"{a.timeout:g}", py,
           os.path.join(HERE, "mpi4py_prog.py")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.timeout + 30)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0 or "No Errors" not in r.stdout:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
