#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks of the installed tools: mpicc, mpicxx, mpirun/mpiexec, pkg-config, CMake FindMPI.

usage: check_wrappers.py --build-dir DIR --source-dir DIR [--cmake CMAKE] [-k SUBSTRING]

Installs the build into a scratch prefix, moves that prefix elsewhere (the install must be
relocatable), and from there: compiles examples/hello_ring.c with mpicc and runs it with
mpirun; checks -show, -c, -cc=, MPICH_CC/TANDEM_CC, a symlink to mpicc, mpicxx on C++;
builds with the flags of pkg-config (tandem-mpi and mpi); configures a small CMake
project with find_package(MPI); and runs hello_ring built by MPICH's mpicc.mpich on our
library (libmpich.so.12 of the build tree). Ends with "N passed, N failed".
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HELLO_CXX = r"""
#include <mpi.h>
#include <iostream>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::cout << "c++ rank " << rank << " of " << size << std::endl;
    MPI_Finalize();
    return 0;
}
"""

FINDMPI_PROJECT = r"""
cmake_minimum_required(VERSION 3.20)
project(findmpi_check C)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "check: MPI_C_COMPILER=${MPI_C_COMPILER}")
message(STATUS "check: MPI_C_INCLUDE_DIRS=${MPI_C_INCLUDE_DIRS}")
message(STATUS "check: MPI_C_LIBRARIES=${MPI_C_LIBRARIES}")
message(STATUS "check: MPI_C_VERSION=${MPI_C_VERSION}")
message(STATUS "check: MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
add_executable(hello_ring @HELLO@)
target_link_libraries(hello_ring PRIVATE MPI::MPI_C)
"""


class Failure(Exception):
    pass


def sh(cmd, env=None, cwd=None, timeout=120, ok=True):
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if ok and p.returncode != 0:
        raise Failure(f"'{' '.join(cmd)}' exited {p.returncode}\n{p.stdout[-2000:]}"
                      f"{p.stderr[-2000:]}")
    return p


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPICH_CC", "MPICH_CXX", "TANDEM_CC", "TANDEM_CXX", "MPI_HOME",
                        "PKG_CONFIG_PATH", "MPIEXEC_TIMEOUT")}
    env.update(extra)
    return env


class Ctx:
    pass


def check_layout(c):
    for rel in ("bin/mpicc", "bin/mpicxx", "bin/mpic++", "bin/mpirun", "bin/mpiexec",
                "include/mpi.h", "lib/pkgconfig/tandem-mpi.pc", "lib/pkgconfig/mpi.pc"):
        path = os.path.join(c.prefix, rel)
        if not os.path.exists(path):
            raise Failure(f"{rel} is missing from the install")
    libs = [x for x in os.listdir(os.path.join(c.prefix, "lib")) if x.startswith("libmpi.so")]
    if not libs:
        raise Failure("lib/libmpi.so* is missing from the install")


def check_show(c):
    out = sh([c.mpicc, "-show"], env=clean_env()).stdout.strip()
    inc, lib = os.path.join(c.prefix, "include"), os.path.join(c.prefix, "lib")
    for want in (f"-I{inc}", f"-L{lib}", f"-Wl,-rpath,{lib}", "-lmpi"):
        if want not in out.split():
            raise Failure(f"'mpicc -show' has no {want} (moved prefix {c.prefix}): {out}")
    for opt in ("-compile_info", "-compile-info", "-link_info", "-link-info", "-showme"):
        if sh([c.mpicc, opt], env=clean_env()).stdout.strip() != out:
            raise Failure(f"'mpicc {opt}' differs from -show")
    out_c = sh([c.mpicc, "-show", "-c", "x.c"], env=clean_env()).stdout
    if "-lmpi" in out_c.split() or "-c" not in out_c.split():
        raise Failure(f"'mpicc -show -c x.c' must compile only: {out_c}")
    link = os.path.join(c.tmp, "linkdir")
    os.makedirs(link, exist_ok=True)
    os.symlink(c.mpicc, os.path.join(link, "mpicc"))
    out_l = sh([os.path.join(link, "mpicc"), "-show"], env=clean_env()).stdout.strip()
    if out_l != out:
        raise Failure(f"a symlink to mpicc must find the same prefix: {out_l}")


def check_compiler_choice(c):
    first = lambda env, *a: sh([c.mpicc, "-show", *a], env=env).stdout.split()[0]  # noqa
    if first(clean_env(), "-cc=my-cc") != "my-cc":
        raise Failure("-cc= is not obeyed")
    if first(clean_env(MPICH_CC="mpich-cc")) != "mpich-cc":
        raise Failure("MPICH_CC is not obeyed")
    if first(clean_env(MPICH_CC="mpich-cc", TANDEM_CC="tandem-cc")) != "tandem-cc":
        raise Failure("TANDEM_CC must win over MPICH_CC")
    if sh([c.mpicxx, "-show", "-cxx=my-cxx"], env=clean_env()).stdout.split()[0] != "my-cxx":
        raise Failure("mpicxx -cxx= is not obeyed")
    if shutil.which("clang"):
        exe = os.path.join(c.tmp, "hello_clang")
        sh([c.mpicc, "-cc=clang", "-o", exe, c.hello], env=clean_env())
        run_ring(c, exe, 2)


