/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intercommunicators (MPI-3.1 §6.6): MPI_Intercomm_create from two splits of
 * MPI_COMM_WORLD (even/odd ranks with leaders at local rank 0; {0} / the rest
 * with leaders at the last local rank), then on each: sizes, remote groups,
 * point-to-point both ways (ANY_SOURCE, status, Isend/Irecv, rendezvous-sized,
 * probe), merge with every high combination, dup, compare, split, create, and
 * argument errors with MPI_ERRORS_RETURN. References are computed serially
 * from the world ranks of both groups.
 */
#include "tutil.h"

#define BIG (100 * 1000) /* ints: 400 KB, well past the eager limit */

static int world_size;

/* Group of world rank r in split mode `mode`. */
static int color_of(int mode, int r) {
    return mode == 0 ? r % 2 : r != 0;
}

/* World ranks of group `color` in order (split key = world rank); count. */
static int group_list(int mode, int color, int *out) {
    int n = 0;
    for (int r = 0; r < world_size; r++)
        if (color_of(mode, r) == color)
            out[n++] = r;
    return n;
}

static void check_group(MPI_Group g, const int *world, int n, const char *what) {
    int gs;
    MPI_Group wg;
    MPI_Group_size(g, &gs);
    T_CHECK(gs == n, "%s size %d, expected %d", what, gs, n);
    if (gs != n)
        return;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc(sizeof(int) * (size_t)n), *tr = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, wg, tr);
    for (int i = 0; i < n; i++)
        T_CHECK(tr[i] == world[i], "%s rank %d is world %d, expected %d", what, i, tr[i], world[i]);
    MPI_Group_free(&wg);
    free(idx);
    free(tr);
}

/* c's local group is world ranks mine (n), its remote group other (m), and
 * the caller is not in the remote group. what prefixes the messages. */
static void check_groups(MPI_Comm c, const int *mine, int n, const int *other, int m,
                         const char *what) {
    char name[64];
    MPI_Group g;
    MPI_Comm_group(c, &g);
    snprintf(name, sizeof(name), "%slocal group", what);
    check_group(g, mine, n, name);
    MPI_Group_free(&g);
    MPI_Comm_remote_group(c, &g);
    snprintf(name, sizeof(name), "%sremote group", what);
    check_group(g, other, m, name);
    int grank;
    MPI_Group_rank(g, &grank);
    T_CHECK(grank == MPI_UNDEFINED, "caller's rank in the %s %d", name, grank);
    MPI_Group_free(&g);
}

/* Every process sends to remote rank (i % m) messages {world, local rank, k} with
 * tag 10 + k; every process receives those meant for it with ANY_SOURCE/ANY_TAG. */
static void p2p_any(MPI_Comm ic, const int *remote) {
    int n, m, me;
    MPI_Comm_size(ic, &n);
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &m);
    MPI_Request rq[2];
    int out[2][3];
    for (int k = 0; k < 2; k++) {
        out[k][0] = t_rank;
        out[k][1] = me;
        out[k][2] = k;
        T_OK(MPI_Isend(out[k], 3, MPI_INT, (me + k) % m, 10 + k, ic, &rq[k]));
    }
    /* remote i sends message k to local (i + k) % n */
    int expect = 0;
    for (int i = 0; i < m; i++)
        for (int k = 0; k < 2; k++)
            expect += (i + k) % n == me;
    for (int e = 0; e < expect; e++) {
        int in[3];
        MPI_Status st;
        T_OK(MPI_Recv(in, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st));
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        T_CHECK(cnt == 3, "count %d", cnt);
        T_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < m, "source %d", st.MPI_SOURCE);
        if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= m)
            continue;
        T_CHECK(in[1] == st.MPI_SOURCE, "status source %d, sender says local rank %d",
                st.MPI_SOURCE, in[1]);
        T_CHECK(in[0] == remote[st.MPI_SOURCE], "sender world %d, remote rank %d is world %d",
                in[0], st.MPI_SOURCE, remote[st.MPI_SOURCE]);
        T_CHECK(st.MPI_TAG == 10 + in[2], "tag %d for message %d", st.MPI_TAG, in[2]);
        T_CHECK((st.MPI_SOURCE + in[2]) % n == me, "misrouted message from %d", st.MPI_SOURCE);
    }
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    /* nobody sends the next phase's messages (which ANY_TAG would take) before
     * everybody has received this one's */
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Local rank 0 of each group swaps BIG ints with remote rank 0 (Isend/Irecv);
 * then local rank 0 sends to every remote rank, which probes with ANY_SOURCE. */
