/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_disconnect on communicators that no spawn made (MPI-4.1 §11.10.4): a
 * dup, a split, an MPI_Comm_create_group communicator and an intercommunicator.
 * It returns once the communication pending on the communicator here has
 * completed (a large message by rendezvous, a non-blocking collective, an
 * MPI_Comm_idup of it), so the data is in place before the requests are waited
 * for, frees it (attribute delete callbacks run, the handle becomes
 * MPI_COMM_NULL), and does not wait for what is no communication: an inactive
 * persistent request, a completed request never waited for. MPI_COMM_WORLD,
 * MPI_COMM_SELF and MPI_COMM_NULL are refused.
 */
#include "tutil.h"

#define BIG (1 << 20)

static int deletes;

static int count_delete(MPI_Comm c, int kv, void *val, void *extra) {
    (void)c;
    (void)kv;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int *big_buffer(int fill) {
    int *b = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        b[i] = fill < 0 ? -1 : fill + i;
    return b;
}

/* Pending operations on a dup of MPI_COMM_WORLD: complete after disconnect. */
static void pending(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c, keep, nc;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    keep = c;
    int kv;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv, NULL);
    MPI_Comm_set_attr(c, kv, NULL);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int *out = big_buffer(rank * 7), *in = big_buffer(-1);
    MPI_Request rq[5];
    int n = 0;
    MPI_Irecv(in, BIG, MPI_INT, from, 1, c, &rq[n++]);
    MPI_Isend(out, BIG, MPI_INT, to, 1, c, &rq[n++]);
    int one = 1, sum = -1;
    MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c, &rq[n++]);
    MPI_Comm_idup(c, &nc, &rq[n++]);
    /* a small send nobody waits for before the disconnect (eager: complete) */
    int small = rank;
    MPI_Isend(&small, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &rq[n++]);
    /* an inactive persistent request on c */
    MPI_Request pr;
    MPI_Send_init(&small, 1, MPI_INT, to, 3, c, &pr);
    T_OK(MPI_Comm_disconnect(&c));
    T_CHECK(c == MPI_COMM_NULL, "handle after MPI_Comm_disconnect: %#x", (unsigned)c);
    T_CHECK(deletes == 1, "delete callbacks on disconnect: %d", deletes);
    /* all of it completed inside the disconnect: the data is here already */
    T_CHECK(in[0] == from * 7 && in[BIG - 1] == from * 7 + BIG - 1,
            "receive not complete after disconnect: %d .. %d", in[0], in[BIG - 1]);
    T_CHECK(sum == size, "Iallreduce not complete after disconnect: %d", sum);
    for (int i = 0; i < 4; i++) {
        int flag = 0;
        T_OK(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
        T_CHECK(flag, "request %d not complete after disconnect", i);
    }
    int got = -1;
    MPI_Recv(&got, 1, MPI_INT, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Wait(&rq[4], MPI_STATUS_IGNORE);
    MPI_Request_free(&pr);
    /* the new communicator of the idup works; the disconnected handle does not */
    int r = -1;
    MPI_Allreduce(&one, &r, 1, MPI_INT, MPI_SUM, nc);
    T_CHECK(r == size, "idup completed by the disconnect: allreduce %d", r);
    T_FAILS(MPI_ERR_COMM, MPI_Comm_rank(keep, &r));
    T_OK(MPI_Comm_disconnect(&nc));
    MPI_Comm_free_keyval(&kv);
    free(out);
    free(in);
}

/* Other kinds of communicators. */
static void kinds(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm s;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &s);
    int x = rank, y = -1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, s);
    T_OK(MPI_Comm_disconnect(&s));
    T_CHECK(s == MPI_COMM_NULL, "split handle after disconnect");

    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int first = 0;
    MPI_Group_incl(wg, 1, &first, &g);
    if (rank == 0) {
        MPI_Comm cg;
        T_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 4, &cg));
        T_OK(MPI_Comm_disconnect(&cg));
        T_CHECK(cg == MPI_COMM_NULL, "create_group handle after disconnect");
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    if (size >= 2) {
        int low = rank < size / 2;
        MPI_Comm local, ic;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 5, &ic);
        int lrank, rsize, v = -1;
        MPI_Comm_rank(ic, &lrank);
        MPI_Comm_remote_size(ic, &rsize);
        MPI_Request rq = MPI_REQUEST_NULL;
        if (lrank < rsize)
            MPI_Irecv(&v, 1, MPI_INT, lrank, 6, ic, &rq);
        if (lrank < rsize)
            MPI_Send(&lrank, 1, MPI_INT, lrank, 6, ic);
        T_OK(MPI_Comm_disconnect(&ic));
        T_CHECK(ic == MPI_COMM_NULL, "intercomm handle after disconnect");
        int flag = 1;
        if (rq != MPI_REQUEST_NULL)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        T_CHECK(flag && (lrank >= rsize || v == lrank),
                "intercomm receive after disconnect: flag %d value %d", flag, v);
        MPI_Comm_free(&local);
    }
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    pending();
    kinds();
    MPI_Comm w = MPI_COMM_WORLD, self = MPI_COMM_SELF, null = MPI_COMM_NULL;
    T_FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&w));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&self));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_disconnect(&null));
    T_FAILS(MPI_ERR_ARG, MPI_Comm_disconnect(NULL));
    return t_finish();
}
