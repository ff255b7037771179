/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes as the engine sees them: a size, bounds, and the layout of one item.
 *
 * Layout
 *   Every type has a layout program (`layout`, built by the constructors and
 *   owned by dtype/): a small tree of nodes, each a list of (offset, length)
 *   segments, a repetition {count, stride, child} or a list of placed children.
 *   A vector of N blocks is one repetition node, not N segments, so sending a
 *   strided type costs a tight copy loop, not a walk over a segment array.
 *   Adjacent segments are merged and small subtrees (up to TDM_DTYPE_SMALL_SEGS
 *   segments) are flattened into one segment list.
 *
 *   `segs`/`nsegs` is the fully flattened layout of one item as (offset, length)
 *   segments relative to the buffer address, kept for committed types with few
 *   segments per item (TDM_DTYPE_LIST_SEGS below). For others `segs` is NULL
 *   and `nsegs` is 0: reach the layout through tdm_dtype_pack/unpack (which is
 *   what p2p does), tdm_dtype_iov (for CMA), or `flat` from another process. Contiguous types (one
 * segment starting at true_lb whose length equals the extent) take a memcpy fast path.
 *
 *   At commit the tree is also written out as `flat`: the same program with
 *   offsets instead of pointers, in one block, which pack/unpack/iov walk and
 *   which a peer can read by CMA to address this buffer whatever its size
 *   (tdm_dtype_iov_remote).
 *
 * Pack/unpack work on a byte window [off, off+len) of the packed stream of
 * `count` items, so fragments of a message can be moved independently. Finding
 * the start of a window costs O(depth * log(width)) of the layout tree, never a
 * walk from the start of the message.
 *
 * Objects are reference counted (`refs`): the user's handle, every message in
 * flight (p2p retains on send/recv) and every type built from it hold one, so
 * MPI_Type_free while a message using the type is in flight is safe.
 *
 * Threads (MPI_THREAD_MULTIPLE): the predefined table is written once at
 * initialisation and only read after; user types live in a handle table
 * (base/htab.h: a lock to add, none to look up; slots never reused); `refs`, and
 * those of the layout nodes types share, are atomic when threaded (base/ref.h),
 * so threads may build types from the same old types and free them at once. A
 * type's own fields are written by its constructor and commit before its handle
 * is returned and only read after; committing or naming one type from two
 * threads at once is the user's race.
 */
#ifndef TDM_DTYPE_H
#define TDM_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Subtrees of the layout with at most this many segments become one segment list. */
#define TDM_DTYPE_SMALL_SEGS 64
/* Committed types whose flattened item has at most TDM_DTYPE_SMALL_SEGS
 * segments keep `segs`; so do those with at most TDM_DTYPE_LIST_SEGS whose
 * segments average TDM_DTYPE_LIST_MINLEN bytes or more. Others have
 * segs == NULL (see `flat`). The bar is high because process_vm_readv pins the
 * pages of each remote iovec separately: a 1 MB subarray of 1 KiB rows moved by
 * CMA, one iovec per row, took 3.5x longer than packing it through the
 * shared-memory pipeline (bench/dtype_bw, 2 ranks, one node). */
#define TDM_DTYPE_LIST_SEGS 4096
/* Layout trees nest at most this deep (the walkers recurse once per level, and a peer's
 * program is checked against it): committing a deeper type fails with -E2BIG. */
#define TDM_DTYPE_MAX_DEPTH 256
#define TDM_DTYPE_LIST_MINLEN 16384

typedef struct tdm_seg {
    ptrdiff_t off; /* from the buffer address of the item */
    size_t len;
} tdm_seg_t;

struct tdm_dnode;     /* layout program node (dtype_impl.h) */
struct tdm_attr_list; /* attribute list (comm/attr.h) */

typedef struct tdm_dtype {
    int handle;
    int refs; /* user handle + messages in flight + types built from it */
    unsigned committed : 1;
    unsigned predefined : 1;
    unsigned contig : 1; /* one segment, and items tile without gaps (size == extent) */
    size_t size;         /* data bytes in one item */
    ptrdiff_t lb, ub;    /* bounds (with markers / resized) */
    ptrdiff_t true_lb, true_ub;
    int basic;         /* the predefined type all data is made of (a pair type such as
                          MPI_DOUBLE_INT or MPI_2INT counts as one), 0 if mixed */
    size_t basic_size; /* bytes of that predefined type in the packed stream */
    size_t nelems;     /* basic elements in one item (MPI_Get_elements; a pair is two) */
    size_t nsegs;      /* see above: 0 when the layout is too large to list */
    tdm_seg_t *segs;   /* one item's layout; for predefined types points at one_seg */
    tdm_seg_t one_seg;
    struct tdm_dnode *layout; /* layout program of one item (dtype/ internal) */
    const void *flat;         /* committed: the layout program in a position-independent form
                                 (no pointers) that a peer can read by CMA; see tdm_dtype_iov_remote */
    size_t flat_len;          /* its bytes */
    void *ext;                /* signature, constructor description, name, attributes */
} tdm_dtype_t;

