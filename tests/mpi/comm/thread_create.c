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
#include "thr_util.h"

#include <sched.h>

static int wsize;
static MPI_Comm parents[64];
static int iters = 40;

static void ring(MPI_Comm c, int tid, int it, const char *what) {
    int r, s;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    int to = (r + 1) % s, from = (r + s - 1) % s;
    int out[3] = {tid, it, r}, in[3] = {-1, -1, -1};
    MPI_Status st;
    THR_OK(MPI_Sendrecv(out, 3, MPI_INT, to, 0, in, 3, MPI_INT, from, 0, c, &st));
    THR_CHECK(in[0] == tid && in[1] == it && in[2] == from,
              "%s (thread %d, iteration %d): got {%d, %d, %d} from %d, expected {%d, %d, %d}", what,
              tid, it, in[0], in[1], in[2], from, tid, it, from);
}

static void named(MPI_Comm c, int tid, int it, const char *what) {
    char name[MPI_MAX_OBJECT_NAME], got[MPI_MAX_OBJECT_NAME];
    int len;
    snprintf(name, sizeof(name), "%s-t%d-i%d", what, tid, it);
    THR_OK(MPI_Comm_set_name(c, name));
    THR_OK(MPI_Comm_get_name(c, got, &len));
    THR_CHECK(strcmp(got, name) == 0, "%s: name '%s', expected '%s'", what, got, name);
}

static void *worker(void *p) {
    thr_arg_t *a = p;
    MPI_Comm parent = parents[a->id];
    int prank;
    MPI_Comm_rank(parent, &prank);
    for (int it = 0; it < iters; it++) {
        /* vary the interleaving between ranks (correctness does not depend on it) */
        if ((it + prank + a->id) % 3 == 0)
            sched_yield();
        MPI_Comm c = MPI_COMM_NULL;
        int r = -1, s = -1;
        switch ((it + a->id) % 5) {
        case 0: /* dup */
            THR_OK(MPI_Comm_dup(parent, &c));
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            THR_CHECK(r == prank && s == wsize, "dup: rank %d of %d", r, s);
            named(c, a->id, it, "dup");
            ring(c, a->id, it, "dup");
            break;
        case 1: { /* split by parity, reversed */
            THR_OK(MPI_Comm_split(parent, prank % 2, -prank, &c));
            int want_s = (wsize + 1 - prank % 2) / 2, want_r = 0;
            for (int q = prank + 2; q < wsize; q += 2)
                want_r++;
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            THR_CHECK(r == want_r && s == want_s, "split: rank %d of %d, expected %d of %d", r, s,
                      want_r, want_s);
            named(c, a->id, it, "split");
            ring(c, a->id, it, "split");
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
            THR_OK(MPI_Comm_create(parent, sub, &c));
            MPI_Group_free(&sub);
            MPI_Group_free(&g);
            if (wsize > 1 && prank == wsize - 1) {
                THR_CHECK(c == MPI_COMM_NULL, "create: the excluded rank got a communicator");
                break;
            }
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            THR_CHECK(r == prank && s == (wsize > 1 ? wsize - 1 : 1), "create: rank %d of %d", r,
                      s);
            named(c, a->id, it, "create");
            ring(c, a->id, it, "create");
            break;
        }
        case 3: { /* create_group, reversed order, tagged by thread */
            MPI_Group g, rev;
            MPI_Comm_group(parent, &g);
            int range[1][3] = {{wsize - 1, 0, -1}};
            MPI_Group_range_incl(g, 1, range, &rev);
            THR_OK(MPI_Comm_create_group(parent, rev, a->id, &c));
            MPI_Group_free(&rev);
            MPI_Group_free(&g);
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            THR_CHECK(r == wsize - 1 - prank && s == wsize, "create_group: rank %d of %d", r, s);
            named(c, a->id, it, "create_group");
            ring(c, a->id, it, "create_group");
            break;
        }
        case 4: { /* idup, then wait */
            MPI_Request rq;
            THR_OK(MPI_Comm_idup(parent, &c, &rq));
            THR_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            THR_CHECK(r == prank && s == wsize, "idup: rank %d of %d", r, s);
            named(c, a->id, it, "idup");
            ring(c, a->id, it, "idup");
            break;
        }
        }
        if (c != MPI_COMM_NULL)
            THR_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        iters = atoi(argv[2]);
    if (nt < 1 || nt > 64)
        nt = 4;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int i = 0; i < nt; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parents[i]);
    thr_run(nt, worker, NULL);
    /* nothing leaked from one thread's creations into another's parent */
    for (int i = 0; i < nt; i++) {
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, parents[i], &flag, MPI_STATUS_IGNORE);
        THR_CHECK(!flag, "a message was left on thread %d's parent", i);
        MPI_Comm_free(&parents[i]);
    }
    return thr_finalize();
}
