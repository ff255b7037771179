/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Type constructors. Each computes the new type's size, bounds (MPI-4.1 §5.1.7,
 * with the sticky MPI_LB/MPI_UB markers of MPI-1), signature and layout
 * program from its old types. Subarray and darray are built from the others,
 * the way the standard defines them.
 */
#include "dtype_impl.h"
#include "../base/util.h"
#include "../base/abi.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- bounds ---- */

typedef struct bounds {
    bool any_lb, any_ub, any_mlb, any_mub, data;
    ptrdiff_t lb, ub, mlb, mub, tlb, tub;
} bounds_t;

/* A lower (`low`) or upper bound *cur, set yet or not (*any), widened to take v. */
static void widen(ptrdiff_t *cur, bool *any, ptrdiff_t v, bool low) {
    *cur = !*any ? v : low ? TDM_MIN(*cur, v) : TDM_MAX(*cur, v);
    *any = true;
}

/* Blocks of n items of t starting at displacements within [dmin, dmax]. */
static void bounds_add(bounds_t *b, const tdm_dtype_t *t, ptrdiff_t dmin, ptrdiff_t dmax,
                       size_t n) {
    if (!n)
        return;
    const tdm_dtype_ext_t *x = tdm_dtype_ext(t);
    ptrdiff_t rep = (ptrdiff_t)(n - 1) * tdm_dtype_extent(t);
    ptrdiff_t lo = dmin + TDM_MIN(rep, 0), hi = dmax + TDM_MAX(rep, 0);
    if (t->handle != TDM_MPI_UB) {
        if (x->lb_marked)
            widen(&b->mlb, &b->any_mlb, lo + t->lb, true);
        else
            widen(&b->lb, &b->any_lb, lo + t->lb, true);
    }
    if (t->handle != TDM_MPI_LB) {
        if (x->ub_marked)
            widen(&b->mub, &b->any_mub, hi + t->ub, false);
        else
            widen(&b->ub, &b->any_ub, hi + t->ub, false);
    }
    if (t->size) {
        ptrdiff_t tl = lo + t->true_lb, tu = hi + t->true_ub;
        b->tlb = b->data ? TDM_MIN(b->tlb, tl) : tl;
        b->tub = b->data ? TDM_MAX(b->tub, tu) : tu;
        b->data = true;
    }
}

static void bounds_set(tdm_dtype_t *dt, const bounds_t *b) {
    tdm_dtype_ext_t *x = dt->ext;
    dt->lb = b->any_mlb ? b->mlb : b->any_lb ? b->lb : 0;
    dt->ub = b->any_mub ? b->mub : b->any_ub ? b->ub : dt->lb;
    x->lb_marked = b->any_mlb;
    x->ub_marked = b->any_mub;
    dt->true_lb = b->data ? b->tlb : 0;
    dt->true_ub = b->data ? b->tub : 0;
}

/* ---- signature ---- */

typedef struct sigacc {
    bool first;
    size_t size, nelems, ext32, align, elem_size, basic_size;
    int basic, elem_basic;
    bool overflow;
} sigacc_t;

static size_t mul_chk(sigacc_t *s, size_t a, size_t b) {
    if (b && a > SIZE_MAX / b) {
        s->overflow = true;
        return 0;
    }
    return a * b;
}
static size_t add_chk(sigacc_t *s, size_t a, size_t b) {
    if (a > SIZE_MAX - b) {
        s->overflow = true;
        return 0;
    }
    return a + b;
}

static void sig_add(sigacc_t *s, const tdm_dtype_t *t, size_t n) {
    const tdm_dtype_ext_t *x = tdm_dtype_ext(t);
    if (!n)
        return;
    s->size = add_chk(s, s->size, mul_chk(s, n, t->size));
    s->nelems = add_chk(s, s->nelems, mul_chk(s, n, t->nelems));
    s->ext32 = add_chk(s, s->ext32, mul_chk(s, n, x->ext32_size));
    if (!t->size)
        return;
    s->align = TDM_MAX(s->align, x->align);
    if (s->first) {
        s->first = false;
        s->basic = t->basic;
        s->basic_size = t->basic_size;
        s->elem_size = x->elem_size;
        s->elem_basic = x->elem_basic;
        return;
    }
    if (s->basic != t->basic)
        s->basic = 0;
    if (s->elem_size != x->elem_size)
        s->elem_size = 0;
    if (s->elem_basic != x->elem_basic)
        s->elem_basic = 0;
}

