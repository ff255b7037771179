/* SPDX-License-Identifier: BSD-3-Clause */
/* Every group operation against a serial reference over plain arrays of
 * MPI_COMM_WORLD ranks: size, rank, union, intersection, difference, incl,
 * excl, range_incl, range_excl, translate_ranks and compare, on many
 * pseudo-random groups (random subsets in random orders, so both regular and
 * irregular rank maps), including MPI_GROUP_EMPTY. Groups are local objects:
 * each rank checks its own; the verdict is gathered at the end. */
#include "../comm/tutil.h"

static int wsize;
static MPI_Group world_group;
static unsigned long long seed = 12345;

static int rnd(int n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return n > 0 ? (int)((seed >> 33) % (unsigned long long)n) : 0;
}

typedef struct {
    int n;
    int r[64];
} ref_t;

/* The world ranks of g, by translation to the world group. */
static ref_t actual(MPI_Group g) {
    ref_t a;
    MPI_Group_size(g, &a.n);
    int idx[64];
    for (int i = 0; i < a.n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, a.n, idx, world_group, a.r);
    return a;
}

static int find(const ref_t *a, int w) {
    for (int i = 0; i < a->n; i++)
        if (a->r[i] == w)
            return i;
    return -1;
}

static void expect(MPI_Group g, const ref_t *ref, const char *what) {
    ref_t a = actual(g);
    int ok = a.n == ref->n;
    for (int i = 0; ok && i < a.n; i++)
        ok = a.r[i] == ref->r[i];
    if (!ok) {
        char buf[512];
        int off = snprintf(buf, sizeof(buf), "got [");
        for (int i = 0; i < a.n && off < 400; i++)
            off += snprintf(buf + off, sizeof(buf) - (size_t)off, "%d ", a.r[i]);
        off += snprintf(buf + off, sizeof(buf) - (size_t)off, "] expected [");
        for (int i = 0; i < ref->n && off < 480; i++)
            off += snprintf(buf + off, sizeof(buf) - (size_t)off, "%d ", ref->r[i]);
        T_CHECK(0, "%s: %s]", what, buf);
    }
    int rank, rref = find(ref, t_rank);
    MPI_Group_rank(g, &rank);
    T_CHECK(rank == (rref < 0 ? MPI_UNDEFINED : rref), "%s: rank %d, expected %d", what, rank,
            rref);
    if (ref->n == 0)
        T_CHECK(g == MPI_GROUP_EMPTY, "%s: an empty result should be MPI_GROUP_EMPTY", what);
}

