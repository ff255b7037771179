/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives on an intercommunicator (MPI-3.1 §5.2.2) against references
 * computed serially from the world ranks of both groups: Barrier, Bcast,
 * Reduce, Allreduce, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce_scatter(_block), each blocking and as its I-form, with the root in
 * either group, and Bcast/Allreduce past the eager limit. Groups: even and odd
 * world ranks (odd splits at 3 and 5 ranks).
 */
#include "tutil.h"

#define BIGN 20000 /* ints: 80 KB */

static int n, m, me, color;
static int mine[8], other[8];

static int val(int w, int i) {
    return w * 100000 + i;
}

/* Run the blocking call, or the I-form and wait. */
#define COLL(_nb, _blocking, ...)                                                                  \
    do {                                                                                           \
        if (_nb) {                                                                                 \
            MPI_Request rq_;                                                                       \
            T_OK(__VA_ARGS__);                                                                     \
            T_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                               \
        } else {                                                                                   \
            T_OK(_blocking);                                                                       \
        }                                                                                          \
    } while (0)

/* root argument for a rooted collective whose root is local rank `r` of group `g` */
static int root_arg(int g, int r) {
    if (color == g)
        return me == r ? MPI_ROOT : MPI_PROC_NULL;
    return r;
}

static void bcast(MPI_Comm ic, int nb, int g, int r, int count) {
    int *buf = malloc(sizeof(int) * (size_t)count);
    int rw = g == color ? mine[r] : other[r];
    for (int i = 0; i < count; i++)
        buf[i] = (color == g && me == r) ? val(rw, i) : -1;
    int root = root_arg(g, r);
    COLL(nb, MPI_Bcast(buf, count, MPI_INT, root, ic),
         MPI_Ibcast(buf, count, MPI_INT, root, ic, &rq_));
    int bad = 0;
    for (int i = 0; i < count; i++) {
        int exp = color == g ? (me == r ? val(rw, i) : -1) : val(rw, i);
        bad += buf[i] != exp;
    }
    T_CHECK(bad == 0, "bcast nb=%d root %d/%d count %d: %d wrong", nb, g, r, count, bad);
    free(buf);
}

static void reduce(MPI_Comm ic, int nb, int g, int r) {
    int s[3], out[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++)
        s[i] = val(mine[me], i);
    int root = root_arg(g, r);
    COLL(nb, MPI_Reduce(s, out, 3, MPI_INT, MPI_SUM, root, ic),
         MPI_Ireduce(s, out, 3, MPI_INT, MPI_SUM, root, ic, &rq_));
    if (color == g && me == r) {
        for (int i = 0; i < 3; i++) {
            int exp = 0;
            for (int j = 0; j < m; j++)
                exp += val(other[j], i);
            T_CHECK(out[i] == exp, "reduce nb=%d [%d] %d expected %d", nb, i, out[i], exp);
        }
    } else {
        T_CHECK(out[0] == -1, "reduce nb=%d wrote at a non-root", nb);
    }
}

static void allreduce(MPI_Comm ic, int nb, int count) {
    int *s = malloc(sizeof(int) * (size_t)count), *o = malloc(sizeof(int) * (size_t)count);
    for (int i = 0; i < count; i++)
        s[i] = val(mine[me], i) % 1000003;
    COLL(nb, MPI_Allreduce(s, o, count, MPI_INT, MPI_MAX, ic),
         MPI_Iallreduce(s, o, count, MPI_INT, MPI_MAX, ic, &rq_));
    int bad = 0;
    for (int i = 0; i < count; i++) {
        int exp = -1;
        for (int j = 0; j < m; j++)
            if (val(other[j], i) % 1000003 > exp)
                exp = val(other[j], i) % 1000003;
        bad += o[i] != exp;
    }
    T_CHECK(bad == 0, "allreduce nb=%d count %d: %d wrong", nb, count, bad);
    /* a sum too */
    int x = mine[me] + 1, y = -1, exp = 0;
    for (int j = 0; j < m; j++)
        exp += other[j] + 1;
    COLL(nb, MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic),
         MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic, &rq_));
    T_CHECK(y == exp, "allreduce sum nb=%d: %d expected %d", nb, y, exp);
    free(s);
    free(o);
}

/* The layout of the blocks of the (all)gather and scatter tests, for up to 8
 * ranks a group: rank j's block has j+1 items after a one-item gap (v), or 2
 * items back to back. */
static void layout(int v, int *counts, int *displs) {
    int tot = 0;
    for (int j = 0; j < 8; j++) {
        counts[j] = v ? j + 1 : 2;
        displs[j] = tot + (v ? 1 : 0);
        tot = displs[j] + counts[j];
    }
}

