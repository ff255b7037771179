/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_idup and MPI_Comm_idup_with_info used as MPI-4.1 §7.4.2 and §6.12
 * allow: several outstanding at once, on one parent and on several (an idup of
 * a communicator made by MPI_Comm_create_group, an intercommunicator), with
 * point-to-point and collective traffic on the parents before they complete,
 * completed by MPI_Wait, MPI_Test and MPI_Waitall in orders that differ between
 * ranks, and started in different orders on different communicators. Each
 * pattern hangs if an idup blocks until its peers join it:
 *  - rank 0 starts an idup, then receives what every other rank sent with
 *    MPI_Ssend before joining it;
 *  - even ranks start idups on X then Y, odd ranks on Y, wait for it, then X.
 * Every new communicator is congruent to its parent, has the parent's hints and
 * attributes (copied when the call is made) and a context of its own: messages
 * with the same tag and source on all of them at once each arrive where they
 * were sent.
 */
#include "tutil.h"

#define NDUP 6
#define ROUNDS 8

static int copies;

static int copy_cb(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)kv;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The new communicators c[i] (of parents par[i]) are congruent to their parents
 * and carry their own messages: every rank sends every other one, on all of them
 * at once, a message with the same tag naming the communicator and the sender;
 * two sharing a context at some rank would mix them up there. */
static void check_contexts(MPI_Comm *c, MPI_Comm *par, int n, const char *what) {
    int wrank, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    for (int i = 0; i < n; i++) {
        int size, res = -1;
        MPI_Comm_size(c[i], &size);
        T_OK(MPI_Comm_compare(par[i], c[i], &res));
        T_CHECK(res == MPI_CONGRUENT, "%s %d: compare with the parent gives %d", what, i, res);
        total += size;
    }
    int *in = malloc(sizeof(int) * 2 * (size_t)total), *out = malloc(sizeof(int) * 2 * (size_t)n);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)total);
    int k = 0;
    for (int i = 0; i < n; i++) {
        int size;
        MPI_Comm_size(c[i], &size);
        for (int src = 0; src < size; src++, k++)
            MPI_Irecv(&in[2 * k], 2, MPI_INT, src, 5, c[i], &rq[k]);
    }
    for (int i = n - 1; i >= 0; i--) {
        int size;
        MPI_Comm_size(c[i], &size);
        out[2 * i] = i;
        out[2 * i + 1] = wrank;
        for (int dst = 0; dst < size; dst++)
            MPI_Isend(&out[2 * i], 2, MPI_INT, dst, 5, c[i], &rq[k++]);
    }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    k = 0;
    for (int i = 0; i < n; i++) {
        int size, rank;
        MPI_Comm_size(c[i], &size);
        MPI_Comm_rank(c[i], &rank);
        MPI_Group g, wg;
        MPI_Comm_group(c[i], &g);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        for (int src = 0; src < size; src++, k++) {
            int w = -1;
            MPI_Group_translate_ranks(g, 1, &src, wg, &w);
            T_CHECK(in[2 * k] == i && in[2 * k + 1] == w,
                    "%s %d: from rank %d got (%d, %d), want (%d, %d): a shared context?", what, i,
                    src, in[2 * k], in[2 * k + 1], i, w);
        }
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        int sum = -1;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c[i]);
        T_CHECK(sum == size * (size - 1) / 2, "%s %d: allreduce %d", what, i, sum);
    }
    free(in);
    free(out);
    free(rq);
}

/* Several idups of one parent and of others (one of them ordered backwards, so
 * its agreements have another root), traffic in between, any completion order. */