static int sig_set(tdm_dtype_t *dt, const sigacc_t *s) {
    tdm_dtype_ext_t *x = dt->ext;
    if (s->overflow)
        return -EOVERFLOW;
    dt->size = s->size;
    dt->nelems = s->nelems;
    dt->basic = s->basic;
    dt->basic_size = s->basic ? s->basic_size : 0;
    x->ext32_size = s->ext32;
    x->align = s->align ? s->align : 1;
    x->elem_size = s->elem_size;
    x->elem_basic = s->elem_basic;
    return 0;
}

static sigacc_t sig_start(void) {
    return (sigacc_t){.first = true};
}

/* Signature of n items of old (every constructor except struct). */
static void sig_repeat(tdm_dtype_t *dt, size_t n, tdm_dtype_t *old) {
    tdm_dtype_ext_t *x = dt->ext;
    x->sig_kind = TDM_SIG_REPEAT;
    x->sig_n = n;
    x->sig_child = old;
    tdm_dtype_retain(old);
}

static int finish(tdm_dtype_t *dt, int rc, tdm_dtype_t **new_p) {
    if (rc == 0 && !dt->layout)
        rc = -ENOMEM;
    if (rc) {
        tdm_dtype_release(dt);
        return rc;
    }
    *new_p = dt;
    return 0;
}

/* ---- constructors ---- */

int tdm_dtype_create_hvector(size_t count, size_t blocklen, ptrdiff_t stride, tdm_dtype_t *old,
                             tdm_dtype_t **new_p) {
    tdm_dtype_t *dt = tdm_dtype_alloc();
    if (!dt)
        return -ENOMEM;
    size_t n = count && blocklen ? count : 0;
    bounds_t b = {0};
    ptrdiff_t last = n ? (ptrdiff_t)(n - 1) * stride : 0;
    bounds_add(&b, old, TDM_MIN(last, 0), TDM_MAX(last, 0), n ? blocklen : 0);
    bounds_set(dt, &b);
    sigacc_t s = sig_start();
    if (n) {
        size_t items = mul_chk(&s, count, blocklen);
        sig_add(&s, old, items);
        sig_repeat(dt, items, old);
    }
    int rc = sig_set(dt, &s);
    if (!rc) {
        tdm_dnode_t *blk = tdm_dn_repeat(blocklen, tdm_dtype_extent(old), 0, old->layout);
        if (blk) {
            dt->layout = tdm_dn_repeat(n, stride, 0, blk);
            tdm_dn_release(blk);
        }
    }
    return finish(dt, rc, new_p);
}

int tdm_dtype_create_contig(size_t count, tdm_dtype_t *old, tdm_dtype_t **new_p) {
    return tdm_dtype_create_hvector(count, 1, tdm_dtype_extent(old), old, new_p);
}