static inline ptrdiff_t tdm_dtype_extent(const tdm_dtype_t *dt) {
    return dt->ub - dt->lb;
}

/* Look up a handle; NULL if it does not name a datatype. */
tdm_dtype_t *tdm_dtype_get(int handle);
/* MPI_BYTE, for the layers below the MPI one. */
tdm_dtype_t *tdm_dtype_byte(void);
/* Predefined types are set up once; 0 or -ENOMEM. */
int tdm_dtype_init(void);
void tdm_dtype_fini(void);
/* Give a new (heap-allocated) user type its handle; 0 or -ENOMEM. */
int tdm_dtype_register(tdm_dtype_t *dt);
void tdm_dtype_retain(tdm_dtype_t *dt);
void tdm_dtype_release(tdm_dtype_t *dt);

/* Copy stream bytes [off, off+len) of `count` items at buf into dst. */
void tdm_dtype_pack(const void *buf, size_t count, const tdm_dtype_t *dt, size_t off, void *dst,
                    size_t len);
/* Copy len bytes from src into stream bytes [off, off+len) of `count` items at buf. */
void tdm_dtype_unpack(void *buf, size_t count, const tdm_dtype_t *dt, size_t off, const void *src,
                      size_t len);
/* Describe stream bytes [off, off+len) of `count` items at buf as at most `max`
 * iovecs (memory-adjacent pieces merged), for process_vm_readv/writev. Returns
 * the number filled; *consumed_p gets the stream bytes they cover, which is less
 * than len when `max` ran out: call again at off + *consumed_p. */
int tdm_dtype_iov(const void *buf, size_t count, const tdm_dtype_t *dt, size_t off, size_t len,
                  struct iovec *iov, int max, size_t *consumed_p);

/* The same for a buffer in another process: `flat`/`flat_len` are that
 * process's dt->flat and dt->flat_len (read by CMA and checked with
 * tdm_dtype_flat_check), `buf`, `count` and `extent` its buffer address, item
 * count and tdm_dtype_extent(). The iovecs hold addresses in that process. */
int tdm_dtype_iov_remote(const void *flat, uintptr_t buf, size_t count, ptrdiff_t extent,
                         size_t off, size_t len, struct iovec *iov, int max, size_t *consumed_p);
/* Is `flat` (len bytes, e.g. read from a peer) a well-formed layout that the
 * walker can follow without reading outside it? Stream bytes of one item go to *item_size_p. */
int tdm_dtype_flat_check(const void *flat, size_t len, size_t *item_size_p);

/* Basic elements in `bytes` of a message of this type (MPI_Get_elements);
 * -1 when bytes do not end on an element boundary. */
long long tdm_dtype_elements(const tdm_dtype_t *dt, size_t bytes);
/* Bytes that `elements` basic elements of this type occupy; -1 if undefined. */
long long tdm_dtype_elements_bytes(const tdm_dtype_t *dt, size_t elements);

/* ---- constructors (create.c) ----
 * Each builds a new type with one reference, not committed and without a
 * handle (tdm_dtype_register gives it one). Arguments are checked by the
 * caller; these fail only with -ENOMEM, or -EOVERFLOW when a size or bound does
 * not fit. Counts are numbers of `old` items; displacements and strides bytes. */
int tdm_dtype_create_contig(size_t count, tdm_dtype_t *old, tdm_dtype_t **new_p);
int tdm_dtype_create_hvector(size_t count, size_t blocklen, ptrdiff_t stride, tdm_dtype_t *old,
                             tdm_dtype_t **new_p);
/* `blocklens` NULL: every block has `blocklen` items (the *_block constructors). */
int tdm_dtype_create_hindexed(size_t count, const size_t *blocklens, size_t blocklen,
                              const ptrdiff_t *disps, tdm_dtype_t *old, tdm_dtype_t **new_p);
int tdm_dtype_create_struct(size_t count, const size_t *blocklens, const ptrdiff_t *disps,
                            tdm_dtype_t *const *types, tdm_dtype_t **new_p);
int tdm_dtype_create_resized(tdm_dtype_t *old, ptrdiff_t lb, ptrdiff_t extent, tdm_dtype_t **new_p);
int tdm_dtype_create_dup(tdm_dtype_t *old, tdm_dtype_t **new_p);
/* What MPI_Type_get_contents returns for a derived old type (MPI-4.1 §5.1.13): a new type
 * of its own (no handle, name or attributes yet) equivalent to `old`: the same layout
 * (shared), bounds and description, committed if `old` is. */