def run_ring(c, exe, n):
    p = sh([c.mpirun, "-n", str(n), "--timeout", "60", exe], env=clean_env(), timeout=90,
           ok=False)
    want = n * (n - 1) // 2
    if p.returncode != 0 or not re.search(rf"^final token {want} .*correct", p.stdout, re.M):
        raise Failure(f"mpirun -n {n} {os.path.basename(exe)}: exit {p.returncode}\n"
                      f"{p.stdout[-1500:]}{p.stderr[-1500:]}")


def check_mpicc_build_run(c):
    exe = os.path.join(c.tmp, "hello_ring")
    sh([c.mpicc, "-O2", "-Wall", "-o", exe, c.hello], env=clean_env())
    dyn = sh(["readelf", "-d", exe], ok=False).stdout if shutil.which("readelf") else ""
    if dyn and os.path.join(c.prefix, "lib") not in dyn:
        raise Failure("the program has no rpath to the install's lib/")
    # no LD_LIBRARY_PATH: the rpath must find the library
    run_ring(c, exe, 2)
    run_ring(c, exe, 4)
    # mpiexec is the same launcher
    p = sh([os.path.join(c.prefix, "bin", "mpiexec"), "-n", "2", exe], env=clean_env(),
           timeout=90, ok=False)
    if p.returncode != 0:
        raise Failure(f"mpiexec -n 2 failed: {p.returncode}\n{p.stderr[-1500:]}")
    # separate compile and link steps
    obj = os.path.join(c.tmp, "hello_ring.o")
    sh([c.mpicc, "-c", "-o", obj, c.hello], env=clean_env())
    sh([c.mpicc, "-o", exe + "2", obj], env=clean_env())
    run_ring(c, exe + "2", 2)


def check_mpicxx(c):
    src = os.path.join(c.tmp, "hello.cc")
    with open(src, "w") as f:
        f.write(HELLO_CXX)
    exe = os.path.join(c.tmp, "hello_cxx")
    sh([c.mpicxx, "-o", exe, src], env=clean_env())
    p = sh([c.mpirun, "-n", "2", "--timeout", "60", exe], env=clean_env(), timeout=90, ok=False)
    if p.returncode != 0 or "c++ rank 1 of 2" not in p.stdout:
        raise Failure(f"C++ program: exit {p.returncode}\n{p.stdout}{p.stderr}")


STRICT_C = r"""
#include <mpi.h>
int waits(MPI_Request *r, int *idx, int *flag) {
    int n = 0;
    n += MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    n += MPI_Testall(2, r, flag, MPI_STATUSES_IGNORE);
    n += MPI_Waitsome(2, r, idx, idx + 1, MPI_STATUSES_IGNORE);
    n += MPI_Testsome(2, r, idx, idx + 1, MPI_STATUSES_IGNORE);
    n += MPI_Wait(r, MPI_STATUS_IGNORE);
    return n;
}
"""


def check_strict_warnings(c):
    """Our mpi.h must not make users' -Wall -Werror builds fail (MPICH's header warns on
    MPI_STATUSES_IGNORE under gcc 12's -Wstringop-overflow; ours must not)."""
    src = os.path.join(c.tmp, "strict.c")
    with open(src, "w") as f:
        f.write(STRICT_C)
    for cc in ("gcc", "clang"):
        if shutil.which(cc):
            sh([c.mpicc, f"-cc={cc}", "-O2", "-Wall", "-Wextra", "-Werror", "-c", "-o",
                os.path.join(c.tmp, f"strict_{cc}.o"), src], env=clean_env())


def check_pkg_config(c):
    if not shutil.which("pkg-config"):
        raise Failure("pkg-config is not installed (scripts/install-deps.sh installs it)")
    env = clean_env(PKG_CONFIG_PATH=os.path.join(c.prefix, "lib", "pkgconfig"))
    for name in ("tandem-mpi", "mpi"):
        flags = sh(["pkg-config", "--cflags", "--libs", name], env=env).stdout.split()
        exe = os.path.join(c.tmp, f"hello_pc_{name}")
        sh(["cc", "-o", exe, c.hello] + flags, env=clean_env())
        run_ring(c, exe, 2)
        libdir = sh(["pkg-config", "--variable=libdir", name], env=env).stdout.strip()
        if os.path.realpath(libdir) != os.path.realpath(os.path.join(c.prefix, "lib")):
            raise Failure(f"pkg-config {name} libdir is {libdir}, not in the moved prefix")


