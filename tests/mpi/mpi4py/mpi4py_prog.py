# SPDX-License-Identifier: BSD-3-Clause
"""An mpi4py program run by check_mpi4py.py: pickled and buffer point-to-point,
blocking and non-blocking, partitioned, and the collectives in both forms, each checked
against what every rank can compute alone. Prints "No Errors" on rank 0."""
import sys
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)
        print(f"rank {rank}: {what}", file=sys.stderr)


check(MPI.Get_library_version().startswith("Tandem MPI"), "not running on Tandem")
right, left = (rank + 1) % size, (rank - 1) % size

# point-to-point: pickled objects, small and large (rendezvous), and buffers
for n in (3, 100000):
    obj = {"from": rank, "data": list(range(n))}
    got = comm.sendrecv(obj, dest=right, source=left, sendtag=n % 7, recvtag=n % 7)
    check(got == {"from": left, "data": list(range(n))}, f"sendrecv of {n} items")
    req = comm.isend(obj, dest=right, tag=5)
    got = comm.recv(source=left, tag=5)
    req.wait()
    check(got["from"] == left and len(got["data"]) == n, f"isend/recv of {n} items")
buf = array("d", [rank + 0.5] * 70000)
out = array("d", [0.0] * 70000)
st = MPI.Status()
comm.Sendrecv(buf, dest=right, recvbuf=out, source=left, status=st)
check(out[0] == left + 0.5 and out[-1] == left + 0.5, "Sendrecv of doubles")
check(st.Get_count(MPI.DOUBLE) == 70000 and st.Get_source() == left, "status of Sendrecv")
reqs = [comm.Irecv(out, source=left, tag=3), comm.Isend(buf, dest=right, tag=3)]
MPI.Request.Waitall(reqs)
check(out[123] == left + 0.5, "Isend/Irecv of doubles")
out[0] = -1.0
req = comm.Isendrecv(buf, dest=right, recvbuf=out, source=left, sendtag=4, recvtag=4)
req.Wait()
check(out[0] == left + 0.5 and out[-1] == left + 0.5, "Isendrecv of doubles")
if size > 1:
    if rank == 0:
        comm.Ssend(array("i", [7, 8, 9]), dest=1, tag=11)
    elif rank == 1:
        m = comm.mprobe(source=0, tag=11)
        got = array("i", [0, 0, 0])
        m.Recv(got)
        check(list(got) == [7, 8, 9], "Ssend/mprobe/Recv")

# partitioned: 6 send partitions, 4 receive partitions, marked from the last down
pbuf = array("i", range(rank * 1000, rank * 1000 + 24000))
pout = array("i", [-1] * 24000)
preq = comm.Precv_init(pout, 4, source=left, tag=6)
sreq = comm.Psend_init(pbuf, 6, dest=right, tag=6)
for _ in range(3):
    MPI.Prequest.Startall([preq, sreq])
    for i in reversed(range(6)):
        sreq.Pready(i)
    for i in range(4):
        while not preq.Parrived(i):
            pass
    MPI.Request.Waitall([preq, sreq])
    check(pout[0] == left * 1000 and pout[23999] == left * 1000 + 23999, "partitioned")
preq.Free()
sreq.Free()

# collectives, pickled
check(comm.bcast({"k": 42} if rank == 0 else None, root=0) == {"k": 42}, "bcast")
check(comm.allreduce(rank + 1) == size * (size + 1) // 2, "allreduce")
check(comm.reduce(rank, op=MPI.MAX, root=0) == (size - 1 if rank == 0 else None), "reduce")
check(comm.gather(rank * 2, root=0) == ([2 * i for i in range(size)] if rank == 0 else None),
      "gather")
check(comm.scatter([i * i for i in range(size)] if rank == 0 else None, root=0) == rank * rank,
      "scatter")
check(comm.allgather(str(rank)) == [str(i) for i in range(size)], "allgather")
check(comm.alltoall([(rank, i) for i in range(size)]) == [(i, rank) for i in range(size)],
      "alltoall")
check(comm.scan(1) == rank + 1, "scan")
check(comm.exscan(1) == (rank if rank > 0 else None), "exscan")
comm.barrier()

# collectives on buffers (counts go by the _c forms)
a = array("l", [rank] * 4)
r = array("l", [0] * 4)
comm.Allreduce(a, r, op=MPI.SUM)
check(list(r) == [sum(range(size))] * 4, "Allreduce of longs")
b = array("l", [rank + 10] * 3)
comm.Bcast(b, root=size - 1)
check(list(b) == [size + 9] * 3, "Bcast of longs")
g = array("l", [0] * (2 * size))
comm.Allgather(array("l", [rank, -rank]), g)
check(list(g) == [v for i in range(size) for v in (i, -i)], "Allgather")
counts = [i + 1 for i in range(size)]
displs = [sum(counts[:i]) for i in range(size)]
gv = array("l", [0] * sum(counts))
comm.Allgatherv(array("l", [rank] * (rank + 1)), [gv, counts, displs, MPI.LONG])
check(list(gv) == [i for i in range(size) for _ in range(i + 1)], "Allgatherv")
t = array("l", [rank * 100 + i for i in range(size)])
u = array("l", [0] * size)
comm.Alltoall(t, u)
check(list(u) == [i * 100 + rank for i in range(size)], "Alltoall")
rs = array("l", [0])
comm.Reduce_scatter_block(array("l", [rank + i for i in range(size)]), rs)
check(rs[0] == sum(i + rank for i in range(size)), "Reduce_scatter_block")
ia = array("l", [0])
two = array("l", [2])  # held until Wait: a send buffer must outlive its request
req = comm.Iallreduce(two, ia, op=MPI.SUM)
req.Wait()
check(ia[0] == 2 * size, "Iallreduce")

# a communicator made from it
sub = comm.Split(rank % 2, rank)
check(sub.allreduce(1) == sub.Get_size(), "allreduce on a split communicator")
sub.Free()

bad = comm.allreduce(len(errors))
if rank == 0 and bad == 0:
    print("No Errors")
