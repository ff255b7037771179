/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout programs (see dtype_impl.h): building and normalising the nodes the
 * constructors compose. Commit turns the tree into its flat form (flat.c),
 * which is what pack, unpack and iovec generation walk.
 */
#include "dtype_impl.h"
#include "../base/ref.h"
#include "../base/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t sat_add(size_t a, size_t b) {
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}
static size_t sat_mul(size_t a, size_t b) {
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

void tdm_dn_retain(tdm_dnode_t *d) {
    tdm_ref_inc(&d->refs);
}

void tdm_dn_release(tdm_dnode_t *d) {
    while (d && tdm_ref_dec(&d->refs)) {
        tdm_dnode_t *next = NULL;
        if (d->kind == TDM_DN_REPEAT) {
            next = d->u.r.child; /* iterate, not recurse: repeats nest deeply */
        } else if (d->kind == TDM_DN_LIST) {
            for (size_t i = 0; i < d->u.l.n; i++)
                tdm_dn_release(d->u.l.child[i]);
        }
        free(d);
        d = next;
    }
}

/* ---- building ---- */

/* A node of `kind` with `tail` bytes of arrays after it, one reference; NULL if out of memory. */
static tdm_dnode_t *dnode_alloc(uint32_t kind, size_t tail) {
    tdm_dnode_t *d = malloc(sizeof(*d) + tail);
    if (d) {
        d->refs = 1;
        d->kind = kind;
    }
    return d;
}

static tdm_dnode_t *segs_alloc(size_t n) {
    if (n > (SIZE_MAX - sizeof(tdm_dnode_t)) / (sizeof(tdm_seg_t) + sizeof(size_t)) - 1)
        return NULL;
    tdm_dnode_t *d = dnode_alloc(TDM_DN_SEGS, n * sizeof(tdm_seg_t) + (n + 1) * sizeof(size_t));
    if (!d)
        return NULL;
    d->u.s.n = n;
    d->u.s.seg = (tdm_seg_t *)(d + 1);
    d->u.s.psum = (size_t *)(d->u.s.seg + n);
    return d;
}

/* Append a segment, merging it with the previous one when they touch. */
static size_t seg_push(tdm_seg_t *out, size_t n, ptrdiff_t off, size_t len) {
    if (!len)
        return n;
    if (n && out[n - 1].off + (ptrdiff_t)out[n - 1].len == off) {
        out[n - 1].len += len;
        return n;
    }
    out[n].off = off;
    out[n].len = len;
    return n + 1;
}

static size_t flatten_at(const tdm_dnode_t *d, ptrdiff_t base, tdm_seg_t *out, size_t n) {
    switch (d->kind) {
    case TDM_DN_SEGS:
        for (size_t i = 0; i < d->u.s.n; i++)
            n = seg_push(out, n, base + d->u.s.seg[i].off, d->u.s.seg[i].len);
        return n;
    case TDM_DN_REPEAT:
        for (size_t i = 0; i < d->u.r.count; i++)
            n = flatten_at(d->u.r.child, base + d->u.r.disp + (ptrdiff_t)i * d->u.r.stride, out, n);
        return n;
    default:
        for (size_t i = 0; i < d->u.l.n; i++)
            n = flatten_at(d->u.l.child[i], base + d->u.l.disp[i], out, n);
        return n;
    }
}

size_t tdm_dn_flatten(const tdm_dnode_t *d, tdm_seg_t *out, size_t cap) {
    (void)cap; /* nsegs bounds the output; callers size out[] by it */
    return flatten_at(d, 0, out, 0);
}

/* A SEGS node from a merged list; a long list with one length and one stride
 * becomes a REPEAT of one segment (an indexed type that is really a vector). */
static tdm_dnode_t *segs_finish(tdm_seg_t *seg, size_t n) {
    if (n > TDM_DTYPE_SMALL_SEGS) {
        bool regular = true;
        ptrdiff_t stride = seg[1].off - seg[0].off;
        for (size_t i = 1; i < n && regular; i++)
            regular = seg[i].len == seg[0].len && seg[i].off - seg[i - 1].off == stride;
        if (regular) {
            tdm_seg_t one = {0, seg[0].len};
            tdm_dnode_t *c = tdm_dn_segs(&one, 1);
            if (!c)
                return NULL;
            tdm_dnode_t *r = tdm_dn_repeat(n, stride, seg[0].off, c);
            tdm_dn_release(c);
            return r;
        }
    }
    tdm_dnode_t *d = segs_alloc(n);
    if (!d)
        return NULL;
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        d->u.s.seg[i] = seg[i];
        d->u.s.psum[i] = sum;
        sum += seg[i].len;
    }
    d->u.s.psum[n] = sum;
    d->size = sum;
    d->nsegs = n;
    return d;
}