int tdm_dtype_create_hindexed(size_t count, const size_t *blocklens, size_t blocklen,
                              const ptrdiff_t *disps, tdm_dtype_t *old, tdm_dtype_t **new_p) {
    tdm_dtype_t *dt = tdm_dtype_alloc();
    if (!dt)
        return -ENOMEM;
    bounds_t b = {0};
    sigacc_t s = sig_start();
    size_t items = 0;
    for (size_t i = 0; i < count; i++) {
        size_t bl = blocklens ? blocklens[i] : blocklen;
        bounds_add(&b, old, disps[i], disps[i], bl);
        items = add_chk(&s, items, bl);
    }
    bounds_set(dt, &b);
    sig_add(&s, old, items);
    if (items)
        sig_repeat(dt, items, old);
    int rc = sig_set(dt, &s);
    if (rc)
        return finish(dt, rc, new_p);

    /* one block node per distinct length (typically one or a few) */
    tdm_dnode_t **kids = malloc((count ? count : 1) * sizeof(*kids));
    if (!kids)
        return finish(dt, -ENOMEM, new_p);
    size_t made = 0;
    tdm_dnode_t *prev = NULL;
    size_t prev_bl = 0;
    for (size_t i = 0; i < count; i++) {
        size_t bl = blocklens ? blocklens[i] : blocklen;
        if (!prev || bl != prev_bl) {
            tdm_dnode_t *blk = tdm_dn_repeat(bl, tdm_dtype_extent(old), 0, old->layout);
            if (!blk)
                break;
            if (prev)
                tdm_dn_release(prev);
            prev = blk;
            prev_bl = bl;
        }
        tdm_dn_retain(prev);
        kids[made++] = prev;
    }
    if (made == count)
        dt->layout = tdm_dn_list(count, disps, kids);
    for (size_t i = 0; i < made; i++)
        tdm_dn_release(kids[i]);
    if (prev)
        tdm_dn_release(prev);
    free(kids);
    return finish(dt, 0, new_p);
}

int tdm_dtype_create_struct(size_t count, const size_t *blocklens, const ptrdiff_t *disps,
                            tdm_dtype_t *const *types, tdm_dtype_t **new_p) {
    tdm_dtype_t *dt = tdm_dtype_alloc();
    if (!dt)
        return -ENOMEM;
    tdm_dtype_ext_t *x = dt->ext;
    bounds_t b = {0};
    sigacc_t s = sig_start();
    bool same = true;
    size_t nsig = 0;
    for (size_t i = 0; i < count; i++) {
        bounds_add(&b, types[i], disps[i], disps[i], blocklens[i]);
        sig_add(&s, types[i], blocklens[i]);
        same = same && types[i] == types[0];
        nsig += blocklens[i] && types[i]->nelems;
    }
    bounds_set(dt, &b);
    /* MPI's epsilon: round the extent up to the strictest alignment, as the C
     * compiler pads a struct. Like MPICH, not when every entry has one type
     * (that is an hindexed type) nor when an MPI_UB marker fixes the bound. */
    if (!same && !x->ub_marked && s.align > 1) {
        size_t ext = (size_t)(dt->ub - dt->lb);
        if (ext % s.align)
            dt->ub += (ptrdiff_t)(s.align - ext % s.align);
    }
    int rc = sig_set(dt, &s);
    if (rc)
        return finish(dt, rc, new_p);
    x->sig_kind = TDM_SIG_LIST;
    x->sig_bl = malloc((nsig ? nsig : 1) * sizeof(size_t));
    x->sig_types = malloc((nsig ? nsig : 1) * sizeof(tdm_dtype_t *));
    tdm_dnode_t **kids = malloc((count ? count : 1) * sizeof(*kids));
    if (!x->sig_bl || !x->sig_types || !kids) {
        free(kids);
        return finish(dt, -ENOMEM, new_p);
    }
    for (size_t i = 0; i < count; i++) {
        if (blocklens[i] && types[i]->nelems) {
            x->sig_bl[x->sig_n] = blocklens[i];
            x->sig_types[x->sig_n++] = types[i];
            tdm_dtype_retain(types[i]);
        }
    }
    size_t made = 0;
    for (; made < count; made++) {
        kids[made] =
            tdm_dn_repeat(blocklens[made], tdm_dtype_extent(types[made]), 0, types[made]->layout);
        if (!kids[made])
            break;
    }
    if (made == count)
        dt->layout = tdm_dn_list(count, disps, kids);
    for (size_t i = 0; i < made; i++)
        tdm_dn_release(kids[i]);
    free(kids);
    return finish(dt, 0, new_p);
}

/* A new type of one `old`: its signature (*rc_p the result), true bounds and layout, the
 * rest for resized and dup to set. NULL if out of memory. */