def check_findmpi(c):
    proj = os.path.join(c.tmp, "findmpi")
    os.makedirs(proj, exist_ok=True)
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write(FINDMPI_PROJECT.replace("@HELLO@", c.hello))
    build = os.path.join(proj, "build")
    env = clean_env(PATH=os.path.join(c.prefix, "bin") + os.pathsep + os.environ["PATH"])
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    p = sh([c.cmake, "-S", proj, "-B", build] + gen, env=env, timeout=180)
    found = dict(re.findall(r"check: (\w+)=(.*)", p.stdout))
    lib = os.path.join(c.prefix, "lib")
    if os.path.dirname(found.get("MPI_C_COMPILER", "")) != os.path.join(c.prefix, "bin"):
        raise Failure(f"FindMPI chose the compiler {found.get('MPI_C_COMPILER')}")
    if not any(x.startswith(lib + "/libmpi.so") for x in found.get("MPI_C_LIBRARIES", "").split(";")):
        raise Failure(f"FindMPI found MPI_C_LIBRARIES={found.get('MPI_C_LIBRARIES')}")
    if os.path.join(c.prefix, "include") not in found.get("MPI_C_INCLUDE_DIRS", ""):
        raise Failure(f"FindMPI found MPI_C_INCLUDE_DIRS={found.get('MPI_C_INCLUDE_DIRS')}")
    if not found.get("MPIEXEC_EXECUTABLE", "").startswith(os.path.join(c.prefix, "bin")):
        raise Failure(f"FindMPI found MPIEXEC_EXECUTABLE={found.get('MPIEXEC_EXECUTABLE')}")
    sh([c.cmake, "--build", build], env=env, timeout=180)
    run_ring(c, os.path.join(build, "hello_ring"), 3)


def check_mpich_abi(c):
    # the product's promise: a program built with MPICH's wrapper and header runs on
    # Tandem through libmpich.so.12 (a link to our library in the build tree's lib/)
    mpich_cc = shutil.which("mpicc.mpich")
    if not mpich_cc:
        raise Failure("mpicc.mpich is not installed (scripts/install-deps.sh installs it)")
    libdir = os.path.join(c.build_dir, "lib")
    if not os.path.exists(os.path.join(libdir, "libmpich.so.12")):
        raise Failure(f"{libdir}/libmpich.so.12 is missing")
    exe = os.path.join(c.tmp, "hello_ring_mpich")
    sh([mpich_cc, "-o", exe, c.hello], env=clean_env())
    env = clean_env(LD_LIBRARY_PATH=libdir)
    ldd = sh(["ldd", exe], env=env, ok=False).stdout
    m = re.search(r"libmpich\.so\.12 => (\S+)", ldd)
    if not m or os.path.realpath(os.path.dirname(m.group(1))) != os.path.realpath(libdir):
        raise Failure(f"libmpich.so.12 does not resolve into {libdir}:\n{ldd}")
    for n in (2, 3):
        p = sh([c.mpirun, "-n", str(n), "--timeout", "60", exe], env=env, timeout=90, ok=False)
        want = n * (n - 1) // 2
        if p.returncode != 0 or not re.search(rf"^final token {want} .*correct", p.stdout, re.M):
            raise Failure(f"MPICH-built hello_ring on {n} ranks: exit {p.returncode}\n"
                          f"{p.stdout[-1500:]}{p.stderr[-1500:]}")


CHECKS = [
    ("layout", check_layout),
    ("show", check_show),
    ("compiler-choice", check_compiler_choice),
    ("mpicc-build-run", check_mpicc_build_run),
    ("mpicxx", check_mpicxx),
    ("strict-warnings", check_strict_warnings),
    ("pkg-config", check_pkg_config),
    ("findmpi", check_findmpi),
    ("mpich-abi", check_mpich_abi),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("-k", default="")
    a = ap.parse_args()
    c = Ctx()
    c.cmake = a.cmake
    c.build_dir = os.path.abspath(a.build_dir)
    c.hello = os.path.join(os.path.abspath(a.source_dir), "examples", "hello_ring.c")
    with tempfile.TemporaryDirectory(prefix="tandem-wrappers-") as tmp:
        c.tmp = tmp
        first = os.path.join(tmp, "first-prefix")
        p = sh([a.cmake, "--install", a.build_dir, "--prefix", first], ok=False, timeout=300)
        if p.returncode != 0:
            print(f"FAIL install into {first}: exit {p.returncode}\n{p.stdout}{p.stderr}")
            print("0 passed, 1 failed")
            return 1
        # the installed tree must work wherever it ends up
        c.prefix = os.path.join(tmp, "moved", "prefix")
        os.makedirs(os.path.dirname(c.prefix))
        os.rename(first, c.prefix)
        c.mpicc = os.path.join(c.prefix, "bin", "mpicc")
        c.mpicxx = os.path.join(c.prefix, "bin", "mpicxx")
        c.mpirun = os.path.join(c.prefix, "bin", "mpirun")
        passed = failed = 0
        for name, fn in CHECKS:
            if a.k not in name:
                continue
            t0 = time.monotonic()
            try:
                fn(c)
                passed += 1
                print(f"ok   wrappers/{name} ({time.monotonic() - t0:.2f} s)")
            except (Failure, OSError, subprocess.TimeoutExpired) as e:
                failed += 1
                print(f"FAIL wrappers/{name} ({time.monotonic() - t0:.2f} s)")
                for line in str(e).splitlines():
                    print("     " + line)
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