/* Room for the segments of a node being built: on the stack up to TDM_DTYPE_SMALL_SEGS,
 * else on the heap. */
typedef struct seg_scratch {
    tdm_seg_t small[TDM_DTYPE_SMALL_SEGS];
    tdm_seg_t *seg;
} seg_scratch_t;

static bool scratch_get(seg_scratch_t *sc, size_t n) {
    sc->seg = n <= TDM_DTYPE_SMALL_SEGS ? sc->small : malloc(n * sizeof(tdm_seg_t));
    return sc->seg != NULL;
}

/* The SEGS node of the first m segments of the room, which is given back. */
static tdm_dnode_t *scratch_finish(seg_scratch_t *sc, size_t m) {
    tdm_dnode_t *d = segs_finish(sc->seg, m);
    if (sc->seg != sc->small)
        free(sc->seg);
    return d;
}

tdm_dnode_t *tdm_dn_segs(const tdm_seg_t *segs, size_t n) {
    seg_scratch_t sc = {.seg = NULL};
    if (!scratch_get(&sc, n))
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m = seg_push(sc.seg, m, segs[i].off, segs[i].len);
    return scratch_finish(&sc, m);
}

/* Expand nodes whose flattened form is known to be small (or proportional to
 * what the user passed) into one SEGS node. */
static tdm_dnode_t *expand(size_t n, const ptrdiff_t *disps, tdm_dnode_t *const *children,
                           size_t reps, ptrdiff_t stride, size_t total) {
    seg_scratch_t sc = {.seg = NULL};
    if (!scratch_get(&sc, total))
        return NULL;
    size_t m = 0;
    for (size_t r = 0; r < reps; r++)
        for (size_t i = 0; i < n; i++)
            m = flatten_at(children[i], disps[i] + (ptrdiff_t)r * stride, sc.seg, m);
    return scratch_finish(&sc, m);
}

static tdm_dnode_t *empty(void) {
    return tdm_dn_segs(NULL, 0);
}

bool tdm_dn_one_seg(const tdm_dnode_t *d) {
    return d->kind == TDM_DN_SEGS && d->u.s.n == 1;
}

/* A SEGS node of k >= 2 segments of one length at a constant stride. */
static bool segs_regular(const tdm_dnode_t *d, ptrdiff_t *stride_p) {
    if (d->kind != TDM_DN_SEGS || d->u.s.n < 2)
        return false;
    const tdm_seg_t *s = d->u.s.seg;
    ptrdiff_t stride = s[1].off - s[0].off;
    for (size_t i = 1; i < d->u.s.n; i++)
        if (s[i].len != s[0].len || s[i].off - s[i - 1].off != stride)
            return false;
    *stride_p = stride;
    return true;
}