static void p2p_big(MPI_Comm ic, const int *remote) {
    int me, m;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &m);
    if (me == 0) {
        int *s = malloc(sizeof(int) * BIG), *r = malloc(sizeof(int) * BIG);
        for (int i = 0; i < BIG; i++) {
            s[i] = t_rank * 1000003 + i;
            r[i] = -1;
        }
        MPI_Request rq[2];
        MPI_Status st[2];
        T_OK(MPI_Irecv(r, BIG, MPI_INT, 0, 5, ic, &rq[0]));
        T_OK(MPI_Isend(s, BIG, MPI_INT, 0, 5, ic, &rq[1]));
        T_OK(MPI_Waitall(2, rq, st));
        T_CHECK(st[0].MPI_SOURCE == 0 && st[0].MPI_TAG == 5, "big status %d/%d", st[0].MPI_SOURCE,
                st[0].MPI_TAG);
        int bad = 0;
        for (int i = 0; i < BIG; i++)
            bad += r[i] != remote[0] * 1000003 + i;
        T_CHECK(bad == 0, "%d wrong ints in the rendezvous message", bad);
        free(s);
        free(r);
    }
    /* probe: local rank 0 sends one message to every remote rank; each probes it */
    if (me == 0)
        for (int i = 0; i < m; i++)
            T_OK(MPI_Send(&i, 1, MPI_INT, i, 6, ic));
    MPI_Status st;
    T_OK(MPI_Probe(MPI_ANY_SOURCE, 6, ic, &st));
    T_CHECK(st.MPI_SOURCE == 0, "probe source %d", st.MPI_SOURCE);
    int v = -1;
    T_OK(MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 6, ic, &st));
    T_CHECK(v == me, "probe message %d, expected %d", v, me);
}

/* The world ranks of merged's members in rank order, via point-to-point. */
static void merged_order(MPI_Comm merged, int *out) {
    t_allgather_ints(merged, &t_rank, 1, out);
}

static void check_merge(MPI_Comm ic, int color, const int *mine, int n, const int *other, int m) {
    for (int hi = 0; hi < 4; hi++) {
        /* hi bit 0: group 0's high, bit 1: group 1's */
        int high = color == 0 ? (hi & 1) : (hi >> 1) & 1;
        int other_high = color == 0 ? (hi >> 1) & 1 : (hi & 1);
        MPI_Comm mc;
        T_OK(MPI_Intercomm_merge(ic, high, &mc));
        int flag = 1, size, rank;
        MPI_Comm_test_inter(mc, &flag);
        MPI_Comm_size(mc, &size);
        MPI_Comm_rank(mc, &rank);
        T_CHECK(!flag && size == n + m, "merged: inter %d size %d", flag, size);
        int *w = malloc(sizeof(int) * (size_t)(n + m));
        merged_order(mc, w);
        int first_local; /* which group is first */
        if (high != other_high)
            first_local = !high;
        else
            first_local = w[0] == mine[0]; /* either, as long as all agree */
        const int *a = first_local ? mine : other, *b = first_local ? other : mine;
        int na = first_local ? n : m;
        for (int i = 0; i < n + m; i++) {
            int exp = i < na ? a[i] : b[i - na];
            T_CHECK(w[i] == exp, "merge high=%d/%d: rank %d is world %d, expected %d", high,
                    other_high, i, w[i], exp);
        }
        /* the merged intracomm works for collectives */
        int sum = 0, one = t_rank;
        T_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, mc));
        T_CHECK(sum == (n + m) * (n + m - 1) / 2, "allreduce on merged: %d", sum);
        free(w);
        MPI_Comm_free(&mc);
    }
}

/* split of the intercomm by local parity, key = -rank: remote side = remote
 * ranks of the same parity, reversed. */
