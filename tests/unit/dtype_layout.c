/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype layouts: the shape of the layout program each constructor builds
 * (merging, strided forms instead of segment lists), and pack/unpack/iovec over
 * arbitrary byte windows compared with a reference that expands every type
 * into the list of its bytes from the constructor definitions alone.
 */
#include "dtype/dtype.h"
#include "dtype/dtype_impl.h"
#include "mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (_cond) {                                                                               \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* ---- reference: a type as the list of its data bytes' offsets ---- */

typedef struct ref {
    size_t n;
    ptrdiff_t *off;
} ref_t;

static ref_t ref_basic(size_t size) {
    ref_t r = {size, malloc((size ? size : 1) * sizeof(ptrdiff_t))};
    for (size_t i = 0; i < size; i++)
        r.off[i] = (ptrdiff_t)i;
    return r;
}

/* blocks: n blocks of bl[i] items of r (extent ext) at disp[i] */
static ref_t ref_blocks(size_t n, const size_t *bl, const ptrdiff_t *disp, const ref_t *r,
                        ptrdiff_t ext) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += bl[i] * r->n;
    ref_t o = {0, malloc((total ? total : 1) * sizeof(ptrdiff_t))};
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < bl[i]; j++)
            for (size_t k = 0; k < r->n; k++)
                o.off[o.n++] = disp[i] + (ptrdiff_t)j * ext + r->off[k];
    return o;
}

static ref_t ref_vector(size_t count, size_t bl, ptrdiff_t stride, const ref_t *r, ptrdiff_t ext) {
    size_t *b = malloc((count ? count : 1) * sizeof(size_t));
    ptrdiff_t *d = malloc((count ? count : 1) * sizeof(ptrdiff_t));
    for (size_t i = 0; i < count; i++) {
        b[i] = bl;
        d[i] = (ptrdiff_t)i * stride;
    }
    ref_t o = ref_blocks(count, b, d, r, ext);
    free(b);
    free(d);
    return o;
}

/* ---- checks ---- */

