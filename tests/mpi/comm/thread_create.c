/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator creation races (MPI_THREAD_MULTIPLE): T threads per rank, each
 * with a parent communicator of its own, create communicators from their parents
 * at the same time (dup, split, create, create_group, idup, in an order that
 * differs between threads), so the context id agreements of different parents
 * overlap at every process, in whatever order the threads get there. Every new
 * communicator is checked: size, rank, its name (set by this thread), and a
 * message round its ring on tag 0 whose payload names the thread and iteration,
 * so two communicators that got one context id would mix their messages.
 * Arguments: threads (4), iterations (40).
 */
#include "tutil.h"

#include <sched.h>

static int wsize;
static MPI_Comm parents[TR_MAX];
static int iters = 40;

static void ring(MPI_Comm c, int tid, int it, const char *what) {
    int r, s;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    int to = (r + 1) % s, from = (r + s - 1) % s;
    int out[3] = {tid, it, r}, in[3] = {-1, -1, -1};
    MPI_Status st;
    T_OK(MPI_Sendrecv(out, 3, MPI_INT, to, 0, in, 3, MPI_INT, from, 0, c, &st));
    T_CHECK(in[0] == tid && in[1] == it && in[2] == from,
            "%s (thread %d, iteration %d): got {%d, %d, %d} from %d, expected {%d, %d, %d}", what,
            tid, it, in[0], in[1], in[2], from, tid, it, from);
}

static void named(MPI_Comm c, int tid, int it, const char *what) {
    char name[MPI_MAX_OBJECT_NAME], got[MPI_MAX_OBJECT_NAME];
    int len;
    snprintf(name, sizeof(name), "%s-t%d-i%d", what, tid, it);
    T_OK(MPI_Comm_set_name(c, name));
    T_OK(MPI_Comm_get_name(c, got, &len));
    T_CHECK(strcmp(got, name) == 0, "%s: name '%s', expected '%s'", what, got, name);
}

static void *worker(int id, void *arg) {
    MPI_Comm parent = parents[id];
    int prank;
    MPI_Comm_rank(parent, &prank);
    for (int it = 0; it < iters; it++) {
        /* vary the interleaving between ranks (correctness does not depend on it) */
        if ((it + prank + id) % 3 == 0)
            sched_yield();
        MPI_Comm c = MPI_COMM_NULL;
        int r = -1, s = -1;
        switch ((it + id) % 5) {
        case 0: /* dup */
            T_OK(MPI_Comm_dup(parent, &c));
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            T_CHECK(r == prank && s == wsize, "dup: rank %d of %d", r, s);
            named(c, id, it, "dup");
            ring(c, id, it, "dup");
            break;
        case 1: { /* split by parity, reversed */
            T_OK(MPI_Comm_split(parent, prank % 2, -prank, &c));
            int want_s = (wsize + 1 - prank % 2) / 2, want_r = 0;
            for (int q = prank + 2; q < wsize; q += 2)
                want_r++;
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            T_CHECK(r == want_r && s == want_s, "split: rank %d of %d, expected %d of %d", r, s,
                    want_r, want_s);
            named(c, id, it, "split");
            ring(c, id, it, "split");
            break;
        }
        case 2: { /* create: all but the last rank */
            MPI_Group g, sub;
            MPI_Comm_group(parent, &g);
            int excl = wsize - 1;
            if (wsize > 1)
                MPI_Group_excl(g, 1, &excl, &sub);
            else
                MPI_Group_incl(g, 1, (int[]){0}, &sub);
            T_OK(MPI_Comm_create(parent, sub, &c));
            MPI_Group_free(&sub);
            MPI_Group_free(&g);
            if (wsize > 1 && prank == wsize - 1) {
                T_CHECK(c == MPI_COMM_NULL, "create: the excluded rank got a communicator");
                break;
            }
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            T_CHECK(r == prank && s == (wsize > 1 ? wsize - 1 : 1), "create: rank %d of %d", r, s);
            named(c, id, it, "create");
            ring(c, id, it, "create");
            break;
        }
        case 3: { /* create_group, reversed order, tagged by thread */
            MPI_Group g, rev;
            MPI_Comm_group(parent, &g);
            int range[1][3] = {{wsize - 1, 0, -1}};
            MPI_Group_range_incl(g, 1, range, &rev);
            T_OK(MPI_Comm_create_group(parent, rev, id, &c));
            MPI_Group_free(&rev);
            MPI_Group_free(&g);
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            T_CHECK(r == wsize - 1 - prank && s == wsize, "create_group: rank %d of %d", r, s);
            named(c, id, it, "create_group");
            ring(c, id, it, "create_group");
            break;
        }
        case 4: { /* idup, then wait */
            MPI_Request rq;
            T_OK(MPI_Comm_idup(parent, &c, &rq));
            T_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            T_CHECK(r == prank && s == wsize, "idup: rank %d of %d", r, s);
            named(c, id, it, "idup");
            ring(c, id, it, "idup");
            break;
        }
        }
        if (c != MPI_COMM_NULL)
            T_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

int main(int argc, char **argv) {
    t_init_threads(&argc, &argv);
    int nt = tr_arg_int(argc, argv, 1, 4);
    iters = tr_arg_int(argc, argv, 2, iters);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int i = 0; i < nt; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parents[i]);
    tr_run(nt, worker, NULL, NULL);
    /* nothing leaked from one thread's creations into another's parent */
    for (int i = 0; i < nt; i++) {
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, parents[i], &flag, MPI_STATUS_IGNORE);
        T_CHECK(!flag, "a message was left on thread %d's parent", i);
        MPI_Comm_free(&parents[i]);
    }
    return t_finish();
}
