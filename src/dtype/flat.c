/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flat layout program (format in dtype_impl.h) and the one walker behind
 * pack, unpack and iovec generation, local or for a peer's buffer.
 *
 * The walker moves a byte window of the packed stream; it seeks to the
 * window's start by division in REPEAT nodes and binary search in SEGS and
 * LIST nodes, so each fragment of a long message costs O(depth * log(width))
 * to find, never a scan. Addresses are computed as integers so that the same
 * code describes memory of another process (iovecs for process_vm_readv).
 */
#include "dtype_impl.h"
#include "../base/util.h"
#include "../base/copy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing the flat form ---- */

/* tree node -> offset, so shared subtrees are written once */
typedef struct ser_ent {
    const tdm_dnode_t *key;
    uint64_t off;
    uint32_t depth;
} ser_ent_t;

typedef struct ser {
    char *buf;
    size_t len, cap;
    ser_ent_t *map;
    size_t mapcap, mapn;
    int err;
} ser_t;

static uint64_t ser_alloc(ser_t *s, size_t bytes) {
    size_t off = TDM_ALIGN_UP(s->len, 8);
    if (s->err || bytes > SIZE_MAX / 2 - off) {
        s->err = -ENOMEM;
        return 0;
    }
    if (off + bytes > s->cap) {
        size_t ncap = s->cap ? s->cap : 256;
        while (ncap < off + bytes)
            ncap *= 2;
        char *nb = realloc(s->buf, ncap);
        if (!nb) {
            s->err = -ENOMEM;
            return 0;
        }
        s->buf = nb;
        s->cap = ncap;
    }
    memset(s->buf + s->len, 0, off + bytes - s->len);
    s->len = off + bytes;
    return off;
}

static size_t map_slot(const ser_t *s, const tdm_dnode_t *d) {
    size_t h = ((uintptr_t)d >> 4) * 0x9e3779b97f4a7c15ull;
    size_t i = h & (s->mapcap - 1);
    while (s->map[i].key && s->map[i].key != d)
        i = (i + 1) & (s->mapcap - 1);
    return i;
}

static void map_put(ser_t *s, const tdm_dnode_t *d, uint64_t off, uint32_t depth) {
    if (2 * (s->mapn + 1) > s->mapcap) {
        size_t ncap = s->mapcap ? 2 * s->mapcap : 64;
        ser_ent_t *old = s->map;
        size_t oldcap = s->mapcap;
        s->map = calloc(ncap, sizeof(*s->map));
        if (!s->map) {
            s->map = old;
            s->err = -ENOMEM;
            return;
        }
        s->mapcap = ncap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].key)
                s->map[map_slot(s, old[i].key)] = old[i];
        free(old);
    }
    size_t i = map_slot(s, d);
    s->map[i].key = d;
    s->map[i].off = off;
    s->map[i].depth = depth;
    s->mapn++;
}