static unsigned rnd_state = 12345;
static unsigned rnd(void) {
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

/* Pack, unpack and iovecs of `count` items over many windows vs the reference. */
static void check_windows(const char *name, tdm_dtype_t *dt, const ref_t *r, size_t count) {
    CHECK(dt->size == r->n, "%s: size %zu, reference %zu", name, dt->size, r->n);
    if (dt->size != r->n)
        return;
    ptrdiff_t ext = tdm_dtype_extent(dt);
    ptrdiff_t lo = 0, hi = 1;
    for (size_t k = 0; k < r->n; k++) {
        for (size_t c = 0; c < count; c += count - 1 ? count - 1 : 1) {
            ptrdiff_t o = r->off[k] + (ptrdiff_t)c * ext;
            lo = o < lo ? o : lo;
            hi = o + 1 > hi ? o + 1 : hi;
        }
    }
    size_t span = (size_t)(hi - lo);
    unsigned char *mem = malloc(span), *mem2 = malloc(span);
    char *base = (char *)mem - lo, *base2 = (char *)mem2 - lo;
    for (size_t i = 0; i < span; i++)
        mem[i] = (unsigned char)(rnd() & 0xff);
    size_t total = count * dt->size;
    unsigned char *want = malloc(total + 1), *got = malloc(total + 1);
    for (size_t s = 0; s < total; s++)
        want[s] = (unsigned char)base[(ptrdiff_t)(s / dt->size) * ext + r->off[s % dt->size]];

    int bad_pack = 0, bad_unpack = 0, bad_iov = 0;
    for (int trial = 0; trial < 200 && total; trial++) {
        size_t off = trial == 0 ? 0 : rnd() % total;
        size_t len = trial == 0 ? total : 1 + rnd() % (total - off);
        memset(got, 0xee, total);
        tdm_dtype_pack(base, count, dt, off, got, len);
        if (memcmp(got, want + off, len))
            bad_pack++;
        /* unpack the window into a copy of memory and compare byte by byte */
        memcpy(mem2, mem, span);
        unsigned char *fill = malloc(len);
        for (size_t i = 0; i < len; i++)
            fill[i] = (unsigned char)(want[off + i] ^ 0x5a);
        tdm_dtype_unpack(base2, count, dt, off, fill, len);
        for (size_t s = off; s < off + len; s++) {
            ptrdiff_t m = (ptrdiff_t)(s / dt->size) * ext + r->off[s % dt->size];
            if ((unsigned char)base2[m] != (unsigned char)(want[s] ^ 0x5a))
                bad_unpack++;
            base2[m] = base[m]; /* restore so untouched bytes compare equal below */
        }
        if (memcmp(mem, mem2, span))
            bad_unpack++;
        free(fill);
        /* iovecs, with a small array to force resumption */
        struct iovec iov[3];
        size_t at = off, end = off + len, pos = 0;
        while (at < end) {
            size_t used;
            int n = tdm_dtype_iov(base, count, dt, at, end - at, iov, 3, &used);
            if (n <= 0 || used == 0) {
                bad_iov++;
                break;
            }
            for (int i = 0; i < n; i++) {
                if (memcmp(iov[i].iov_base, want + off + pos, iov[i].iov_len))
                    bad_iov++;
                pos += iov[i].iov_len;
            }
            at += used;
        }
        if (pos != len)
            bad_iov++;
        /* the same from a copy of the flat program, as a peer that read it by CMA */
        void *copy = malloc(dt->flat_len);
        memcpy(copy, dt->flat, dt->flat_len);
        size_t isz = 0;
        if (tdm_dtype_flat_check(copy, dt->flat_len, &isz) != 0 || isz != dt->size)
            bad_iov++;
        at = off;
        pos = 0;
        while (at < end) {
            size_t used;
            int n = tdm_dtype_iov_remote(copy, (uintptr_t)base, count, ext, at, end - at, iov, 3,
                                         &used);
            if (n <= 0 || used == 0) {
                bad_iov++;
                break;
            }
            for (int i = 0; i < n; i++) {
                if (memcmp(iov[i].iov_base, want + off + pos, iov[i].iov_len))
                    bad_iov++;
                pos += iov[i].iov_len;
            }
            at += used;
        }
        if (pos != len)
            bad_iov++;
        free(copy);
    }
    CHECK(!bad_pack, "%s: %d pack windows differ", name, bad_pack);
    CHECK(!bad_unpack, "%s: %d unpack errors", name, bad_unpack);
    CHECK(!bad_iov, "%s: %d iovec errors", name, bad_iov);
    free(mem);
    free(mem2);
    free(want);
    free(got);
}

static tdm_dtype_t *T(int handle) {
    return tdm_dtype_get(handle);
}

static void commit(tdm_dtype_t *dt) {
    tdm_dtype_commit(dt);
}

/* ---- shapes ---- */

static void test_shapes(void) {
    tdm_dtype_t *dbl = T(MPI_DOUBLE), *t, *u;
    char dump[1024];

    /* every other double, a million blocks: one strided node, not a million segments */
    tdm_dtype_create_hvector(1000000, 1, 16, dbl, &t);
    commit(t);
    CHECK(t->layout->kind == TDM_DN_REPEAT && t->layout->u.r.count == 1000000 &&
              t->layout->u.r.stride == 16 && t->layout->u.r.child->kind == TDM_DN_SEGS &&
              t->layout->u.r.child->u.s.n == 1,
          "vector of a million blocks is one repeat node");
    CHECK(tdm_dn_count(t->layout) == 2, "vector: 2 layout nodes, got %zu", tdm_dn_count(t->layout));
    CHECK(t->segs == NULL && t->nsegs == 0, "large type keeps no segment list");
    CHECK(!t->contig, "vector is not contiguous");
    tdm_dtype_release(t);

    /* contiguous of contiguous: one segment */
    tdm_dtype_create_contig(10, dbl, &t);
    tdm_dtype_create_contig(7, t, &u);
    commit(u);
    CHECK(u->contig && u->nsegs == 1 && u->segs[0].len == 560, "contig of contig is one segment");
    tdm_dtype_release(t);
    tdm_dtype_release(u);

    /* a vector whose stride equals its block: contiguous */
    tdm_dtype_create_hvector(100, 3, 24, dbl, &t);
    commit(t);
    CHECK(t->contig && t->nsegs == 1 && t->segs[0].len == 2400, "tiling vector merges");
    tdm_dtype_release(t);

    /* indexed blocks that touch merge into one segment */
    size_t bl[3] = {2, 1, 3};
    ptrdiff_t d[3] = {0, 16, 24};
    tdm_dtype_create_hindexed(3, bl, 0, d, dbl, &t);
    commit(t);
    CHECK(t->nsegs == 1 && t->segs[0].len == 48, "adjacent indexed blocks merge (nsegs %zu)",
          t->nsegs);
    tdm_dtype_release(t);

    /* indexed blocks with a regular pattern become a strided node */
    size_t n = 1000;
    ptrdiff_t *dd = malloc(n * sizeof(*dd));
    for (size_t i = 0; i < n; i++)
        dd[i] = (ptrdiff_t)i * 40;
    tdm_dtype_create_hindexed(n, NULL, 2, dd, dbl, &t);
    commit(t);
    CHECK(t->layout->kind == TDM_DN_REPEAT && t->layout->u.r.count == n,
          "regular indexed_block becomes a repeat");
    tdm_dtype_release(t);

    /* irregular indexed stays a segment list with prefix sums */
    for (size_t i = 0; i < n; i++)
        dd[i] = (ptrdiff_t)(i * 40 + (i % 3) * 8);
    tdm_dtype_create_hindexed(n, NULL, 1, dd, dbl, &t);
    commit(t);
    CHECK(t->layout->kind == TDM_DN_SEGS && t->layout->u.s.n == n, "irregular indexed: %zu segs",
          t->layout->kind == TDM_DN_SEGS ? t->layout->u.s.n : 0);
    tdm_dtype_release(t);
    free(dd);

    /* struct of a few fields flattens into a small segment list */
    tdm_dtype_t *ty[3] = {T(MPI_INT), T(MPI_DOUBLE), T(MPI_CHAR)};
    size_t sbl[3] = {1, 2, 3};
    ptrdiff_t sd[3] = {0, 8, 24};
    tdm_dtype_create_struct(3, sbl, sd, ty, &t);
    commit(t);
    CHECK(t->nsegs == 2 && t->segs[0].off == 0 && t->segs[0].len == 4 && t->segs[1].off == 8 &&
              t->segs[1].len == 19,
          "struct {int; double[2]; char[3]}: 2 segments, got %zu", t->nsegs);
    CHECK(tdm_dtype_extent(t) == 32, "struct extent padded to 32, got %td", tdm_dtype_extent(t));
    /* a vector of structs: one repeat over the struct's 2 segments */
    tdm_dtype_create_hvector(10000, 1, 64, t, &u);
    commit(u);
    CHECK(u->layout->kind == TDM_DN_REPEAT && u->layout->u.r.child->kind == TDM_DN_SEGS &&
              u->layout->u.r.child->u.s.n == 2,
          "vector of structs is a repeat of a 2-segment list");
    tdm_dn_dump(u->layout, dump, sizeof(dump));
    CHECK(strstr(dump, "repeat count=10000 stride=64") != NULL, "dump shows the repeat: %s", dump);
    tdm_dtype_release(t);
    tdm_dtype_release(u);

    /* nested vectors that tile merge into one level */
    tdm_dtype_create_hvector(4, 1, 16, dbl, &t); /* extent 56 */
    tdm_dtype_t *r;
    tdm_dtype_create_resized(t, 0, 64, &r);
    tdm_dtype_create_contig(1000, r, &u);
    commit(u);
    CHECK(u->layout->kind == TDM_DN_REPEAT && u->layout->u.r.count == 4000 &&
              u->layout->u.r.stride == 16,
          "contig of resized vector flattens to one repeat of 4000");
    tdm_dtype_release(t);
    tdm_dtype_release(r);
    tdm_dtype_release(u);

    /* subarray of a 3-d array: one node per dimension at most */
    size_t sz[3] = {64, 64, 64}, sub[3] = {32, 16, 8}, st[3] = {4, 8, 16};
    tdm_dtype_create_subarray(3, sz, sub, st, 1, dbl, &t);
    commit(t);
    CHECK(tdm_dn_count(t->layout) <= 4, "subarray layout has %zu nodes", tdm_dn_count(t->layout));
    CHECK(t->lb == 0 && tdm_dtype_extent(t) == 64 * 64 * 64 * 8, "subarray extent");
    CHECK(t->true_lb == (ptrdiff_t)((4 * 64 * 64 + 8 * 64 + 16) * 8), "subarray true_lb %td",
          t->true_lb);
    /* 512 runs of 64 bytes: too many short pieces to keep a segment list */
    CHECK(t->segs == NULL && t->nsegs == 0, "subarray of short runs keeps no list");
    tdm_dtype_release(t);
    /* 80 planes of 64 x 40 doubles (20 KiB runs): kept, for CMA */
    size_t sz2[3] = {100, 64, 64}, sub2[3] = {80, 64, 40}, st2[3] = {1, 0, 0};
    tdm_dtype_create_subarray(3, sz2, sub2, st2, 1, dbl, &t);
    commit(t);
    CHECK(t->layout->nsegs == 80 * 64 && t->nsegs == 0 && t->segs == NULL,
          "64-row planes: 5120 short runs, no list");
    tdm_dtype_release(t);
    size_t sz3[3] = {100, 64, 64}, sub3[3] = {80, 64, 64}, st3[3] = {10, 0, 0};
    tdm_dtype_create_subarray(3, sz3, sub3, st3, 1, dbl, &t);
    commit(t);
    CHECK(t->nsegs == 1 && t->contig == 0 && t->segs && t->segs[0].len == 80 * 64 * 64 * 8,
          "whole planes merge into one run");
    tdm_dtype_release(t);
    size_t sz4[3] = {100, 64, 64}, sub4[3] = {80, 40, 64}, st4[3] = {10, 2, 0};
    tdm_dtype_create_subarray(3, sz4, sub4, st4, 1, dbl, &t);
    commit(t);
    CHECK(t->nsegs == 80 && t->segs && t->segs[0].off == t->true_lb &&
              t->segs[0].len == 40 * 64 * 8 && t->segs[1].off == t->true_lb + 64 * 64 * 8,
          "subarray of 20 KiB runs keeps its %zu segments", t->nsegs);
    tdm_dtype_release(t);
}

/* ---- windows against the reference ---- */

static void test_windows(void) {
    tdm_dtype_t *dbl = T(MPI_DOUBLE), *i32 = T(MPI_INT), *chr = T(MPI_CHAR);
    ref_t rd = ref_basic(8), ri = ref_basic(4), rc = ref_basic(1);
    tdm_dtype_t *t, *u, *v;

    /* vector every other double */
    tdm_dtype_create_hvector(5000, 1, 16, dbl, &t);
    commit(t);
    ref_t r1 = ref_vector(5000, 1, 16, &rd, 8);
    check_windows("vector 5000x1 stride 16", t, &r1, 3);

    /* vector of 3-double blocks, negative stride */
    tdm_dtype_create_hvector(300, 3, -40, dbl, &u);
    commit(u);
    ref_t r2 = ref_vector(300, 3, -40, &rd, 8);
    check_windows("vector 300x3 stride -40", u, &r2, 2);

    /* struct with holes */
    tdm_dtype_t *ty[3] = {i32, dbl, chr};
    size_t sbl[3] = {1, 2, 3};
    ptrdiff_t sd[3] = {0, 8, 24};
    tdm_dtype_create_struct(3, sbl, sd, ty, &v);
    commit(v);
    ref_t parts[3] = {ri, rd, rc};
    ref_t rs;
    {
        size_t total = 4 + 16 + 3;
        rs.n = 0;
        rs.off = malloc(total * sizeof(ptrdiff_t));
        ptrdiff_t exts[3] = {4, 8, 1};
        for (int i = 0; i < 3; i++)
            for (size_t j = 0; j < sbl[i]; j++)
                for (size_t k = 0; k < parts[i].n; k++)
                    rs.off[rs.n++] = sd[i] + (ptrdiff_t)j * exts[i] + parts[i].off[k];
    }
    check_windows("struct int,double[2],char[3]", v, &rs, 50);

    /* vector of structs (large: a repeat over a segment list) */
    tdm_dtype_t *vs;
    tdm_dtype_create_hvector(2000, 2, 80, v, &vs);
    commit(vs);
    ref_t r3 = ref_vector(2000, 2, 80, &rs, tdm_dtype_extent(v));
    check_windows("vector of structs", vs, &r3, 2);

    /* irregular hindexed of vectors (a list node) */
    size_t n = 300;
    size_t *bl = malloc(n * sizeof(size_t));
    ptrdiff_t *dd = malloc(n * sizeof(ptrdiff_t));
    for (size_t i = 0; i < n; i++) {
        bl[i] = 1 + i % 3;
        dd[i] = (ptrdiff_t)(i * 2000 + (i % 5) * 16);
    }
    tdm_dtype_t *w, *hv;
    tdm_dtype_create_hvector(40, 1, 16, dbl, &w); /* 40 doubles, extent 632 */
    tdm_dtype_create_resized(w, 0, 640, &hv);
    tdm_dtype_t *hi;
    tdm_dtype_create_hindexed(n, bl, 0, dd, hv, &hi);
    commit(hi);
    ref_t rw = ref_vector(40, 1, 16, &rd, 8);
    ref_t r4 = ref_blocks(n, bl, dd, &rw, 640);
    check_windows("hindexed of resized vectors", hi, &r4, 2);
    CHECK(hi->layout->kind == TDM_DN_LIST || hi->layout->kind == TDM_DN_SEGS,
          "hindexed of vectors: list node");

    /* subarray (C and Fortran order) against the definition */
    size_t sz[3] = {7, 9, 11}, sub[3] = {3, 4, 5}, st[3] = {2, 1, 6};
    for (int order_c = 0; order_c < 2; order_c++) {
        tdm_dtype_t *sa;
        tdm_dtype_create_subarray(3, sz, sub, st, order_c, i32, &sa);
        commit(sa);
        ref_t r5 = {0, malloc(3 * 4 * 5 * 4 * sizeof(ptrdiff_t))};
        /* in typemap order: the fastest dimension last (C) or first (Fortran) */
        for (size_t a = 0; a < sub[order_c ? 0 : 2]; a++)
            for (size_t b = 0; b < sub[1]; b++)
                for (size_t c = 0; c < sub[order_c ? 2 : 0]; c++) {
                    size_t i0 = order_c ? a : c, i2 = order_c ? c : a, i1 = b;
                    size_t x = st[0] + i0, y = st[1] + i1, z = st[2] + i2;
                    size_t lin =
                        order_c ? (x * sz[1] + y) * sz[2] + z : (z * sz[1] + y) * sz[0] + x;
                    for (int k = 0; k < 4; k++)
                        r5.off[r5.n++] = (ptrdiff_t)(lin * 4) + k;
                }
        check_windows(order_c ? "subarray C" : "subarray Fortran", sa, &r5, 2);
        tdm_dtype_release(sa);
        free(r5.off);
    }

    tdm_dtype_release(t);
    tdm_dtype_release(u);
    tdm_dtype_release(v);
    tdm_dtype_release(vs);
    tdm_dtype_release(w);
    tdm_dtype_release(hv);
    tdm_dtype_release(hi);
    free(bl);
    free(dd);
    free(r1.off);
    free(r2.off);
    free(r3.off);
    free(r4.off);
    free(rw.off);
    free(rs.off);
    free(rd.off);
    free(ri.off);
    free(rc.off);
}

/* ---- element counts ---- */

static void test_elements(void) {
    tdm_dtype_t *t, *s;
    CHECK(tdm_dtype_elements(T(MPI_2INT), 16) == 4, "2int: 16 bytes = 4 elements");
    CHECK(tdm_dtype_elements(T(MPI_DOUBLE_INT), 12) == 2, "double_int: 12 bytes = 2");
    CHECK(tdm_dtype_elements(T(MPI_DOUBLE_INT), 20) == 3, "double_int: 20 bytes = 3");
    CHECK(tdm_dtype_elements(T(MPI_DOUBLE_INT), 16) == -1, "double_int: 16 bytes undefined");
    CHECK(tdm_dtype_elements(T(MPI_DOUBLE), 12) == -1, "double: 12 bytes undefined");
    CHECK(tdm_dtype_elements_bytes(T(MPI_DOUBLE_INT), 3) == 20, "3 elements of double_int");

    /* struct {int; double[2]; char[3]}: 6 elements in 23 bytes */
    tdm_dtype_t *ty[3] = {T(MPI_INT), T(MPI_DOUBLE), T(MPI_CHAR)};
    size_t bl[3] = {1, 2, 3};
    ptrdiff_t d[3] = {0, 8, 24};
    tdm_dtype_create_struct(3, bl, d, ty, &s);
    CHECK(s->nelems == 6 && s->size == 23, "struct: 6 elements, 23 bytes");
    size_t bytes[] = {0, 4, 12, 20, 21, 23, 23 + 4, 23 + 12, 46, 10};
    long long want[] = {0, 1, 2, 3, 4, 6, 7, 8, 12, -1};
    for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
        long long got = tdm_dtype_elements(s, bytes[i]);
        CHECK(got == want[i], "struct: %zu bytes -> %lld elements, want %lld", bytes[i], got,
              want[i]);
        if (want[i] >= 0) {
            long long b = tdm_dtype_elements_bytes(s, (size_t)want[i]);
            CHECK(b == (long long)bytes[i], "struct: %lld elements -> %lld bytes, want %zu",
                  want[i], b, bytes[i]);
        }
    }
    /* vector of the struct: partial items inside partial blocks */
    tdm_dtype_create_hvector(10, 2, 100, s, &t);
    CHECK(tdm_dtype_elements(t, 23 * 3 + 12) == 20, "vector of structs: 3 items + int,double");
    CHECK(tdm_dtype_elements_bytes(t, 20) == 23 * 3 + 12, "and back");
    tdm_dtype_release(t);
    tdm_dtype_release(s);
}