static void check_split(MPI_Comm ic, const int *mine, int n, const int *other, int m) {
    int me;
    MPI_Comm_rank(ic, &me);
    MPI_Comm sc;
    T_OK(MPI_Comm_split(ic, me % 2, -me, &sc));
    int cnt_remote = (m + 1 - me % 2) / 2, cnt_local = (n + 1 - me % 2) / 2;
    if (cnt_remote == 0) {
        T_CHECK(sc == MPI_COMM_NULL, "split: no remote members of color %d, yet a communicator",
                me % 2);
        if (sc != MPI_COMM_NULL)
            MPI_Comm_free(&sc);
        return;
    }
    T_CHECK(sc != MPI_COMM_NULL, "split: no communicator for color %d", me % 2);
    if (sc == MPI_COMM_NULL)
        return;
    int flag, ls, rs, lr;
    MPI_Comm_test_inter(sc, &flag);
    MPI_Comm_size(sc, &ls);
    MPI_Comm_remote_size(sc, &rs);
    MPI_Comm_rank(sc, &lr);
    T_CHECK(flag && ls == cnt_local && rs == cnt_remote, "split: inter %d sizes %d/%d", flag, ls,
            rs);
    /* reversed order: local rank of me = number of same-parity ranks above me */
    int exp_rank = 0;
    for (int i = me + 2; i < n; i += 2)
        exp_rank++;
    T_CHECK(lr == exp_rank, "split: rank %d expected %d", lr, exp_rank);
    int *rw = malloc(sizeof(int) * (size_t)rs), k = 0;
    for (int i = m - 1; i >= 0; i--)
        if (i % 2 == me % 2)
            rw[k++] = other[i];
    MPI_Group rg;
    MPI_Comm_remote_group(sc, &rg);
    check_group(rg, rw, rs, "split remote group");
    MPI_Group_free(&rg);
    /* p2p on the split: everyone sends its world rank to every remote rank */
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)rs);
    for (int i = 0; i < rs; i++)
        MPI_Isend(&t_rank, 1, MPI_INT, i, 1, sc, &rq[i]);
    for (int i = 0; i < rs; i++) {
        int v;
        MPI_Status st;
        T_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, sc, &st));
        T_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rs && v == rw[st.MPI_SOURCE],
                "split p2p: from %d got world %d", st.MPI_SOURCE, v);
    }
    MPI_Waitall(rs, rq, MPI_STATUSES_IGNORE);
    free(rq);
    free(rw);
    (void)mine;
    MPI_Comm_free(&sc);
}

/* Comm_create on the intercomm: each side keeps all but its last rank (if it
 * has more than one). */
static void check_create(MPI_Comm ic, const int *mine, int n, const int *other, int m) {
    int me;
    MPI_Comm_rank(ic, &me);
    MPI_Group lg, sub;
    MPI_Comm_group(ic, &lg);
    int keep = n > 1 ? n - 1 : 1, rkeep = m > 1 ? m - 1 : 1;
    int range[1][3] = {{0, keep - 1, 1}};
    MPI_Group_range_incl(lg, 1, range, &sub);
    MPI_Comm cc;
    T_OK(MPI_Comm_create(ic, sub, &cc));
    if (me >= keep) {
        T_CHECK(cc == MPI_COMM_NULL, "create: not a member, yet a communicator");
    } else {
        T_CHECK(cc != MPI_COMM_NULL, "create: member without a communicator");
        if (cc != MPI_COMM_NULL) {
            int ls, rs, flag;
            MPI_Comm_test_inter(cc, &flag);
            MPI_Comm_size(cc, &ls);
            MPI_Comm_remote_size(cc, &rs);
            T_CHECK(flag && ls == keep && rs == rkeep, "create: inter %d sizes %d/%d", flag, ls,
                    rs);
            check_groups(cc, mine, keep, other, rkeep, "create ");
            MPI_Comm_free(&cc);
        }
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);
}

static void check_errors(MPI_Comm local, MPI_Comm ic, int color, int m) {
    int me;
    MPI_Comm_rank(local, &me);
    MPI_Comm bad;
    int r;
    MPI_Group g;
    T_FAILS(MPI_ERR_COMM, MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &bad));
    int ls;
    MPI_Comm_size(local, &ls);
    T_FAILS(MPI_ERR_RANK, MPI_Intercomm_create(local, ls, MPI_COMM_WORLD, 0, 1, &bad));
    T_FAILS(MPI_ERR_RANK, MPI_Intercomm_create(local, -1, MPI_COMM_WORLD, 0, 1, &bad));
    /* errors found by the leader only: every local rank returns the leader's class */
    T_FAILS(MPI_ERR_COMM,
            MPI_Intercomm_create(local, 0, me == 0 ? MPI_COMM_NULL : MPI_COMM_WORLD, 1, 1, &bad));
    T_FAILS(MPI_ERR_RANK, MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, world_size, 1, &bad));
    T_FAILS(MPI_ERR_RANK, MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, t_rank, 1, &bad));
    T_FAILS(MPI_ERR_TAG, MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, -5, &bad));
    T_FAILS(MPI_ERR_COMM, MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_remote_size(local, &r));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_remote_group(MPI_COMM_WORLD, &g));
    /* MPI-4 defines split_type on an intercommunicator (comm/split_hw tests it) */
    T_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &bad));
    if (bad != MPI_COMM_NULL)
        MPI_Comm_free(&bad);
    MPI_Comm_group(ic, &g);
    T_FAILS(MPI_ERR_COMM, MPI_Comm_create_group(ic, g, 0, &bad));
    MPI_Group_free(&g);
    T_FAILS(MPI_ERR_RANK, MPI_Send(&r, 1, MPI_INT, m, 0, ic));
    T_FAILS(MPI_ERR_RANK, MPI_Recv(&r, 1, MPI_INT, m, 0, ic, MPI_STATUS_IGNORE));
    int x = 1, y;
    T_FAILS(MPI_ERR_COMM, MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic));
    T_FAILS(MPI_ERR_COMM, MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, ic));
    T_FAILS(MPI_ERR_ROOT, MPI_Bcast(&x, 1, MPI_INT, m, ic));
    T_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic));
}