/* A random group: a random subset of the world in random order. */
static ref_t random_ref(void) {
    ref_t a;
    int perm[64];
    for (int i = 0; i < wsize; i++)
        perm[i] = i;
    for (int i = wsize - 1; i > 0; i--) {
        int j = rnd(i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    a.n = rnd(wsize + 1);
    if (rnd(4) == 0) { /* sometimes in increasing order (affine maps) */
        int k = 0;
        for (int x = 0; x < wsize; x++) {
            for (int i = 0; i < a.n; i++)
                if (perm[i] == x)
                    a.r[k++] = x;
        }
        return a;
    }
    memcpy(a.r, perm, sizeof(int) * (size_t)a.n);
    return a;
}

static MPI_Group make(const ref_t *a) {
    MPI_Group g;
    T_OK(MPI_Group_incl(world_group, a->n, a->r, &g));
    return g;
}

static int ref_compare(const ref_t *a, const ref_t *b) {
    if (a->n != b->n)
        return MPI_UNEQUAL;
    int same = 1, set = 1;
    for (int i = 0; i < a->n; i++) {
        same &= a->r[i] == b->r[i];
        set &= find(b, a->r[i]) >= 0;
    }
    return same ? MPI_IDENT : set ? MPI_SIMILAR : MPI_UNEQUAL;
}

/* Random disjoint ranges over 0..n-1; *count ranges, ranks listed into out. */
static int random_ranges(int n, int ranges[][3], int *out) {
    int used[64] = {0}, nr = 0, m = 0;
    for (int tries = 0; tries < 6 && n > 0; tries++) {
        int first = rnd(n), last = rnd(n), stride = 1 + rnd(3);
        if (last < first)
            stride = -stride;
        int ok = 1, k = 0, tmp[64];
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            ok &= !used[r];
            tmp[k++] = r;
        }
        if (!ok)
            continue;
        for (int i = 0; i < k; i++) {
            used[tmp[i]] = 1;
            out[m++] = tmp[i];
        }
        ranges[nr][0] = first;
        ranges[nr][1] = last;
        ranges[nr][2] = stride;
        nr++;
    }
    out[63] = m;
    return nr;
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    seed += (unsigned)t_rank * 7919u;

    ref_t w = {wsize, {0}};
    for (int i = 0; i < wsize; i++)
        w.r[i] = i;
    expect(world_group, &w, "world group");
    ref_t e = {0, {0}};
    int sz, rk;
    MPI_Group_size(MPI_GROUP_EMPTY, &sz);
    MPI_Group_rank(MPI_GROUP_EMPTY, &rk);
    T_CHECK(sz == 0 && rk == MPI_UNDEFINED, "MPI_GROUP_EMPTY size %d rank %d", sz, rk);

    for (int iter = 0; iter < 300; iter++) {
        ref_t a = random_ref(), b = random_ref(), r;
        if (iter % 17 == 0)
            a = e;
        MPI_Group ga = a.n ? make(&a) : MPI_GROUP_EMPTY, gb = make(&b), g;
        expect(ga, &a, "incl (random)");

        /* union */
        r = a;
        for (int i = 0; i < b.n; i++)
            if (find(&a, b.r[i]) < 0)
                r.r[r.n++] = b.r[i];
        T_OK(MPI_Group_union(ga, gb, &g));
        expect(g, &r, "union");
        MPI_Group_free(&g);
        /* intersection */
        r.n = 0;
        for (int i = 0; i < a.n; i++)
            if (find(&b, a.r[i]) >= 0)
                r.r[r.n++] = a.r[i];
        T_OK(MPI_Group_intersection(ga, gb, &g));
        expect(g, &r, "intersection");
        MPI_Group_free(&g);
        /* difference */
        r.n = 0;
        for (int i = 0; i < a.n; i++)
            if (find(&b, a.r[i]) < 0)
                r.r[r.n++] = a.r[i];
        T_OK(MPI_Group_difference(ga, gb, &g));
        expect(g, &r, "difference");
        MPI_Group_free(&g);

        /* incl / excl of a random subset of a's ranks */
        int pick[64], np = 0, chosen[64] = {0};
        for (int i = 0; i < a.n; i++)
            if (rnd(2)) {
                int k = rnd(a.n);
                if (!chosen[k]) {
                    chosen[k] = 1;
                    pick[np++] = k;
                }
            }
        r.n = 0;
        for (int i = 0; i < np; i++)
            r.r[r.n++] = a.r[pick[i]];
        T_OK(MPI_Group_incl(ga, np, pick, &g));
        expect(g, &r, "incl");
        MPI_Group_free(&g);
        r.n = 0;
        for (int i = 0; i < a.n; i++)
            if (!chosen[i])
                r.r[r.n++] = a.r[i];
        T_OK(MPI_Group_excl(ga, np, pick, &g));
        expect(g, &r, "excl");
        MPI_Group_free(&g);

        /* range_incl / range_excl */
        int ranges[8][3], list[64];
        int nr = random_ranges(a.n, ranges, list), nl = list[63];
        int inr[64] = {0};
        r.n = 0;
        for (int i = 0; i < nl; i++) {
            r.r[r.n++] = a.r[list[i]];
            inr[list[i]] = 1;
        }
        T_OK(MPI_Group_range_incl(ga, nr, ranges, &g));
        expect(g, &r, "range_incl");
        MPI_Group_free(&g);
        r.n = 0;
        for (int i = 0; i < a.n; i++)
            if (!inr[i])
                r.r[r.n++] = a.r[i];
        T_OK(MPI_Group_range_excl(ga, nr, ranges, &g));
        expect(g, &r, "range_excl");
        MPI_Group_free(&g);

        /* translate every rank of a (and MPI_PROC_NULL) into b */
        int in[65], out[65];
        for (int i = 0; i < a.n; i++)
            in[i] = i;
        in[a.n] = MPI_PROC_NULL;
        T_OK(MPI_Group_translate_ranks(ga, a.n + 1, in, gb, out));
        for (int i = 0; i < a.n; i++) {
            int x = find(&b, a.r[i]);
            T_CHECK(out[i] == (x < 0 ? MPI_UNDEFINED : x), "translate %d -> %d, expected %d", i,
                    out[i], x);
        }
        T_CHECK(out[a.n] == MPI_PROC_NULL, "translate MPI_PROC_NULL -> %d", out[a.n]);

        /* compare, both ways, and with itself */
        int res;
        MPI_Group_compare(ga, gb, &res);
        T_CHECK(res == ref_compare(&a, &b), "compare %d, expected %d", res, ref_compare(&a, &b));
        MPI_Group_compare(gb, ga, &res);
        T_CHECK(res == ref_compare(&b, &a), "compare (swapped) %d", res);
        MPI_Group_compare(ga, ga, &res);
        T_CHECK(res == MPI_IDENT, "compare with itself %d", res);
        if (a.n > 1) { /* a reversed copy is similar */
            ref_t rev = a;
            for (int i = 0; i < a.n; i++)
                rev.r[i] = a.r[a.n - 1 - i];
            MPI_Group gr = make(&rev);
            MPI_Group_compare(ga, gr, &res);
            T_CHECK(res == MPI_SIMILAR, "compare with reversed %d", res);
            MPI_Group_free(&gr);
        }
        if (ga != MPI_GROUP_EMPTY)
            MPI_Group_free(&ga);
        MPI_Group_free(&gb);
    }
    /* freeing MPI_GROUP_EMPTY is allowed; the handle becomes MPI_GROUP_NULL */
    MPI_Group ge = MPI_GROUP_EMPTY;
    T_OK(MPI_Group_free(&ge));
    T_CHECK(ge == MPI_GROUP_NULL, "freed handle %#x", (unsigned)ge);
    MPI_Group_free(&world_group);
    return t_finish();
}