tdm_dnode_t *tdm_dn_shift(tdm_dnode_t *d, ptrdiff_t disp) {
    if (disp == 0) {
        tdm_dn_retain(d);
        return d;
    }
    switch (d->kind) {
    case TDM_DN_SEGS: {
        tdm_dnode_t *n = segs_alloc(d->u.s.n);
        if (!n)
            return NULL;
        n->size = d->size;
        n->nsegs = d->nsegs;
        for (size_t i = 0; i < d->u.s.n; i++) {
            n->u.s.seg[i].off = d->u.s.seg[i].off + disp;
            n->u.s.seg[i].len = d->u.s.seg[i].len;
        }
        memcpy(n->u.s.psum, d->u.s.psum, (d->u.s.n + 1) * sizeof(size_t));
        return n;
    }
    case TDM_DN_REPEAT:
        return tdm_dn_repeat(d->u.r.count, d->u.r.stride, d->u.r.disp + disp, d->u.r.child);
    default: {
        ptrdiff_t *disps = malloc(d->u.l.n * sizeof(*disps));
        if (!disps)
            return NULL;
        for (size_t i = 0; i < d->u.l.n; i++)
            disps[i] = d->u.l.disp[i] + disp;
        tdm_dnode_t *n = tdm_dn_list(d->u.l.n, disps, d->u.l.child);
        free(disps);
        return n;
    }
    }
}

tdm_dnode_t *tdm_dn_repeat(size_t count, ptrdiff_t stride, ptrdiff_t disp, tdm_dnode_t *c) {
    if (count == 0 || c->size == 0)
        return empty();
    if (count == 1)
        return tdm_dn_shift(c, disp);
    if (tdm_dn_one_seg(c) && stride == (ptrdiff_t)c->u.s.seg[0].len) {
        tdm_seg_t s = {disp + c->u.s.seg[0].off, sat_mul(count, c->u.s.seg[0].len)};
        return tdm_dn_segs(&s, 1);
    }
    size_t total = sat_mul(count, c->nsegs);
    if (total <= TDM_DTYPE_SMALL_SEGS)
        return expand(1, &disp, &c, count, stride, total);
    if (c->kind == TDM_DN_REPEAT && stride == (ptrdiff_t)c->u.r.count * c->u.r.stride)
        return tdm_dn_repeat(count * c->u.r.count, c->u.r.stride, disp + c->u.r.disp, c->u.r.child);
    ptrdiff_t inner;
    if (segs_regular(c, &inner) && stride == (ptrdiff_t)c->u.s.n * inner) {
        /* a repeat of k equal segments spaced like the repeat itself: one level */
        tdm_seg_t one = {0, c->u.s.seg[0].len};
        tdm_dnode_t *s = tdm_dn_segs(&one, 1);
        if (!s)
            return NULL;
        tdm_dnode_t *r = tdm_dn_repeat(count * c->u.s.n, inner, disp + c->u.s.seg[0].off, s);
        tdm_dn_release(s);
        return r;
    }
    tdm_dnode_t *d = dnode_alloc(TDM_DN_REPEAT, 0);
    if (!d)
        return NULL;
    d->size = sat_mul(count, c->size);
    d->nsegs = total;
    d->u.r.count = count;
    d->u.r.stride = stride;
    d->u.r.disp = disp;
    d->u.r.child = c;
    tdm_dn_retain(c);
    return d;
}

