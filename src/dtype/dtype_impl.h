/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside dtype/: the layout program, the type signature and the per-type
 * extension record. Nothing outside src/dtype/ (and tests/unit) includes this.
 *
 * Layout program
 *   A node describes where the bytes of its packed stream lie, relative to a
 *   base address:
 *     SEGS    n segments (off, len) in stream order, adjacent ones merged;
 *             psum[i] = stream bytes before segment i (binary search to seek).
 *     REPEAT  count copies of child, copy i at disp + i * stride.
 *     LIST    n children, child i at disp[i]; psum as for SEGS.
 *   Nodes are immutable once built and shared between types by reference
 *   count. The builders normalise: empty pieces vanish, count-1 repeats and
 *   one-entry lists become their (shifted) child, a repeat of one segment whose
 *   stride equals its length becomes one segment, nested repeats that tile
 *   merge, anything with at most TDM_DTYPE_SMALL_SEGS segments becomes a SEGS
 *   node, and a long SEGS node with constant length and stride becomes a REPEAT.
 *
 * Signature
 *   The sequence of basic elements of one item, kept as the constructors built
 *   it: BASIC (a predefined type: one element, or two for the pair types),
 *   REPEAT (sig_n items of sig_child: every constructor but struct), LIST
 *   (struct: sig_n entries of sig_bl[i] items of sig_types[i]). Element counts
 *   of partial items and the external32 conversion walk it.
 */
#ifndef TDM_DTYPE_IMPL_H
#define TDM_DTYPE_IMPL_H

#include "dtype.h"

#include <stdbool.h>

enum { TDM_DN_SEGS, TDM_DN_REPEAT, TDM_DN_LIST };

typedef struct tdm_dnode {
    int refs;
    int kind;
    size_t size;  /* packed bytes */
    size_t nsegs; /* segments if fully flattened (an upper bound; saturates at SIZE_MAX) */
    union {
        struct {
            size_t n;
            tdm_seg_t *seg;
            size_t *psum; /* n + 1 entries */
        } s;
        struct {
            size_t count;
            ptrdiff_t stride, disp;
            struct tdm_dnode *child;
        } r;
        struct {
            size_t n;
            ptrdiff_t *disp;
            struct tdm_dnode **child;
            size_t *psum; /* n + 1 entries */
        } l;
    } u;
} tdm_dnode_t;

/* Builders (layout.c). None consumes a reference of its arguments; each
 * returns a new reference, or NULL when out of memory. */
tdm_dnode_t *tdm_dn_segs(const tdm_seg_t *segs, size_t n);
tdm_dnode_t *tdm_dn_repeat(size_t count, ptrdiff_t stride, ptrdiff_t disp, tdm_dnode_t *child);
tdm_dnode_t *tdm_dn_list(size_t n, const ptrdiff_t *disps, tdm_dnode_t *const *children);
tdm_dnode_t *tdm_dn_shift(tdm_dnode_t *d, ptrdiff_t disp);
void tdm_dn_retain(tdm_dnode_t *d);
void tdm_dn_release(tdm_dnode_t *d);
/* Flatten into out[] (capacity cap, which must be >= d->nsegs), merging
 * adjacent segments; returns the number written. */
size_t tdm_dn_flatten(const tdm_dnode_t *d, tdm_seg_t *out, size_t cap);
/* A SEGS node of exactly one segment. */
bool tdm_dn_one_seg(const tdm_dnode_t *d);
/* Nodes in the tree (tests and debugging; shared children counted once per use). */
size_t tdm_dn_count(const tdm_dnode_t *d);
/* One line per node, indented, for debugging and the unit tests. */
void tdm_dn_dump(const tdm_dnode_t *d, char *out, size_t cap);

/* Flat layout (flat.c): the tree written into one block, children before
 * their parents, every reference a byte offset from the block's start (all
 * 8-byte aligned), shared subtrees written once. */
#define TDM_DFLAT_MAGIC 0x314c4454u /* "TDL1" */
#define TDM_DFLAT_MAX_DEPTH TDM_DTYPE_MAX_DEPTH