static void outstanding(int round, int kv) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm base, rev, sub = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_set_attr(base, kv, (void *)(long)(round + 1));
    /* a communicator made by MPI_Comm_create_group over the even ranks */
    MPI_Group wg, eg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int range[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_incl(wg, 1, range, &eg);
    if (rank % 2 == 0)
        T_OK(MPI_Comm_create_group(MPI_COMM_WORLD, eg, 77, &sub));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tandem_test_hint", "idup");

    MPI_Comm nc[2 * NDUP + 2], par[2 * NDUP + 2];
    MPI_Request rq[2 * NDUP + 2];
    int n = 0, with_info = -1;
    int before = copies;
    for (int i = 0; i < NDUP / 2; i++) {
        par[n] = base;
        T_OK(MPI_Comm_idup(base, &nc[n], &rq[n]));
        n++;
        par[n] = rev;
        T_OK(MPI_Comm_idup(rev, &nc[n], &rq[n]));
        n++;
    }
    T_CHECK(copies == before + NDUP / 2, "copy callbacks ran %d times at the calls, not %d",
            copies - before, NDUP / 2);
    /* traffic on the parents while they run: a ring and a collective */
    int x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % size, 9, &y, 1, MPI_INT, (rank + size - 1) % size, 9,
                 base, MPI_STATUS_IGNORE);
    T_CHECK(y == (rank + size - 1) % size, "ring on the parent during idups: %d", y);
    for (int i = 0; i < NDUP / 2; i++) {
        par[n] = i == 1 ? rev : base;
        if (i == 1) {
            with_info = n;
            T_OK(MPI_Comm_idup_with_info(rev, info, &nc[n], &rq[n]));
        } else {
            T_OK(MPI_Comm_idup(base, &nc[n], &rq[n]));
        }
        n++;
    }
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, base);
    T_CHECK(sum == size * (size - 1) / 2, "allreduce on the parent during idups: %d", sum);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, rev);
    if (sub != MPI_COMM_NULL) {
        par[n] = sub;
        T_OK(MPI_Comm_idup(sub, &nc[n], &rq[n]));
        n++;
    }
    par[n] = MPI_COMM_WORLD;
    T_OK(MPI_Comm_idup(MPI_COMM_WORLD, &nc[n], &rq[n]));
    n++;

    /* complete them in different orders on different ranks */
    switch ((rank + round) % 3) {
    case 0:
        T_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        break;
    case 1:
        for (int i = n - 1; i >= 0; i--)
            T_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
        break;
    default:
        for (int left = n; left > 0;) {
            for (int i = 0; i < n; i++) {
                int flag = 0;
                if (rq[i] == MPI_REQUEST_NULL)
                    continue;
                T_OK(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
                left -= flag != 0;
            }
        }
        break;
    }
    for (int i = 0; i < n; i++)
        T_CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed by its completion", i);
    /* the create_group communicator spans only the even ranks: checked on its own */
    int nsub = sub != MPI_COMM_NULL;
    MPI_Comm all[2 * NDUP + 2], allp[2 * NDUP + 2];
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (par[i] != sub) {
            all[m] = nc[i];
            allp[m++] = par[i];
        }
    }
    check_contexts(all, allp, m, "idups of MPI_COMM_WORLD, a dup and a reversed split");
    for (int i = 0; nsub && i < n; i++) {
        if (par[i] == sub)
            check_contexts(&nc[i], &par[i], 1, "idup of an MPI_Comm_create_group communicator");
    }
    /* hints and attributes came along */
    MPI_Info used;
    char v[32] = "";
    int flag = 0;
    MPI_Comm_get_info(nc[with_info], &used);
    MPI_Info_get(used, "tandem_test_hint", sizeof(v) - 1, v, &flag);
    T_CHECK(flag && strcmp(v, "idup") == 0, "MPI_Comm_idup_with_info hint: flag %d '%s'", flag, v);
    MPI_Info_free(&used);
    void *val = NULL;
    MPI_Comm_get_attr(nc[0], kv, &val, &flag);
    T_CHECK(flag && (long)val == round + 1, "attribute on the idup: flag %d value %ld", flag,
            (long)val);

    for (int i = 0; i < n; i++)
        MPI_Comm_free(&nc[i]);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    MPI_Info_free(&info);
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&base);
}

/* Rank 0 starts an idup and then waits for messages the others send (synchronous
 * mode) before they start theirs. */
