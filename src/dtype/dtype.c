/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype objects: the predefined ones (built once from the MPICH ABI handle
 * values) and the table of user types, plus pack/unpack over flattened
 * segments. Constructors live in their own files.
 */
#include "dtype.h"
#include "../base/log.h"
#include "../base/util.h"
#include "mpi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Builtin handles are 0x4c00SSII: SS the size, II an index below 0x100. */
#define BUILTIN_BASE 0x4c000000
#define PAIR_BASE 0x8c000000 /* MPICH encodes five pair types as direct handles */
#define USER_BASE 0xcc000000u
#define USER_MASK 0x03ffffffu

static tdm_dtype_t builtin[256];
static tdm_dtype_t pairs[8];
static tdm_dtype_t **user;
static size_t nuser, cap_user;

typedef struct {
    int handle;
    size_t size;
} basic_def_t;

/* Every predefined type whose layout is one contiguous run of `size` bytes. */
static const basic_def_t basics[] = {
    {MPI_CHAR, sizeof(char)},
    {MPI_SIGNED_CHAR, sizeof(signed char)},
    {MPI_UNSIGNED_CHAR, sizeof(unsigned char)},
    {MPI_BYTE, 1},
    {MPI_WCHAR, sizeof(wchar_t)},
    {MPI_SHORT, sizeof(short)},
    {MPI_UNSIGNED_SHORT, sizeof(unsigned short)},
    {MPI_INT, sizeof(int)},
    {MPI_UNSIGNED, sizeof(unsigned)},
    {MPI_LONG, sizeof(long)},
    {MPI_UNSIGNED_LONG, sizeof(unsigned long)},
    {MPI_FLOAT, sizeof(float)},
    {MPI_DOUBLE, sizeof(double)},
    {MPI_LONG_DOUBLE, sizeof(long double)},
    {MPI_LONG_LONG_INT, sizeof(long long)},
    {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long)},
    {MPI_PACKED, 1},
    {MPI_2INT, 2 * sizeof(int)},
    {MPI_INT8_T, 1},
    {MPI_INT16_T, 2},
    {MPI_INT32_T, 4},
    {MPI_INT64_T, 8},
    {MPI_UINT8_T, 1},
    {MPI_UINT16_T, 2},
    {MPI_UINT32_T, 4},
    {MPI_UINT64_T, 8},
    {MPI_C_BOOL, sizeof(_Bool)},
    {MPI_C_FLOAT_COMPLEX, 2 * sizeof(float)},
    {MPI_C_DOUBLE_COMPLEX, 2 * sizeof(double)},
    {MPI_C_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double)},
    {MPI_AINT, sizeof(MPI_Aint)},
    {MPI_OFFSET, sizeof(MPI_Offset)},
    {MPI_COUNT, sizeof(MPI_Count)},
    {MPI_CXX_BOOL, sizeof(_Bool)},
    {MPI_CXX_FLOAT_COMPLEX, 2 * sizeof(float)},
    {MPI_CXX_DOUBLE_COMPLEX, 2 * sizeof(double)},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double)},
    /* Fortran types, with the sizes the MPICH ABI encodes in their handles */
    {MPI_CHARACTER, 1},
    {MPI_INTEGER, 4},
    {MPI_REAL, 4},
    {MPI_LOGICAL, 4},
    {MPI_COMPLEX, 8},
    {MPI_DOUBLE_PRECISION, 8},
    {MPI_2INTEGER, 8},
    {MPI_2REAL, 8},
    {MPI_DOUBLE_COMPLEX, 16},
    {MPI_2DOUBLE_PRECISION, 16},
    {MPI_INTEGER1, 1},
    {MPI_INTEGER2, 2},
    {MPI_INTEGER4, 4},
    {MPI_INTEGER8, 8},
    {MPI_REAL4, 4},
    {MPI_REAL8, 8},
    {MPI_REAL16, 16},
    {MPI_COMPLEX8, 8},
    {MPI_COMPLEX16, 16},
    {MPI_COMPLEX32, 32},
};

static void init_basic(tdm_dtype_t *dt, int handle, size_t size) {
    memset(dt, 0, sizeof(*dt));
    dt->handle = handle;
    dt->refs = 1;
    dt->committed = 1;
    dt->predefined = 1;
    dt->contig = 1;
    dt->size = size;
    dt->lb = dt->true_lb = 0;
    dt->ub = dt->true_ub = (ptrdiff_t)size;
    dt->basic = handle;
    dt->basic_size = size;
    dt->one_seg.off = 0;
    dt->one_seg.len = size;
    dt->segs = &dt->one_seg;
    dt->nsegs = 1;
}