int tdm_dtype_create_equiv(tdm_dtype_t *old, tdm_dtype_t **new_p);
/* order_c: 1 for MPI_ORDER_C, 0 for MPI_ORDER_FORTRAN. */
int tdm_dtype_create_subarray(int ndims, const size_t *sizes, const size_t *subsizes,
                              const size_t *starts, int order_c, tdm_dtype_t *old,
                              tdm_dtype_t **new_p);
/* distribs: MPI_DISTRIBUTE_*; dargs: MPI_DISTRIBUTE_DFLT_DARG or a block size
 * (checked by the caller: a BLOCK darg covers the dimension). */
int tdm_dtype_create_darray(int size, int rank, int ndims, const size_t *gsizes,
                            const int *distribs, const int *dargs, const int *psizes, int order_c,
                            tdm_dtype_t *old, tdm_dtype_t **new_p);
/* Commit: marks the type usable for communication and fills segs/nsegs. */
int tdm_dtype_commit(tdm_dtype_t *dt);

/* ---- description (MPI_Type_get_envelope / get_contents) ---- */
typedef struct tdm_dtype_contents {
    int combiner; /* MPI_COMBINER_* */
    int large;    /* made by a large-count (_c) constructor */
    size_t ni, na, nc, nt;
    int *ints;
    ptrdiff_t *aints;
    long long *counts; /* large counts (MPI_Count) */
    int *types;        /* handles; each one is retained while this type lives */
} tdm_dtype_contents_t;

/* One argument of a constructor as its description keeps it (MPI-4.1 §5.1.13):
 * `n` values (a scalar: 1) at `v`, ints or 64-bit (MPI_Count, MPI_Aint). An INT
 * stays an integer in both forms (ndims, order, distribs); a COUNT is an integer
 * of the int form and a large count of the _c form; an ADDR an address of the int
 * form and a large count of the _c form. */
typedef enum { TDM_DTYPE_ARG_INT, TDM_DTYPE_ARG_COUNT, TDM_DTYPE_ARG_ADDR } tdm_dtype_arg_kind_t;
typedef struct tdm_dtype_arg {
    tdm_dtype_arg_kind_t kind;
    bool wide; /* v holds int64_t, else int */
    size_t n;
    const void *v;
} tdm_dtype_arg_t;
#define TDM_DTYPE_ARG(_kind, _n, _p)                                                               \
    ((tdm_dtype_arg_t){.kind = (_kind),                                                            \
                       .n = (size_t)(_n),                                                          \
                       .v = (_p),                                                                  \
                       .wide = _Generic((_p), int *: false, const int *: false, int64_t *: true,   \
                                        const int64_t *: true)})
#define TDM_DTYPE_INTS(_n, _p) TDM_DTYPE_ARG(TDM_DTYPE_ARG_INT, _n, _p)
#define TDM_DTYPE_COUNTS(_n, _p) TDM_DTYPE_ARG(TDM_DTYPE_ARG_COUNT, _n, _p)
#define TDM_DTYPE_ADDRS(_n, _p) TDM_DTYPE_ARG(TDM_DTYPE_ARG_ADDR, _n, _p)
static inline int64_t tdm_dtype_arg_at(const tdm_dtype_arg_t *a, size_t i) {
    return a->wide ? ((const int64_t *)a->v)[i] : ((const int *)a->v)[i];
}

/* Record what get_envelope/get_contents report for a user type: its combiner and
 * the constructor's arguments in their order, filed as the int form (large false)
 * or the large-count form files them, and its old types (retained while dt lives).
 * 0 or -ENOMEM. */
int tdm_dtype_record(tdm_dtype_t *dt, int combiner, bool large, const tdm_dtype_arg_t *args,
                     size_t nargs, size_t nt, const int *types);
/* NULL for predefined types (combiner MPI_COMBINER_NAMED). */
const tdm_dtype_contents_t *tdm_dtype_contents(const tdm_dtype_t *dt);

/* ---- names and attributes ---- */
const char *tdm_dtype_name(const tdm_dtype_t *dt);
/* Truncated to MPI_MAX_OBJECT_NAME - 1 characters. */
void tdm_dtype_set_name(tdm_dtype_t *dt, const char *name);
/* The type's attribute list, for comm/attr.h. */
struct tdm_attr_list **tdm_dtype_attrs(tdm_dtype_t *dt);

/* ---- external32 (typesig.c) ---- */
/* Bytes one item occupies in the external32 representation. */
size_t tdm_dtype_ext32_size(const tdm_dtype_t *dt);
/* Convert `count` items at buf into external32 at dst (count * ext32_size
 * bytes), and back. 0 or -ENOMEM. */
int tdm_dtype_pack_ext32(const void *buf, size_t count, const tdm_dtype_t *dt, void *dst);
int tdm_dtype_unpack_ext32(const void *src, void *buf, size_t count, const tdm_dtype_t *dt);

#endif