tdm_dnode_t *tdm_dn_list(size_t n, const ptrdiff_t *disps, tdm_dnode_t *const *children) {
    /* drop empty children */
    size_t m = 0, total = 0, single = 0;
    for (size_t i = 0; i < n; i++) {
        if (children[i]->size) {
            m++;
            total = sat_add(total, children[i]->nsegs);
            single += children[i]->kind == TDM_DN_SEGS;
        }
    }
    ptrdiff_t *dd = malloc((m ? m : 1) * sizeof(*dd));
    tdm_dnode_t **cc = malloc((m ? m : 1) * sizeof(*cc));
    tdm_dnode_t *d = NULL;
    if (!dd || !cc)
        goto out;
    m = 0;
    for (size_t i = 0; i < n; i++) {
        if (children[i]->size) {
            dd[m] = disps[i];
            cc[m++] = children[i];
        }
    }
    if (m == 0) {
        d = empty();
        goto out;
    }
    if (m == 1) {
        d = tdm_dn_shift(cc[0], dd[0]);
        goto out;
    }
    /* Flatten when small, or when the segments are in proportion to the
     * entries the user listed (indexed types of plain blocks). */
    if (total <= TDM_DTYPE_SMALL_SEGS || (single == m && total <= 4 * m)) {
        d = expand(m, dd, cc, 1, 0, total);
        goto out;
    }
    bool same = true;
    for (size_t i = 1; i < m && same; i++)
        same = cc[i] == cc[0] && dd[i] - dd[i - 1] == dd[1] - dd[0];
    if (same) {
        d = tdm_dn_repeat(m, dd[1] - dd[0], dd[0], cc[0]);
        goto out;
    }
    d = dnode_alloc(TDM_DN_LIST,
                    m * sizeof(ptrdiff_t) + m * sizeof(tdm_dnode_t *) + (m + 1) * sizeof(size_t));
    if (!d)
        goto out;
    d->u.l.n = m;
    d->u.l.disp = (ptrdiff_t *)(d + 1);
    d->u.l.child = (tdm_dnode_t **)(d->u.l.disp + m);
    d->u.l.psum = (size_t *)(d->u.l.child + m);
    size_t sum = 0;
    for (size_t i = 0; i < m; i++) {
        d->u.l.disp[i] = dd[i];
        d->u.l.child[i] = cc[i];
        tdm_dn_retain(cc[i]);
        d->u.l.psum[i] = sum;
        sum = sat_add(sum, cc[i]->size);
    }
    d->u.l.psum[m] = sum;
    d->size = sum;
    d->nsegs = total;
out:
    free(dd);
    free(cc);
    return d;
}

size_t tdm_dn_count(const tdm_dnode_t *d) {
    switch (d->kind) {
    case TDM_DN_SEGS:
        return 1;
    case TDM_DN_REPEAT:
        return 1 + tdm_dn_count(d->u.r.child);
    default: {
        size_t n = 1;
        for (size_t i = 0; i < d->u.l.n; i++)
            n += tdm_dn_count(d->u.l.child[i]);
        return n;
    }
    }
}

static size_t dump_at(const tdm_dnode_t *d, int depth, char *out, size_t cap, size_t pos) {
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (pos < cap) {                                                                           \
            int k_ = snprintf(out + pos, cap - pos, __VA_ARGS__);                                  \
            pos += k_ > 0 ? (size_t)k_ : 0;                                                        \
        }                                                                                          \
    } while (0)
    PUT("%*s", 2 * depth, "");
    switch (d->kind) {
    case TDM_DN_SEGS:
        PUT("segs n=%zu size=%zu", d->u.s.n, d->size);
        for (size_t i = 0; i < d->u.s.n && i < 8; i++)
            PUT(" (%td,%zu)", d->u.s.seg[i].off, d->u.s.seg[i].len);
        PUT("%s\n", d->u.s.n > 8 ? " ..." : "");
        break;
    case TDM_DN_REPEAT:
        PUT("repeat count=%zu stride=%td disp=%td size=%zu\n", d->u.r.count, d->u.r.stride,
            d->u.r.disp, d->size);
        pos = dump_at(d->u.r.child, depth + 1, out, cap, pos);
        break;
    default:
        PUT("list n=%zu size=%zu\n", d->u.l.n, d->size);
        for (size_t i = 0; i < d->u.l.n && i < 8; i++) {
            PUT("%*s@%td\n", 2 * depth + 2, "", d->u.l.disp[i]);
            pos = dump_at(d->u.l.child[i], depth + 2, out, cap, pos);
        }
        break;
    }
    return pos;
#undef PUT
}

void tdm_dn_dump(const tdm_dnode_t *d, char *out, size_t cap) {
    if (cap)
        out[0] = '\0';
    dump_at(d, 0, out, cap, 0);
}