/* The caller's block of that layout, filled from its world rank; its count. */
static int my_block(int v, int *s) {
    int cnt = v ? me + 1 : 2;
    for (int i = 0; i < cnt; i++)
        s[i] = val(mine[me], i);
    return cnt;
}

/* rbuf holds every remote rank's block in that layout. */
static void check_gathered(const char *what, int v, int nb, const int *rbuf, const int *rc,
                           const int *dis) {
    for (int j = 0; j < m; j++)
        for (int i = 0; i < rc[j]; i++)
            T_CHECK(rbuf[dis[j] + i] == val(other[j], i), "%s v=%d nb=%d [%d][%d] %d", what, v, nb,
                    j, i, rbuf[dis[j] + i]);
}

/* root: local rank r of group g; the other group's rank j sends j+1 items (v) or 2. */
static void gather(MPI_Comm ic, int nb, int g, int r, int v) {
    int s[8], rbuf[64], rc[8], dis[8];
    int cnt = my_block(v, s);
    layout(v, rc, dis);
    for (int i = 0; i < 64; i++)
        rbuf[i] = -7;
    int root = root_arg(g, r);
    if (v)
        COLL(nb, MPI_Gatherv(s, cnt, MPI_INT, rbuf, rc, dis, MPI_INT, root, ic),
             MPI_Igatherv(s, cnt, MPI_INT, rbuf, rc, dis, MPI_INT, root, ic, &rq_));
    else
        COLL(nb, MPI_Gather(s, cnt, MPI_INT, rbuf, 2, MPI_INT, root, ic),
             MPI_Igather(s, cnt, MPI_INT, rbuf, 2, MPI_INT, root, ic, &rq_));
    if (color == g && me == r) {
        check_gathered("gather", v, nb, rbuf, rc, dis);
        if (v)
            T_CHECK(rbuf[0] == -7, "gatherv wrote into a gap");
    }
}

static void scatter(MPI_Comm ic, int nb, int g, int r, int v) {
    int s[64], rbuf[8], sc[8], dis[8];
    layout(v, sc, dis);
    int rw = g == color ? mine[r] : other[r];
    for (int i = 0; i < 64; i++)
        s[i] = val(rw, i);
    for (int i = 0; i < 8; i++)
        rbuf[i] = -7;
    int root = root_arg(g, r), cnt = v ? me + 1 : 2;
    if (v)
        COLL(nb, MPI_Scatterv(s, sc, dis, MPI_INT, rbuf, cnt, MPI_INT, root, ic),
             MPI_Iscatterv(s, sc, dis, MPI_INT, rbuf, cnt, MPI_INT, root, ic, &rq_));
    else
        COLL(nb, MPI_Scatter(s, 2, MPI_INT, rbuf, cnt, MPI_INT, root, ic),
             MPI_Iscatter(s, 2, MPI_INT, rbuf, cnt, MPI_INT, root, ic, &rq_));
    if (color != g) {
        for (int i = 0; i < cnt; i++)
            T_CHECK(rbuf[i] == val(rw, dis[me] + i), "scatter v=%d nb=%d [%d] %d expected %d", v,
                    nb, i, rbuf[i], val(rw, dis[me] + i));
    } else {
        T_CHECK(rbuf[0] == -7, "scatter wrote into the root group's receive buffer");
    }
}

static void allgather(MPI_Comm ic, int nb, int v) {
    int s[8], rbuf[64], rc[8], dis[8];
    int cnt = my_block(v, s);
    layout(v, rc, dis);
    for (int i = 0; i < 64; i++)
        rbuf[i] = -7;
    if (v)
        COLL(nb, MPI_Allgatherv(s, cnt, MPI_INT, rbuf, rc, dis, MPI_INT, ic),
             MPI_Iallgatherv(s, cnt, MPI_INT, rbuf, rc, dis, MPI_INT, ic, &rq_));
    else
        COLL(nb, MPI_Allgather(s, cnt, MPI_INT, rbuf, 2, MPI_INT, ic),
             MPI_Iallgather(s, cnt, MPI_INT, rbuf, 2, MPI_INT, ic, &rq_));
    check_gathered("allgather", v, nb, rbuf, rc, dis);
}

