/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several sessions, at once and one after the other, without MPI_Init.
 *
 * Session A spans every process; session B is opened by ranks 1.. only, with a
 * communicator among them. When A is finalized, rank 0 has no session left and
 * tears the library down while the others keep B open and go on. Rank 0 then
 * opens session C, as do the others (their library is still up), and all of them
 * talk over a communicator of C, both ways, eager and rendezvous sizes: the
 * rings with rank 0 must go on where they were. Then B and C are finalized, and
 * a last session D is opened and closed by everyone (the library set up a third
 * time at rank 0). Communicators are created under the same string tag in A and
 * C, and the communicators of two open sessions do not share a context.
 */
#include "stest.h"

/* Messages both ways between every pair, of every size class, checked. */
static void exchange(MPI_Comm c, int salt) {
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (int bytes = 4; bytes <= (1 << 21); bytes *= 16) {
        for (int d = 1; d < size; d++) {
            int to = (rank + d) % size, from = (rank + size - d) % size;
            int *out = malloc((size_t)bytes), *in = malloc((size_t)bytes);
            int n = bytes / (int)sizeof(int);
            for (int i = 0; i < n; i++)
                out[i] = salt + rank * 1000 + i;
            memset(in, 0xff, (size_t)bytes);
            T_OK(MPI_Sendrecv(out, n, MPI_INT, to, salt, in, n, MPI_INT, from, salt, c,
                              MPI_STATUS_IGNORE));
            int bad = 0;
            for (int i = 0; i < n; i++)
                bad += in[i] != salt + from * 1000 + i;
            T_CHECK(bad == 0, "%d bytes from %d: %d ints wrong (salt %d)", bytes, from, bad, salt);
            free(out);
            free(in);
        }
    }
    int sum = -1;
    T_OK(MPI_Allreduce(&salt, &sum, 1, MPI_INT, MPI_SUM, c));
    T_CHECK(sum == salt * size, "allreduce %d, want %d", sum, salt * size);
}

int main(void) {
    MPI_Session a = MPI_SESSION_NULL, b = MPI_SESSION_NULL, c = MPI_SESSION_NULL;
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &a));
    MPI_Comm ca = t_world_comm(a, "org.tandem.test.twice");
    int rank = t_rank, size = 0;
    MPI_Comm_size(ca, &size);
    exchange(ca, 1);

    /* B: ranks 1.. only */
    MPI_Comm cb = MPI_COMM_NULL;
    if (rank > 0) {
        T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &b));
        MPI_Group w, rest;
        T_OK(MPI_Group_from_session_pset(b, "mpi://WORLD", &w));
        T_OK(MPI_Group_excl(w, 1, (int[]){0}, &rest));
        T_OK(MPI_Comm_create_from_group(rest, "org.tandem.test.twice.b", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &cb));
        MPI_Group_free(&w);
        MPI_Group_free(&rest);
        /* the contexts of A's and B's communicators differ: a message sent on one
         * is not received on the other */
        int brank = -1, bsize = 0;
        MPI_Comm_rank(cb, &brank);
        MPI_Comm_size(cb, &bsize);
        if (bsize > 1) {
            int peer = brank ^ 1, v = -1, got = -1;
            if (peer < bsize) {
                int apeer = peer + 1;
                MPI_Request r[2];
                T_OK(MPI_Irecv(&got, 1, MPI_INT, peer, 3, cb, &r[0]));
                v = 100 + rank;
                T_OK(MPI_Send(&v, 1, MPI_INT, apeer, 3, ca)); /* on A */
                v = 200 + rank;
                T_OK(MPI_Send(&v, 1, MPI_INT, peer, 3, cb)); /* on B */
                T_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
                T_CHECK(got == 200 + apeer, "on B got %d, want %d", got, 200 + apeer);
                T_OK(MPI_Recv(&got, 1, MPI_INT, apeer, 3, ca, MPI_STATUS_IGNORE));
                T_CHECK(got == 100 + apeer, "on A got %d, want %d", got, 100 + apeer);
                (void)r;
            }
        }
        exchange(cb, 2);
    }

    /* A ends everywhere; rank 0 has no session left */
    T_OK(MPI_Comm_free(&ca));
    T_OK(MPI_Session_finalize(&a));

    /* C: everyone, rank 0's library set up again */
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Comm cc = t_world_comm(c, "org.tandem.test.twice");
    T_CHECK(t_rank == rank, "rank %d in C, %d in A", t_rank, rank);
    exchange(cc, 3);
    if (rank > 0) {
        exchange(cb, 4);
        T_OK(MPI_Comm_free(&cb));
        T_OK(MPI_Session_finalize(&b));
    }
    exchange(cc, 5);
    int flag = -1;
    MPI_Initialized(&flag);
    T_CHECK(flag == 0, "MPI_Initialized says %d", flag);
    /* C's verdict goes to D, whose communicator carries it */
    int errs = t_errs;
    T_OK(MPI_Comm_free(&cc));
    T_OK(MPI_Session_finalize(&c));

    /* D: the library's third start at rank 0, second at the others */
    MPI_Session d = MPI_SESSION_NULL;
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &d));
    MPI_Comm cd = t_world_comm(d, "org.tandem.test.twice.d");
    exchange(cd, 6);
    T_CHECK(t_errs >= errs, "error count went down");
    t_verdict(cd);
    T_OK(MPI_Comm_free(&cd));
    T_OK(MPI_Session_finalize(&d));
    return 0;
}