/* Write d (children first); returns its offset, *depth_p its depth. */
static uint64_t ser_node(ser_t *s, const tdm_dnode_t *d, uint32_t *depth_p) {
    if (s->mapcap) {
        size_t i = map_slot(s, d);
        if (s->map[i].key == d) {
            *depth_p = s->map[i].depth;
            return s->map[i].off;
        }
    }
    tdm_dflat_node_t n = {.kind = (uint32_t)d->kind, .size = d->size};
    uint32_t depth = 1;
    switch (d->kind) {
    case TDM_DN_SEGS: {
        n.n = d->u.s.n;
        n.arr = ser_alloc(s, d->u.s.n * sizeof(tdm_seg_t));
        n.psum = ser_alloc(s, (d->u.s.n + 1) * sizeof(uint64_t));
        if (s->err)
            return 0;
        memcpy(s->buf + n.arr, d->u.s.seg, d->u.s.n * sizeof(tdm_seg_t));
        for (size_t i = 0; i <= d->u.s.n; i++) {
            uint64_t v = d->u.s.psum[i];
            memcpy(s->buf + n.psum + i * sizeof(uint64_t), &v, sizeof(v));
        }
        break;
    }
    case TDM_DN_REPEAT: {
        uint32_t cd;
        n.n = d->u.r.count;
        n.stride = d->u.r.stride;
        n.disp = d->u.r.disp;
        n.arr = ser_node(s, d->u.r.child, &cd);
        depth = cd + 1;
        break;
    }
    default: {
        size_t m = d->u.l.n;
        uint64_t *kids = malloc((m ? m : 1) * sizeof(uint64_t));
        if (!kids) {
            s->err = -ENOMEM;
            return 0;
        }
        for (size_t i = 0; i < m && !s->err; i++) {
            uint32_t cd;
            kids[i] = ser_node(s, d->u.l.child[i], &cd);
            depth = TDM_MAX(depth, cd + 1);
        }
        n.n = m;
        n.arr = ser_alloc(s, m * sizeof(tdm_dflat_ent_t));
        n.psum = ser_alloc(s, (m + 1) * sizeof(uint64_t));
        if (!s->err) {
            for (size_t i = 0; i < m; i++) {
                tdm_dflat_ent_t e = {.disp = d->u.l.disp[i], .child = kids[i]};
                memcpy(s->buf + n.arr + i * sizeof(e), &e, sizeof(e));
            }
            for (size_t i = 0; i <= m; i++) {
                uint64_t v = d->u.l.psum[i];
                memcpy(s->buf + n.psum + i * sizeof(uint64_t), &v, sizeof(v));
            }
        }
        free(kids);
        break;
    }
    }
    uint64_t off = ser_alloc(s, sizeof(n));
    if (s->err)
        return 0;
    memcpy(s->buf + off, &n, sizeof(n));
    map_put(s, d, off, depth);
    *depth_p = depth;
    return off;
}

int tdm_dn_flatten_program(const tdm_dnode_t *root, void **flat_p, size_t *len_p) {
    ser_t s = {0};
    uint64_t hdr = ser_alloc(&s, sizeof(tdm_dflat_hdr_t));
    uint32_t depth = 0;
    uint64_t r = ser_node(&s, root, &depth);
    free(s.map);
    if (s.err || depth > TDM_DFLAT_MAX_DEPTH) {
        free(s.buf);
        return s.err ? s.err : -E2BIG;
    }
    tdm_dflat_hdr_t h = {.magic = TDM_DFLAT_MAGIC, .depth = depth, .len = s.len, .root = r};
    memcpy(s.buf + hdr, &h, sizeof(h));
    *flat_p = s.buf;
    *len_p = s.len;
    return 0;
}

/* ---- checking a flat form read from elsewhere ---- */

typedef struct chk {
    const char *b;
    size_t len;
    unsigned char *ok; /* one bit per 8-byte offset: node already checked */
} chk_t;

static bool in_range(const chk_t *c, uint64_t off, uint64_t n, size_t elem) {
    return off % 8 == 0 && off <= c->len && n <= (c->len - off) / elem;
}