static void run(int mode) {
    int color = color_of(mode, t_rank);
    int *mine = malloc(sizeof(int) * (size_t)world_size);
    int *other = malloc(sizeof(int) * (size_t)world_size);
    int n = group_list(mode, color, mine), m = group_list(mode, !color, other);
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local);
    /* mode 0: leaders are local rank 0; mode 1: the last local rank */
    int leader = mode == 0 ? 0 : n - 1, rleader = mode == 0 ? other[0] : other[m - 1];
    /* the leaders exchange on the peer comm with the call's tag only: a message
     * already waiting between them with another tag is left for the user */
    int lrank0, early[2] = {t_rank, 99}, got[2] = {-1, -1};
    MPI_Request ereq = MPI_REQUEST_NULL;
    MPI_Comm_rank(local, &lrank0);
    if (lrank0 == leader)
        MPI_Isend(early, 2, MPI_INT, rleader, 99, MPI_COMM_WORLD, &ereq);
    T_OK(MPI_Intercomm_create(local, leader, MPI_COMM_WORLD, rleader, 100 + mode, &ic));
    if (lrank0 == leader) {
        T_OK(MPI_Recv(got, 2, MPI_INT, rleader, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        T_CHECK(got[0] == rleader && got[1] == 99, "user message on peer_comm: %d %d", got[0],
                got[1]);
        MPI_Wait(&ereq, MPI_STATUS_IGNORE);
    }
    int flag = 0, size, rank, rsize;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &size);
    MPI_Comm_rank(ic, &rank);
    MPI_Comm_remote_size(ic, &rsize);
    int lrank;
    MPI_Comm_rank(local, &lrank);
    T_CHECK(flag, "test_inter says intra");
    T_CHECK(size == n && rank == lrank && rsize == m, "size %d rank %d remote %d", size, rank,
            rsize);
    MPI_Comm_test_inter(local, &flag);
    T_CHECK(!flag, "test_inter on an intracomm");
    check_groups(ic, mine, n, other, m, "");

    p2p_any(ic, other);
    p2p_big(ic, other);

    MPI_Comm dup;
    T_OK(MPI_Comm_dup(ic, &dup));
    int res;
    MPI_Comm_compare(ic, dup, &res);
    T_CHECK(res == MPI_CONGRUENT, "compare(ic, dup) %d", res);
    MPI_Comm_compare(ic, ic, &res);
    T_CHECK(res == MPI_IDENT, "compare(ic, ic) %d", res);
    MPI_Comm_compare(ic, local, &res);
    T_CHECK(res == MPI_UNEQUAL, "compare(ic, local) %d", res);
    MPI_Comm_test_inter(dup, &flag);
    T_CHECK(flag, "dup of an intercomm is not inter");
    p2p_any(dup, other);
    /* messages on ic and dup do not mix: send on dup first, receive on ic first */
    if (rank == 0) {
        int a = 1, b = 2;
        MPI_Send(&a, 1, MPI_INT, 0, 3, dup);
        MPI_Send(&b, 1, MPI_INT, 0, 3, ic);
        MPI_Recv(&b, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
        MPI_Recv(&a, 1, MPI_INT, 0, 3, dup, MPI_STATUS_IGNORE);
        T_CHECK(a == 1 && b == 2, "contexts mixed: dup got %d, ic got %d", a, b);
    }

    check_merge(ic, color, mine, n, other, m);
    check_split(ic, mine, n, other, m);
    check_create(ic, mine, n, other, m);

    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    check_errors(local, ic, color, m);
    /* the intercomm still works after the errors */
    p2p_any(ic, other);

    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    free(mine);
    free(other);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size < 2) {
        MPI_Finalize();
        return 77;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    run(0);
    run(1);
    return t_finish();
}