/* value+int pairs for MINLOC/MAXLOC: layout as the C struct {T v; int i;} */
#define PAIR_TYPE(_slot, _handle, _T)                                                              \
    do {                                                                                           \
        struct pair_##_slot {                                                                      \
            _T v;                                                                                  \
            int i;                                                                                 \
        };                                                                                         \
        tdm_dtype_t *dt = &pairs[_slot];                                                           \
        init_basic(dt, _handle, sizeof(_T) + sizeof(int));                                         \
        dt->basic = 0;                                                                             \
        dt->basic_size = 0;                                                                        \
        dt->ub = dt->true_ub = (ptrdiff_t)sizeof(struct pair_##_slot);                            \
        if (offsetof(struct pair_##_slot, i) == sizeof(_T)) {                                      \
            dt->one_seg.len = sizeof(_T) + sizeof(int);                                            \
            dt->contig = dt->one_seg.len == sizeof(struct pair_##_slot);                           \
        } else {                                                                                   \
            tdm_seg_t *s = malloc(2 * sizeof(*s));                                                 \
            if (!s)                                                                                \
                return -ENOMEM;                                                                    \
            s[0].off = 0;                                                                          \
            s[0].len = sizeof(_T);                                                                 \
            s[1].off = (ptrdiff_t)offsetof(struct pair_##_slot, i);                               \
            s[1].len = sizeof(int);                                                                \
            dt->segs = s;                                                                          \
            dt->nsegs = 2;                                                                         \
            dt->contig = 0;                                                                        \
        }                                                                                          \
        dt->true_ub = (ptrdiff_t)(offsetof(struct pair_##_slot, i) + sizeof(int));               \
    } while (0)

int tdm_dtype_init(void) {
    for (size_t i = 0; i < sizeof(basics) / sizeof(basics[0]); i++) {
        int h = basics[i].handle;
        if (h == MPI_DATATYPE_NULL) /* absent in this ABI build */
            continue;
        init_basic(&builtin[h & 0xff], h, basics[i].size);
    }
    PAIR_TYPE(0, MPI_FLOAT_INT, float);
    PAIR_TYPE(1, MPI_DOUBLE_INT, double);
    PAIR_TYPE(2, MPI_LONG_INT, long);
    PAIR_TYPE(3, MPI_SHORT_INT, short);
    PAIR_TYPE(4, MPI_LONG_DOUBLE_INT, long double);
    return 0;
}

void tdm_dtype_fini(void) {
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        if (pairs[i].segs && pairs[i].segs != &pairs[i].one_seg)
            free(pairs[i].segs);
    }
    free(user);
    user = NULL;
    nuser = cap_user = 0;
}

tdm_dtype_t *tdm_dtype_get(int handle) {
    unsigned h = (unsigned)handle;
    if ((h & 0xffff0000u) == BUILTIN_BASE) {
        tdm_dtype_t *dt = &builtin[h & 0xff];
        return dt->handle == handle ? dt : NULL;
    }
    if ((h & 0xfffffff8u) == PAIR_BASE) {
        tdm_dtype_t *dt = &pairs[h & 7];
        return dt->handle == handle ? dt : NULL;
    }
    if ((h & ~USER_MASK) == USER_BASE) {
        size_t i = h & USER_MASK;
        return i < nuser ? user[i] : NULL;
    }
    return NULL;
}

/* Give a new user type a handle; 0 or -ENOMEM. Slots are not reused while a
 * handle may still be in a user's variable, so lookups of a freed handle fail. */
int tdm_dtype_register(tdm_dtype_t *dt) {
    if (nuser == cap_user) {
        size_t ncap = cap_user ? 2 * cap_user : 64;
        if (ncap > USER_MASK + 1)
            return -ENOMEM;
        tdm_dtype_t **nu = realloc(user, ncap * sizeof(*nu));
        if (!nu)
            return -ENOMEM;
        user = nu;
        cap_user = ncap;
    }
    dt->handle = (int)(USER_BASE | (unsigned)nuser);
    user[nuser++] = dt;
    return 0;
}

void tdm_dtype_retain(tdm_dtype_t *dt) {
    if (!dt->predefined)
        dt->refs++;
}

void tdm_dtype_release(tdm_dtype_t *dt) {
    if (dt->predefined || --dt->refs > 0)
        return;
    size_t i = (unsigned)dt->handle & USER_MASK;
    if (i < nuser && user[i] == dt)
        user[i] = NULL;
    if (dt->segs != &dt->one_seg)
        free(dt->segs);
    free(dt->ext);
    free(dt);
}

/* Walk stream bytes [off, off+len) of the items, calling copy(mem, stream, n). */
#define SEG_WALK(_buf, _count, _dt, _off, _len, _COPY)                                             \
    do {                                                                                           \
        size_t item = (_off) / (_dt)->size;                                                        \
        size_t in_item = (_off) % (_dt)->size;                                                     \
        size_t seg = 0;                                                                            \
        ptrdiff_t ext = tdm_dtype_extent(_dt);                                                     \
        while (seg < (_dt)->nsegs && in_item >= (_dt)->segs[seg].len) {                            \
            in_item -= (_dt)->segs[seg].len;                                                       \
            seg++;                                                                                 \
        }                                                                                          \
        size_t done = 0;                                                                           \
        while (done < (_len) && item < (_count)) {                                                 \
            const tdm_seg_t *s = &(_dt)->segs[seg];                                                \
            size_t n = TDM_MIN(s->len - in_item, (_len)-done);                                     \
            char *mem = (char *)(_buf) + (ptrdiff_t)item * ext + s->off + (ptrdiff_t)in_item;     \
            _COPY(mem, done, n);                                                                   \
            done += n;                                                                             \
            in_item = 0;                                                                           \
            if (++seg == (_dt)->nsegs) {                                                           \
                seg = 0;                                                                           \
                item++;                                                                            \
            }                                                                                      \
        }                                                                                          \
    } while (0)

void tdm_dtype_pack(const void *buf, size_t count, const tdm_dtype_t *dt, size_t off, void *dst,
                    size_t len) {
    if (!len)
        return;
    if (dt->contig) {
        memcpy(dst, (const char *)buf + dt->true_lb + (ptrdiff_t)off, len);
        return;
    }
#define PACK_COPY(_mem, _done, _n) memcpy((char *)dst + (_done), (_mem), (_n))
    SEG_WALK(buf, count, dt, off, len, PACK_COPY);
#undef PACK_COPY
}

void tdm_dtype_unpack(void *buf, size_t count, const tdm_dtype_t *dt, size_t off, const void *src,
                      size_t len) {
    if (!len)
        return;
    if (dt->contig) {
        memcpy((char *)buf + dt->true_lb + (ptrdiff_t)off, src, len);
        return;
    }
#define UNPACK_COPY(_mem, _done, _n) memcpy((_mem), (const char *)src + (_done), (_n))
    SEG_WALK(buf, count, dt, off, len, UNPACK_COPY);
#undef UNPACK_COPY
}

/* Element counting walks the layout's segments when the type mixes basic types;
 * `basic_size` 0 means mixed. The constructors record per-segment element sizes
 * in `ext` (see constructors); until then mixed types count by whole items. */
long long tdm_dtype_elements(const tdm_dtype_t *dt, size_t bytes) {
    if (dt->basic_size)
        return bytes % dt->basic_size ? -1 : (long long)(bytes / dt->basic_size);
    if (dt->size == 0)
        return 0;
    /* pair types: two elements per item, the value then the int */
    size_t items = bytes / dt->size, rest = bytes % dt->size;
    if (rest == 0)
        return (long long)(items * 2);
    if (dt->nsegs == 2 && rest == dt->segs[0].len)
        return (long long)(items * 2 + 1);
    if (dt->nsegs == 1 && dt->size > sizeof(int) && rest == dt->size - sizeof(int))
        return (long long)(items * 2 + 1);
    return -1;
}

long long tdm_dtype_elements_bytes(const tdm_dtype_t *dt, size_t elements) {
    if (dt->basic_size)
        return (long long)(elements * dt->basic_size);
    if (dt->size == 0)
        return 0;
    size_t items = elements / 2, rest = elements % 2;
    return (long long)(items * dt->size + (rest ? dt->size - sizeof(int) : 0));
}