static bool chk_node(chk_t *c, uint64_t off, uint64_t parent, int depth) {
    if (depth > TDM_DFLAT_MAX_DEPTH || off >= parent ||
        !in_range(c, off, 1, sizeof(tdm_dflat_node_t)))
        return false;
    if (c->ok[off / 64] & (1u << ((off / 8) % 8)))
        return true;
    const tdm_dflat_node_t *n = (const tdm_dflat_node_t *)(c->b + off);
    switch (n->kind) {
    case TDM_DN_SEGS: {
        if (!in_range(c, n->arr, n->n, sizeof(tdm_seg_t)) || !in_range(c, n->psum, n->n + 1, 8))
            return false;
        const tdm_seg_t *seg = (const tdm_seg_t *)(c->b + n->arr);
        const uint64_t *ps = (const uint64_t *)(c->b + n->psum);
        if (ps[0] != 0)
            return false;
        for (uint64_t i = 0; i < n->n; i++)
            if (seg[i].len == 0 || ps[i + 1] - ps[i] != seg[i].len || ps[i + 1] < ps[i])
                return false;
        if (ps[n->n] != n->size)
            return false;
        break;
    }
    case TDM_DN_REPEAT: {
        if (!chk_node(c, n->arr, off, depth + 1))
            return false;
        const tdm_dflat_node_t *ch = (const tdm_dflat_node_t *)(c->b + n->arr);
        if (ch->size == 0 || n->n > UINT64_MAX / ch->size || n->n * ch->size != n->size)
            return false;
        break;
    }
    case TDM_DN_LIST: {
        if (!in_range(c, n->arr, n->n, sizeof(tdm_dflat_ent_t)) ||
            !in_range(c, n->psum, n->n + 1, 8))
            return false;
        const tdm_dflat_ent_t *e = (const tdm_dflat_ent_t *)(c->b + n->arr);
        const uint64_t *ps = (const uint64_t *)(c->b + n->psum);
        if (ps[0] != 0)
            return false;
        for (uint64_t i = 0; i < n->n; i++) {
            if (!chk_node(c, e[i].child, off, depth + 1))
                return false;
            const tdm_dflat_node_t *ch = (const tdm_dflat_node_t *)(c->b + e[i].child);
            if (ch->size == 0 || ps[i + 1] < ps[i] || ps[i + 1] - ps[i] != ch->size)
                return false;
        }
        if (ps[n->n] != n->size)
            return false;
        break;
    }
    default:
        return false;
    }
    c->ok[off / 64] |= (unsigned char)(1u << ((off / 8) % 8));
    return true;
}

int tdm_dtype_flat_check(const void *flat, size_t len, size_t *item_size_p) {
    const tdm_dflat_hdr_t *h = flat;
    if (len < sizeof(*h) || (uintptr_t)flat % 8 || h->magic != TDM_DFLAT_MAGIC || h->len != len)
        return -EINVAL;
    chk_t c = {.b = flat, .len = len, .ok = calloc(len / 64 + 1, 1)};
    if (!c.ok)
        return -ENOMEM;
    bool good = h->root >= sizeof(*h) && chk_node(&c, h->root, UINT64_MAX, 0);
    free(c.ok);
    if (!good)
        return -EINVAL;
    *item_size_p = ((const tdm_dflat_node_t *)((const char *)flat + h->root))->size;
    return 0;
}

/* ---- walking ---- */

enum { W_PACK, W_UNPACK, W_IOV };

typedef struct walk {
    int mode;
    const char *blob;
    char *stream;      /* pack: next byte to write; unpack: next byte to read */
    size_t left;       /* stream bytes still to move */
    struct iovec *iov; /* W_IOV */
    int niov, maxiov;
} walk_t;

#define NODE(_w, _off) ((const tdm_dflat_node_t *)((_w)->blob + (_off)))
#define SEGS(_w, _n) ((const tdm_seg_t *)((_w)->blob + (_n)->arr))
#define ENTS(_w, _n) ((const tdm_dflat_ent_t *)((_w)->blob + (_n)->arr))
#define PSUM(_w, _n) ((const uint64_t *)((_w)->blob + (_n)->psum))

/* Move n bytes at mem; false when the iovec array is full (nothing done). */
static inline bool emit(walk_t *w, uintptr_t mem, size_t n) {
    switch (w->mode) {
    case W_PACK:
        tdm_copy(w->stream, (const void *)mem, n);
        w->stream += n;
        break;
    case W_UNPACK:
        tdm_copy((void *)mem, w->stream, n);
        w->stream += n;
        break;
    default:
        if (w->niov &&
            (uintptr_t)w->iov[w->niov - 1].iov_base + w->iov[w->niov - 1].iov_len == mem) {
            w->iov[w->niov - 1].iov_len += n;
        } else {
            if (w->niov == w->maxiov)
                return false;
            w->iov[w->niov].iov_base = (void *)mem;
            w->iov[w->niov].iov_len = n;
            w->niov++;
        }
        break;
    }
    w->left -= n;
    return true;
}