static tdm_dtype_t *one_of(tdm_dtype_t *old, int *rc_p) {
    tdm_dtype_t *dt = tdm_dtype_alloc();
    if (!dt)
        return NULL;
    sigacc_t s = sig_start();
    sig_add(&s, old, 1);
    sig_repeat(dt, 1, old);
    *rc_p = sig_set(dt, &s);
    dt->true_lb = old->true_lb;
    dt->true_ub = old->true_ub;
    dt->layout = old->layout;
    tdm_dn_retain(dt->layout);
    return dt;
}

int tdm_dtype_create_resized(tdm_dtype_t *old, ptrdiff_t lb, ptrdiff_t extent,
                             tdm_dtype_t **new_p) {
    int rc;
    tdm_dtype_t *dt = one_of(old, &rc);
    if (!dt)
        return -ENOMEM;
    dt->lb = lb;
    dt->ub = lb + extent;
    return finish(dt, rc, new_p);
}

int tdm_dtype_create_dup(tdm_dtype_t *old, tdm_dtype_t **new_p) {
    int rc;
    tdm_dtype_t *dt = one_of(old, &rc);
    if (!dt)
        return -ENOMEM;
    tdm_dtype_ext_t *x = dt->ext;
    const tdm_dtype_ext_t *ox = tdm_dtype_ext(old);
    dt->lb = old->lb;
    dt->ub = old->ub;
    x->lb_marked = ox->lb_marked;
    x->ub_marked = ox->ub_marked;
    x->align = ox->align;
    rc = finish(dt, rc, new_p);
    if (!rc && old->committed) {
        rc = tdm_dtype_commit(*new_p); /* a duplicate of a committed type is committed */
        if (rc)
            tdm_dtype_release(*new_p);
    }
    return rc;
}

int tdm_dtype_create_equiv(tdm_dtype_t *old, tdm_dtype_t **new_p) {
    tdm_dtype_t *dt;
    int rc = tdm_dtype_create_dup(old, &dt);
    if (rc)
        return rc;
    /* described as old is, not as a duplicate of it: it stands for old's constructor */
    rc = tdm_dtype_record_copy(dt, old);
    if (rc) {
        tdm_dtype_release(dt);
        return rc;
    }
    *new_p = dt;
    return 0;
}

/* Place `inner` at byte displacement disp inside a type of bounds [0, extent). */
static int place_resized(tdm_dtype_t *inner, ptrdiff_t disp, ptrdiff_t extent,
                         tdm_dtype_t **new_p) {
    tdm_dtype_t *placed;
    size_t one = 1;
    int rc = tdm_dtype_create_hindexed(1, &one, 0, &disp, inner, &placed);
    if (rc)
        return rc;
    rc = tdm_dtype_create_resized(placed, 0, extent, new_p);
    tdm_dtype_release(placed);
    return rc;
}

int tdm_dtype_create_subarray(int ndims, const size_t *sizes, const size_t *subsizes,
                              const size_t *starts, int order_c, tdm_dtype_t *old,
                              tdm_dtype_t **new_p) {
    ptrdiff_t ext = tdm_dtype_extent(old);
    /* dims from the fastest-varying one outward */
#define DIM(_k) (order_c ? ndims - 1 - (_k) : (_k))
    tdm_dtype_t *t;
    int rc = tdm_dtype_create_contig(subsizes[DIM(0)], old, &t);
    if (rc)
        return rc;
    ptrdiff_t stride = ext, disp = (ptrdiff_t)starts[DIM(0)] * ext;
    for (int k = 1; k < ndims; k++) {
        stride *= (ptrdiff_t)sizes[DIM(k - 1)];
        disp += (ptrdiff_t)starts[DIM(k)] * stride;
        tdm_dtype_t *v;
        rc = tdm_dtype_create_hvector(subsizes[DIM(k)], 1, stride, t, &v);
        tdm_dtype_release(t);
        if (rc)
            return rc;
        t = v;
    }
    stride *= (ptrdiff_t)sizes[DIM(ndims - 1)];
#undef DIM
    rc = place_resized(t, disp, stride, new_p);
    tdm_dtype_release(t);
    return rc;
}