/* ---- the flat program: compact, and checked before a peer's copy is walked ---- */

static void test_flat(void) {
    tdm_dtype_t *t, *u;
    size_t isz;
    tdm_dtype_create_hvector(1000000, 1, 16, T(MPI_DOUBLE), &t);
    commit(t);
    CHECK(t->flat && t->flat_len < 256, "vector of a million: %zu-byte flat program", t->flat_len);
    CHECK(tdm_dtype_flat_check(t->flat, t->flat_len, &isz) == 0 && isz == 8000000,
          "flat check of the vector");
    /* corruptions are refused */
    unsigned char *c = malloc(t->flat_len);
    int refused = 0;
    for (size_t i = 0; i < t->flat_len; i += 4) {
        memcpy(c, t->flat, t->flat_len);
        c[i] ^= 0x40;
        size_t s2;
        refused += tdm_dtype_flat_check(c, t->flat_len, &s2) != 0;
    }
    CHECK(refused >= (int)(t->flat_len / 8), "only %d of %zu corruptions refused", refused,
          t->flat_len / 4);
    memcpy(c, t->flat, t->flat_len);
    CHECK(tdm_dtype_flat_check(c, t->flat_len - 8, &isz) != 0, "truncated flat program refused");
    free(c);
    tdm_dtype_release(t);

    /* shared subtrees are written once: an hindexed of 100000 vector blocks */
    size_t n = 100000;
    ptrdiff_t *d = malloc(n * sizeof(*d));
    for (size_t i = 0; i < n; i++)
        d[i] = (ptrdiff_t)(i * 1000 + (i % 7) * 8);
    tdm_dtype_create_hvector(10, 1, 16, T(MPI_DOUBLE), &t); /* 10 segments: flattened */
    tdm_dtype_t *r;
    tdm_dtype_create_hvector(100, 1, 24, T(MPI_DOUBLE), &r); /* a repeat node */
    tdm_dtype_create_hindexed(n, NULL, 1, d, r, &u);
    commit(u);
    CHECK(u->layout->kind == TDM_DN_LIST, "hindexed of repeats is a list");
    CHECK(u->flat_len < n * 16 + n * 8 + 4096, "shared child written once: %zu bytes", u->flat_len);
    CHECK(tdm_dtype_flat_check(u->flat, u->flat_len, &isz) == 0 && isz == n * 800,
          "flat check of the list");
    tdm_dtype_release(u);
    tdm_dtype_release(r);
    tdm_dtype_release(t);
    free(d);
}

int main(void) {
    if (tdm_dtype_init() != 0) {
        printf("tdm_dtype_init failed\n");
        return 1;
    }
    test_shapes();
    test_windows();
    test_elements();
    test_flat();
    tdm_dtype_fini();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