/* form 0: 2 items per peer; 1 (v) and 2 (w): (sender + receiver) % 3 + 1 items */
static void alltoall(MPI_Comm ic, int nb, int form) {
    int s[64], rbuf[64], sc[8], sd[8], rc[8], rd[8], sdb[8], rdb[8], st = 0, rt = 0;
    MPI_Datatype ty[8];
    for (int j = 0; j < m; j++) {
        sc[j] = form ? (me + j) % 3 + 1 : 2;
        rc[j] = form ? (j + me) % 3 + 1 : 2;
        sd[j] = form ? st + 1 : st;
        rd[j] = form ? rt + 1 : rt;
        sdb[j] = sd[j] * (int)sizeof(int);
        rdb[j] = rd[j] * (int)sizeof(int);
        ty[j] = MPI_INT;
        for (int k = 0; k < sc[j]; k++)
            s[sd[j] + k] = val(mine[me], j * 10 + k);
        st = sd[j] + sc[j];
        rt = rd[j] + rc[j];
    }
    for (int i = 0; i < 64; i++)
        rbuf[i] = -7;
    if (form == 0)
        COLL(nb, MPI_Alltoall(s, 2, MPI_INT, rbuf, 2, MPI_INT, ic),
             MPI_Ialltoall(s, 2, MPI_INT, rbuf, 2, MPI_INT, ic, &rq_));
    else if (form == 1)
        COLL(nb, MPI_Alltoallv(s, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic),
             MPI_Ialltoallv(s, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic, &rq_));
    else
        COLL(nb, MPI_Alltoallw(s, sc, sdb, ty, rbuf, rc, rdb, ty, ic),
             MPI_Ialltoallw(s, sc, sdb, ty, rbuf, rc, rdb, ty, ic, &rq_));
    for (int j = 0; j < m; j++)
        for (int k = 0; k < rc[j]; k++)
            T_CHECK(rbuf[rd[j] + k] == val(other[j], me * 10 + k),
                    "alltoall form %d nb=%d from %d [%d]: %d expected %d", form, nb, j, k,
                    rbuf[rd[j] + k], val(other[j], me * 10 + k));
}

/* Every process holds T = 2 * n * m items; the result scattered over the local
 * group is the sum over the remote group. Block form: 2 * m each; v form:
 * uneven counts with the same total. */
static void red_scatter(MPI_Comm ic, int nb, int v) {
    int T = 2 * n * m;
    int *s = malloc(sizeof(int) * (size_t)T), rc[8], off = 0, myoff = 0;
    for (int i = 0; i < T; i++)
        s[i] = val(mine[me], i);
    for (int i = 0; i < n; i++) {
        rc[i] = 2 * m;
        if (v && n > 1)
            rc[i] += i == 0 ? 1 : i == n - 1 ? -1 : 0;
        if (i == me)
            myoff = off;
        off += rc[i];
    }
    int out[64];
    for (int i = 0; i < 64; i++)
        out[i] = -7;
    if (v)
        COLL(nb, MPI_Reduce_scatter(s, out, rc, MPI_INT, MPI_SUM, ic),
             MPI_Ireduce_scatter(s, out, rc, MPI_INT, MPI_SUM, ic, &rq_));
    else
        COLL(nb, MPI_Reduce_scatter_block(s, out, 2 * m, MPI_INT, MPI_SUM, ic),
             MPI_Ireduce_scatter_block(s, out, 2 * m, MPI_INT, MPI_SUM, ic, &rq_));
    for (int i = 0; i < rc[me]; i++) {
        int exp = 0;
        for (int j = 0; j < m; j++)
            exp += val(other[j], myoff + i);
        T_CHECK(out[i] == exp, "reduce_scatter v=%d nb=%d [%d]: %d expected %d", v, nb, i, out[i],
                exp);
    }
    T_CHECK(out[rc[me]] == -7, "reduce_scatter wrote past its block");
    free(s);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int ws;
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (ws < 2 || ws > 16) {
        MPI_Finalize();
        return 77;
    }
    color = t_rank % 2;
    n = m = 0;
    for (int r = 0; r < ws; r++) {
        if (r % 2 == color)
            mine[n++] = r;
        else
            other[m++] = r;
    }
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local);
    MPI_Comm_rank(local, &me);
    T_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 42, &ic));
    for (int nb = 0; nb < 2; nb++) {
        COLL(nb, MPI_Barrier(ic), MPI_Ibarrier(ic, &rq_));
        for (int g = 0; g < 2; g++) {
            int gn = g == color ? n : m;
            bcast(ic, nb, g, gn - 1, 5);
            bcast(ic, nb, g, 0, BIGN);
            reduce(ic, nb, g, gn - 1);
            gather(ic, nb, g, 0, 0);
            gather(ic, nb, g, gn - 1, 1);
            scatter(ic, nb, g, gn - 1, 0);
            scatter(ic, nb, g, 0, 1);
        }
        allreduce(ic, nb, 7);
        allreduce(ic, nb, BIGN);
        allgather(ic, nb, 0);
        allgather(ic, nb, 1);
        for (int f = 0; f < 3; f++)
            alltoall(ic, nb, f);
        red_scatter(ic, nb, 0);
        red_scatter(ic, nb, 1);
    }
    /* a dup'ed intercomm has its own collective context */
    MPI_Comm dup;
    T_OK(MPI_Comm_dup(ic, &dup));
    allreduce(dup, 0, 7);
    bcast(dup, 1, 1, 0, 5);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return t_finish();
}