typedef struct tdm_dflat_hdr {
    uint32_t magic;
    uint32_t depth; /* nodes on the longest path from the root */
    uint64_t len;   /* bytes of the block */
    uint64_t root;  /* offset of the root node */
} tdm_dflat_hdr_t;

typedef struct tdm_dflat_node {
    uint32_t kind; /* TDM_DN_* */
    uint32_t rsvd;
    uint64_t size;        /* packed bytes */
    uint64_t n;           /* SEGS: segments; REPEAT: count; LIST: children */
    int64_t stride, disp; /* REPEAT */
    uint64_t arr;         /* SEGS: tdm_seg_t[n]; LIST: tdm_dflat_ent_t[n]; REPEAT: the child node */
    uint64_t psum;        /* SEGS, LIST: uint64_t[n + 1] stream bytes before each entry */
} tdm_dflat_node_t;

typedef struct tdm_dflat_ent {
    int64_t disp;
    uint64_t child;
} tdm_dflat_ent_t;

/* Write the tree out; 0 or -ENOMEM. The block is malloc'd (free() it). */
int tdm_dn_flatten_program(const tdm_dnode_t *root, void **flat_p, size_t *len_p);

/* Conversion of one predefined element to and from external32. */
enum {
    TDM_CV_NONE,  /* markers: no data */
    TDM_CV_COPY,  /* bytes as they are */
    TDM_CV_SWAP,  /* same size, big-endian */
    TDM_CV_SINT,  /* signed integer, resized (MPI_LONG: 8 -> 4) */
    TDM_CV_UINT,  /* unsigned integer, resized (MPI_WCHAR: 4 -> 2) */
    TDM_CV_LDBL,  /* x87 80-bit long double <-> IEEE binary128 */
    TDM_CV_CSWAP, /* complex: each half big-endian */
    TDM_CV_CLDBL, /* complex long double: each half as TDM_CV_LDBL */
};

typedef struct tdm_basic_info {
    int handle;
    const char *name;
    unsigned short size;  /* native bytes (packed) */
    unsigned short ext32; /* external32 bytes */
    unsigned char conv;   /* TDM_CV_* (for pairs: unused, see comp) */
    unsigned char align;  /* natural alignment (struct extent padding) */
    int comp[2];          /* pair types: the two elements; 0 for one-element types */
} tdm_basic_info_t;

enum { TDM_SIG_BASIC, TDM_SIG_REPEAT, TDM_SIG_LIST };

typedef struct tdm_dtype_ext {
    /* signature */
    int sig_kind;
    size_t sig_n;
    tdm_dtype_t *sig_child;        /* REPEAT (retained) */
    size_t *sig_bl;                /* LIST */
    tdm_dtype_t **sig_types;       /* LIST (retained) */
    const tdm_basic_info_t *binfo; /* BASIC */
    size_t elem_size;              /* size of every element when all are alike in size, else 0 */
    int elem_basic;                /* the one predefined element type, when uniform, else 0 */
    size_t ext32_size;
    size_t align;
    unsigned lb_marked : 1, ub_marked : 1; /* sticky MPI_LB / MPI_UB bounds */
    unsigned has_contents : 1;
    tdm_dtype_contents_t contents;
    char name[128];
    struct tdm_attr_list *attrs;
} tdm_dtype_ext_t;

static inline tdm_dtype_ext_t *tdm_dtype_ext(const tdm_dtype_t *dt) {
    return (tdm_dtype_ext_t *)dt->ext;
}

/* The table entry of a predefined (one- or two-element) type, or NULL. */
const tdm_basic_info_t *tdm_dtype_basic_info(int handle);
/* A fresh user type object with its extension, one reference; NULL on ENOMEM. */
tdm_dtype_t *tdm_dtype_alloc(void);
/* Give dt a copy of from's description (its old types retained again); nothing when
 * from has none. 0 or -ENOMEM. */
int tdm_dtype_record_copy(tdm_dtype_t *dt, const tdm_dtype_t *from);

#endif