/* Largest i < n with psum[i] <= off (psum ascending, psum[0] == 0). */
static size_t psum_find(const uint64_t *psum, size_t n, size_t off) {
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (psum[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The vector loops: `full` blocks of len bytes, stride apart. Constant lengths
 * let the compiler turn each memcpy into a load and a store. */
#define STRIDED(_dst_step, _src_step)                                                              \
    do {                                                                                           \
        switch (len) {                                                                             \
        case 4:                                                                                    \
            for (size_t k = 0; k < full; k++, dst += (_dst_step), src += (_src_step))              \
                memcpy(dst, src, 4);                                                               \
            break;                                                                                 \
        case 8:                                                                                    \
            for (size_t k = 0; k < full; k++, dst += (_dst_step), src += (_src_step))              \
                memcpy(dst, src, 8);                                                               \
            break;                                                                                 \
        case 16:                                                                                   \
            for (size_t k = 0; k < full; k++, dst += (_dst_step), src += (_src_step))              \
                memcpy(dst, src, 16);                                                              \
            break;                                                                                 \
        default:                                                                                   \
            for (size_t k = 0; k < full; k++, dst += (_dst_step), src += (_src_step))              \
                memcpy(dst, src, len);                                                             \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

/* count blocks of len bytes, stride apart from p, from stream offset off. */
static bool walk_vector(walk_t *w, uintptr_t p, size_t count, ptrdiff_t stride, size_t len,
                        size_t off) {
    size_t i = off / len, in = off % len;
    p += (uintptr_t)((ptrdiff_t)i * stride);
    if (in) {
        size_t n = TDM_MIN(len - in, w->left);
        if (!emit(w, p + in, n))
            return false;
        p += (uintptr_t)stride;
        i++;
    }
    size_t full = TDM_MIN(count - i, w->left / len);
    if (w->mode == W_PACK) {
        char *dst = w->stream;
        const char *src = (const char *)p;
        STRIDED((ptrdiff_t)len, stride);
        w->stream = dst;
        w->left -= full * len;
        p = (uintptr_t)src;
    } else if (w->mode == W_UNPACK) {
        char *dst = (char *)p;
        const char *src = w->stream;
        STRIDED(stride, (ptrdiff_t)len);
        w->stream = (char *)src;
        w->left -= full * len;
        p = (uintptr_t)dst;
    } else {
        for (size_t k = 0; k < full; k++, p += (uintptr_t)stride)
            if (!emit(w, p, len))
                return false;
    }
    i += full;
    if (w->left && i < count)
        return emit(w, p, w->left); /* a partial last block */
    return true;
}

static bool walk_node(walk_t *w, const tdm_dflat_node_t *d, uintptr_t base, size_t off) {
    switch (d->kind) {
    case TDM_DN_SEGS: {
        const tdm_seg_t *seg = SEGS(w, d);
        const uint64_t *psum = PSUM(w, d);
        size_t n = d->n;
        size_t i = off ? psum_find(psum, n, off) : 0;
        size_t in = off - psum[i];
        for (; i < n && w->left; i++, in = 0) {
            size_t len = TDM_MIN(seg[i].len - in, w->left);
            if (!emit(w, base + (uintptr_t)seg[i].off + in, len))
                return false;
        }
        return true;
    }
    case TDM_DN_REPEAT: {
        const tdm_dflat_node_t *c = NODE(w, d->arr);
        uintptr_t p = base + (uintptr_t)d->disp;
        if (c->kind == TDM_DN_SEGS && c->n == 1) {
            const tdm_seg_t *s = SEGS(w, c);
            return walk_vector(w, p + (uintptr_t)s->off, d->n, d->stride, s->len, off);
        }
        size_t cs = c->size;
        size_t i = off / cs, in = off % cs;
        for (p += (uintptr_t)((ptrdiff_t)i * d->stride); i < d->n && w->left;
             i++, in = 0, p += (uintptr_t)d->stride)
            if (!walk_node(w, c, p, in))
                return false;
        return true;
    }
    default: {
        const tdm_dflat_ent_t *e = ENTS(w, d);
        const uint64_t *psum = PSUM(w, d);
        size_t n = d->n;
        size_t i = off ? psum_find(psum, n, off) : 0;
        size_t in = off - psum[i];
        for (; i < n && w->left; i++, in = 0)
            if (!walk_node(w, NODE(w, e[i].child), base + (uintptr_t)e[i].disp, in))
                return false;
        return true;
    }
    }
}

/* The message: count items, extent apart; w->left is clipped to it. */
static void walk_msg(walk_t *w, uintptr_t buf, size_t count, ptrdiff_t extent, size_t off) {
    const tdm_dflat_hdr_t *h = (const tdm_dflat_hdr_t *)w->blob;
    const tdm_dflat_node_t *root = NODE(w, h->root);
    size_t size = root->size, total = count * size;
    if (!size || off >= total)
        return;
    if (w->left > total - off)
        w->left = total - off;
    if (root->kind == TDM_DN_SEGS && root->n == 1) { /* items are single runs: a vector */
        const tdm_seg_t *s = SEGS(w, root);
        walk_vector(w, buf + (uintptr_t)s->off, count, extent, s->len, off);
        return;
    }
    size_t i = off / size, in = off % size;
    for (uintptr_t p = buf + (uintptr_t)((ptrdiff_t)i * extent); i < count && w->left;
         i++, in = 0, p += (uintptr_t)extent)
        if (!walk_node(w, root, p, in))
            return;
}

void tdm_dtype_pack(const void *buf, size_t count, const tdm_dtype_t *dt, size_t off, void *dst,
                    size_t len) {
    if (!len)
        return;
    if (dt->contig) {
        tdm_copy(dst, (const char *)buf + dt->true_lb + (ptrdiff_t)off, len);
        return;
    }
    walk_t w = {.mode = W_PACK, .blob = dt->flat, .stream = dst, .left = len};
    walk_msg(&w, (uintptr_t)buf, count, tdm_dtype_extent(dt), off);
}

void tdm_dtype_unpack(void *buf, size_t count, const tdm_dtype_t *dt, size_t off, const void *src,
                      size_t len) {
    if (!len)
        return;
    if (dt->contig) {
        tdm_copy((char *)buf + dt->true_lb + (ptrdiff_t)off, src, len);
        return;
    }
    walk_t w = {.mode = W_UNPACK, .blob = dt->flat, .stream = (char *)src, .left = len};
    walk_msg(&w, (uintptr_t)buf, count, tdm_dtype_extent(dt), off);
}

static int iov_common(const void *flat, uintptr_t buf, size_t count, ptrdiff_t extent, size_t off,
                      size_t len, struct iovec *iov, int max, size_t *consumed_p) {
    *consumed_p = 0;
    if (!len || max <= 0)
        return 0;
    walk_t w = {.mode = W_IOV, .blob = flat, .left = len, .iov = iov, .maxiov = max};
    walk_msg(&w, buf, count, extent, off);
    /* walk_msg clipped `left` to the message; count what the iovecs hold */
    size_t moved = 0;
    for (int i = 0; i < w.niov; i++)
        moved += iov[i].iov_len;
    *consumed_p = moved;
    return w.niov;
}

int tdm_dtype_iov(const void *buf, size_t count, const tdm_dtype_t *dt, size_t off, size_t len,
                  struct iovec *iov, int max, size_t *consumed_p) {
    if (dt->contig && len && max > 0) {
        size_t total = count * dt->size;
        size_t n = off >= total ? 0 : TDM_MIN(len, total - off);
        *consumed_p = n;
        if (!n)
            return 0;
        iov[0].iov_base = (char *)buf + dt->true_lb + (ptrdiff_t)off;
        iov[0].iov_len = n;
        return 1;
    }
    return iov_common(dt->flat, (uintptr_t)buf, count, tdm_dtype_extent(dt), off, len, iov, max,
                      consumed_p);
}

int tdm_dtype_iov_remote(const void *flat, uintptr_t buf, size_t count, ptrdiff_t extent,
                         size_t off, size_t len, struct iovec *iov, int max, size_t *consumed_p) {
    return iov_common(flat, buf, count, extent, off, len, iov, max, consumed_p);
}