/* One dimension of a darray: the blocks of `darg` elements this process owns
 * out of `gsize` dealt round-robin over `psize` processes, placed in a type
 * whose extent is the whole dimension (MPI-4.1 §5.1.4, "cyclic"). */
static int darray_dim(size_t gsize, size_t darg, int coord, int psize, tdm_dtype_t *old,
                      tdm_dtype_t **new_p) {
    ptrdiff_t ext = tdm_dtype_extent(old);
    size_t nblocks = (gsize + darg - 1) / darg;
    size_t mine = nblocks / (size_t)psize + ((size_t)coord < nblocks % (size_t)psize);
    tdm_dtype_t *t;
    int rc;
    if (mine == 0) {
        rc = tdm_dtype_create_contig(0, old, &t);
    } else {
        size_t last = (size_t)coord + (mine - 1) * (size_t)psize; /* my last block */
        size_t last_len = TDM_MIN(darg, gsize - last * darg);
        ptrdiff_t stride = (ptrdiff_t)(darg * (size_t)psize) * ext;
        if (last_len == darg) {
            rc = tdm_dtype_create_hvector(mine, darg, stride, old, &t);
        } else {
            /* the last block is short: full blocks, then the rest */
            ptrdiff_t d[2] = {0, (ptrdiff_t)(mine - 1) * stride};
            if (mine == 1) {
                rc = tdm_dtype_create_contig(last_len, old, &t);
            } else {
                tdm_dtype_t *full;
                rc = tdm_dtype_create_hvector(mine - 1, darg, stride, old, &full);
                if (!rc) {
                    tdm_dtype_t *rest;
                    rc = tdm_dtype_create_contig(last_len, old, &rest);
                    if (!rc) {
                        tdm_dtype_t *ty[2] = {full, rest};
                        size_t one[2] = {1, 1};
                        rc = tdm_dtype_create_struct(2, one, d, ty, &t);
                        tdm_dtype_release(rest);
                    }
                    tdm_dtype_release(full);
                }
            }
        }
    }
    if (rc)
        return rc;
    rc = place_resized(t, (ptrdiff_t)((size_t)coord * darg) * ext, (ptrdiff_t)gsize * ext, new_p);
    tdm_dtype_release(t);
    return rc;
}

int tdm_dtype_create_darray(int size, int rank, int ndims, const size_t *gsizes,
                            const int *distribs, const int *dargs, const int *psizes, int order_c,
                            tdm_dtype_t *old, tdm_dtype_t **new_p) {
    (void)size;
    /* the process grid is row-major whatever the array order */
    int *coords = malloc((size_t)(ndims > 0 ? ndims : 1) * sizeof(int));
    if (!coords)
        return -ENOMEM;
    int r = rank;
    for (int i = ndims - 1; i >= 0; i--) {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    tdm_dtype_t *t = old;
    tdm_dtype_retain(t);
    for (int k = 0; k < ndims; k++) {
        int i = order_c ? ndims - 1 - k : k;
        size_t darg;
        if (distribs[i] == TDM_MPI_DISTRIBUTE_NONE)
            darg = gsizes[i];
        else if (dargs[i] != TDM_MPI_DISTRIBUTE_DFLT_DARG)
            darg = (size_t)dargs[i];
        else if (distribs[i] == TDM_MPI_DISTRIBUTE_BLOCK)
            darg = (gsizes[i] + (size_t)psizes[i] - 1) / (size_t)psizes[i];
        else
            darg = 1;
        if (darg == 0)
            darg = 1;
        int p = distribs[i] == TDM_MPI_DISTRIBUTE_NONE ? 1 : psizes[i];
        int c = distribs[i] == TDM_MPI_DISTRIBUTE_NONE ? 0 : coords[i];
        tdm_dtype_t *n;
        int rc = darray_dim(gsizes[i], darg, c, p, t, &n);
        tdm_dtype_release(t);
        if (rc) {
            free(coords);
            return rc;
        }
        t = n;
    }
    free(coords);
    *new_p = t;
    return 0;
}