static void before_peers(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c;
    MPI_Request r;
    if (rank == 0) {
        T_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
        for (int i = 1; i < size; i++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, i, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            T_CHECK(v == i, "message from %d before its idup: %d", i, v);
        }
    } else {
        MPI_Ssend(&rank, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        T_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
    }
    T_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_Comm w = MPI_COMM_WORLD;
    check_contexts(&c, &w, 1, "idup started before the peers'");
    MPI_Comm_free(&c);
}

/* Even ranks: idup X, idup Y, wait Y, wait X. Odd ranks: idup Y, wait Y, then
 * idup X, wait X. Y must complete while X is started only at some ranks. */
static void crossed(void) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm x, y, nx, ny;
    MPI_Comm_dup(MPI_COMM_WORLD, &x);
    MPI_Comm_dup(MPI_COMM_WORLD, &y);
    MPI_Request rx, ry;
    if (rank % 2 == 0) {
        T_OK(MPI_Comm_idup(x, &nx, &rx));
        T_OK(MPI_Comm_idup(y, &ny, &ry));
        T_OK(MPI_Wait(&ry, MPI_STATUS_IGNORE));
        T_OK(MPI_Wait(&rx, MPI_STATUS_IGNORE));
    } else {
        T_OK(MPI_Comm_idup(y, &ny, &ry));
        T_OK(MPI_Wait(&ry, MPI_STATUS_IGNORE));
        T_OK(MPI_Comm_idup(x, &nx, &rx));
        T_OK(MPI_Wait(&rx, MPI_STATUS_IGNORE));
    }
    MPI_Comm both[2] = {nx, ny}, parents[2] = {x, y};
    check_contexts(both, parents, 2, "idups started in crossed orders");
    MPI_Comm_free(&nx);
    MPI_Comm_free(&ny);
    MPI_Comm_free(&x);
    MPI_Comm_free(&y);
}

/* Idups of an intercommunicator (the two halves of MPI_COMM_WORLD), several at
 * once, with messages across it in between. */
static void inter(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return;
    int half = size / 2, low = rank < half;
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 11, &ic);
    int lrank, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm nc[3];
    MPI_Request rq[3];
    for (int i = 0; i < 3; i++) {
        T_OK(MPI_Comm_idup(ic, &nc[i], &rq[i]));
        /* messages across the parent while they run: local rank l sends to
         * remote rank l % rsize, so it hears from the remote ranks r with
         * r % lsize == l */
        int v = -1, mine = lrank, lsize, expected = 0;
        MPI_Comm_size(ic, &lsize);
        MPI_Request s;
        MPI_Issend(&mine, 1, MPI_INT, lrank % rsize, i, ic, &s);
        for (int r = 0; r < rsize; r++)
            expected += r % lsize == lrank;
        for (int k = 0; k < expected; k++) {
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, i, ic, MPI_STATUS_IGNORE);
            T_CHECK(v % lsize == lrank, "intercomm message during idups: %d", v);
        }
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }
    T_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++) {
        int res = -1, flag = 0, rs = -1;
        MPI_Comm_compare(ic, nc[i], &res);
        MPI_Comm_test_inter(nc[i], &flag);
        MPI_Comm_remote_size(nc[i], &rs);
        T_CHECK(res == MPI_CONGRUENT && flag && rs == rsize,
                "intercomm idup %d: compare %d, inter %d, remote size %d", i, res, flag, rs);
        /* leaders exchange on every new intercomm at once: their own contexts */
        if (lrank == 0) {
            int got = -1, sent = 100 * i + low;
            MPI_Sendrecv(&sent, 1, MPI_INT, 0, 4, &got, 1, MPI_INT, 0, 4, nc[i], MPI_STATUS_IGNORE);
            T_CHECK(got == 100 * i + !low, "intercomm idup %d: leader got %d", i, got);
        }
        int sum = -1;
        MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_SUM, nc[i]);
        T_CHECK(sum == rsize * (rsize - 1) / 2, "allreduce over intercomm idup %d: %d", i, sum);
    }
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&nc[i]);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kv;
    MPI_Comm_create_keyval(copy_cb, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    for (int round = 0; round < ROUNDS; round++) {
        outstanding(round, kv);
        before_peers();
        crossed();
    }
    inter();
    MPI_Comm_free_keyval(&kv);
    return t_finish();
}
