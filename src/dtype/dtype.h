/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes as the engine sees them: a size, bounds, and a flattened layout of
 * one item as (offset, length) segments relative to the buffer address, merged
 * where adjacent. Contiguous types (one segment starting at true_lb whose
 * length equals the extent) take a memcpy fast path.
 *
 * Pack/unpack work on a byte window [off, off+len) of the packed stream of
 * `count` items, so fragments of a message can be moved independently.
 */
#ifndef TDM_DTYPE_H
#define TDM_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct tdm_seg {
    ptrdiff_t off; /* from the buffer address of the item */
    size_t len;
} tdm_seg_t;

typedef struct tdm_dtype {
    int handle;
    int refs;          /* user handle + messages in flight + types built from it */
    unsigned committed : 1;
    unsigned predefined : 1;
    unsigned contig : 1; /* one segment, and items tile without gaps (size == extent) */
    size_t size;         /* data bytes in one item */
    ptrdiff_t lb, ub;    /* bounds (with markers / resized) */
    ptrdiff_t true_lb, true_ub;
    int basic;           /* handle of the basic type every element has, 0 if mixed */
    size_t basic_size;   /* size of that basic type */
    size_t nsegs;
    tdm_seg_t *segs;     /* one item's layout; for predefined types points at one_seg */
    tdm_seg_t one_seg;
    void *ext;           /* constructor description, name, attributes (dtype/ owns it) */
} tdm_dtype_t;

static inline ptrdiff_t tdm_dtype_extent(const tdm_dtype_t *dt) {
    return dt->ub - dt->lb;
}

/* Look up a handle; NULL if it does not name a datatype. */
tdm_dtype_t *tdm_dtype_get(int handle);
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

/* Basic elements in `bytes` of a message of this type (MPI_Get_elements);
 * -1 when bytes do not end on an element boundary. */
long long tdm_dtype_elements(const tdm_dtype_t *dt, size_t bytes);
/* Bytes that `elements` basic elements of this type occupy; -1 if undefined. */
long long tdm_dtype_elements_bytes(const tdm_dtype_t *dt, size_t elements);

#endif
