/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the MPICH ABI needs from the library besides the MPI functions proper:
 * the data symbols mpi.h declares extern, the predefined attribute copy
 * function MPIR_Dup_fn, the C <-> Fortran conversions of handles and
 * statuses, and MPICH's GPU capability queries. Everything here is fixed by
 * the ABI, not by Tandem's design.
 */
#include "bind.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- data symbols ----
 * Their sizes matter: a non-PIE program built against MPICH gets copy
 * relocations of these objects, sized from MPICH's library (pointers: 8 bytes,
 * the F08 status objects: 20 bytes). */

/* Sentinel arrays for topology weights: only their addresses are used, so
 * they are distinct, non-NULL and never equal to a user buffer. */
static int unweighted_sentinel;
static int weights_empty_sentinel;
int *const MPI_UNWEIGHTED = &unweighted_sentinel;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_sentinel;

/* MPICH's C library leaves these NULL (a Fortran binding would set its own). */
MPI_Fint *MPI_F_STATUS_IGNORE = NULL;
MPI_Fint *MPI_F_STATUSES_IGNORE = NULL;

/* Fortran 2008 constants that MPICH's mpi_f08 module binds to by name. */
MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_F08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
int MPIR_F08_MPI_IN_PLACE;
int MPIR_F08_MPI_BOTTOM;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &MPIR_F08_MPI_STATUS_IGNORE_OBJ;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = MPIR_F08_MPI_STATUSES_IGNORE_OBJ;

/* "All handles of the session" for MPI_T_pvar_start/stop/reset: a sentinel
 * address that no real pvar handle can have. */
static char pvar_all_handles_sentinel;
struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES =
    (struct MPIR_T_pvar_handle_s *)&pvar_all_handles_sentinel;

/* ---- MPI_BOTTOM ----
 * The lowest address the kernel lets a process map (vm.mmap_min_addr: 4096 or 65536 on
 * common systems, 0 if root lowered it), read once; a buffer argument of MPI_BOTTOM whose
 * data would start below it, or at address 0, cannot name a program's memory. Only read
 * when a buffer is NULL: it costs the usual calls nothing. */
static uintptr_t lowest_mappable(void) {
    static uintptr_t lowest;
    if (!lowest) {
        unsigned long v = 0;
        FILE *f = fopen("/proc/sys/vm/mmap_min_addr", "r");
        if (f) {
            if (fscanf(f, "%lu", &v) != 1)
                v = 0;
            fclose(f);
        }
        lowest = v ? (uintptr_t)v : 1;
    }
    return lowest;
}

__extension__ typedef __int128 i128_t;

int tdm_mpi_bottom_refused(tdm_comm_t *comm, const char *fn, const char *what, MPI_Count count,
                           const tdm_dtype_t *dt) {
    /* the lowest byte of count items: true_lb, or further down when the extent is
     * negative (in 128 bits: count * extent may not fit in 64) */
    ptrdiff_t ext = tdm_dtype_extent(dt);
    i128_t lo = dt->true_lb;
    if (ext < 0)
        lo += (i128_t)(count - 1) * ext;
    if (lo >= (i128_t)lowest_mappable())
        return MPI_SUCCESS;
    return tdm_mpi_err(comm, MPI_ERR_BUFFER, fn,
                       "%s is NULL (MPI_BOTTOM), but with count=%lld the datatype's data would "
                       "start at address %lld, below the lowest address a process can map "
                       "(%lu): NULL is a buffer only for datatypes built from absolute addresses",
                       what, (long long)count, lo < LLONG_MIN ? LLONG_MIN : (long long)lo,
                       (unsigned long)lowest_mappable());
}

/* ---- predefined attribute copy function ----
 * MPI_DUP_FN, MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN all expand
 * to this symbol (MPICH's name). The NULL_COPY / NULL_DELETE callbacks are
 * null pointers: the attribute code treats a null copy function as "do not
 * copy" and a null delete function as "nothing to do". */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag) {
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- handle conversions ----
 * mpi.h defines these as casts (macros), as MPICH does, so programs never call
 * them; the library still exports them as functions for code that takes
 * their address or was built against a header declaring them. They are not
 * declared by mpi.h, hence the explicit visibility. */
#undef MPI_Comm_c2f
#undef MPI_Comm_f2c
#undef MPI_Type_c2f
#undef MPI_Type_f2c
#undef MPI_Group_c2f
#undef MPI_Group_f2c
#undef MPI_Info_c2f
#undef MPI_Info_f2c
#undef MPI_Request_c2f
#undef MPI_Request_f2c
#undef MPI_Op_c2f
#undef MPI_Op_f2c
#undef MPI_Errhandler_c2f
#undef MPI_Errhandler_f2c
#undef MPI_Win_c2f
#undef MPI_Win_f2c
#undef MPI_Message_c2f
#undef MPI_Message_f2c
#undef MPI_Session_c2f
#undef MPI_Session_f2c
#undef PMPI_Comm_c2f
#undef PMPI_Comm_f2c
#undef PMPI_Type_c2f
#undef PMPI_Type_f2c
#undef PMPI_Group_c2f
#undef PMPI_Group_f2c
#undef PMPI_Info_c2f
#undef PMPI_Info_f2c
#undef PMPI_Request_c2f
#undef PMPI_Request_f2c
#undef PMPI_Op_c2f
#undef PMPI_Op_f2c
#undef PMPI_Errhandler_c2f
#undef PMPI_Errhandler_f2c
#undef PMPI_Win_c2f
#undef PMPI_Win_f2c
#undef PMPI_Message_c2f
#undef PMPI_Message_f2c
#undef PMPI_Session_c2f
#undef PMPI_Session_f2c

#define ABI_PUBLIC __attribute__((visibility("default")))

/* PMPI_<obj>_c2f / _f2c as identity casts, MPI_ names as weak aliases. */
#define HANDLE_CONV(_obj, _type)                                                                   \
    ABI_PUBLIC MPI_Fint PMPI_##_obj##_c2f(_type h);                                                \
    ABI_PUBLIC MPI_Fint MPI_##_obj##_c2f(_type h);                                                 \
    ABI_PUBLIC _type PMPI_##_obj##_f2c(MPI_Fint h);                                                \
    ABI_PUBLIC _type MPI_##_obj##_f2c(MPI_Fint h);                                                 \
    MPI_Fint PMPI_##_obj##_c2f(_type h) {                                                          \
        return (MPI_Fint)h;                                                                        \
    }                                                                                              \
    _type PMPI_##_obj##_f2c(MPI_Fint h) {                                                          \
        return (_type)h;                                                                           \
    }                                                                                              \
    TDM_WEAK(MPI_##_obj##_c2f)                                                                     \
    TDM_WEAK(MPI_##_obj##_f2c)

HANDLE_CONV(Comm, MPI_Comm)
HANDLE_CONV(Type, MPI_Datatype)
HANDLE_CONV(Group, MPI_Group)
HANDLE_CONV(Info, MPI_Info)
HANDLE_CONV(Request, MPI_Request)
HANDLE_CONV(Op, MPI_Op)
HANDLE_CONV(Errhandler, MPI_Errhandler)
HANDLE_CONV(Win, MPI_Win)
HANDLE_CONV(Message, MPI_Message)
HANDLE_CONV(Session, MPI_Session)

/* MPI_File is a pointer, so its conversion needs a table. Tandem has no
 * MPI-IO yet (MPI_File_open reports MPI_ERR_UNSUPPORTED_OPERATION), so the
 * only file handle there can be is MPI_FILE_NULL, whose Fortran value is 0.
 * Replace this when files exist. */
MPI_Fint PMPI_File_c2f(MPI_File file) {
    (void)file;
    return 0;
}
TDM_WEAK(MPI_File_c2f)

MPI_File PMPI_File_f2c(MPI_Fint file) {
    (void)file;
    return MPI_FILE_NULL;
}
TDM_WEAK(MPI_File_f2c)

/* ---- status conversions ----
 * MPI_Status, the Fortran status (MPI_Fint[MPI_F_STATUS_SIZE]) and
 * MPI_F08_status are the same five ints in the same order in MPICH's ABI, so
 * every conversion is a copy of 5 ints. */

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status size");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "f08 status size");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint), "source");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint), "tag");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint), "error");

/* An ignored status of any layout: MPI_F_STATUS_IGNORE is NULL in a C library. */
static bool status_ignored(const void *st) {
    return st == MPI_STATUS_IGNORE || st == MPI_F08_STATUS_IGNORE || st == NULL;
}

static int status_copy(const void *from, void *to, const char *fn) {
    if (status_ignored(from))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "cannot convert an ignored status (MPI_STATUS_IGNORE, "
                           "MPI_F_STATUS_IGNORE, MPI_F08_STATUS_IGNORE or NULL)");
    if (status_ignored(to))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "cannot convert into an ignored status (MPI_STATUS_IGNORE, "
                           "MPI_F_STATUS_IGNORE, MPI_F08_STATUS_IGNORE or NULL)");
    memmove(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

/* MPI_<_name>: a status in layout _From into layout _To (the same bytes, above). */
#define STATUS_CONVERSION(_name, _From, _To)                                                       \
    int P##_name(const _From *in, _To *out) {                                                      \
        return status_copy(in, out, #_name);                                                       \
    }                                                                                              \
    TDM_WEAK(_name)

STATUS_CONVERSION(MPI_Status_c2f, MPI_Status, MPI_Fint)
STATUS_CONVERSION(MPI_Status_f2c, MPI_Fint, MPI_Status)
STATUS_CONVERSION(MPI_Status_c2f08, MPI_Status, MPI_F08_status)
STATUS_CONVERSION(MPI_Status_f082c, MPI_F08_status, MPI_Status)
STATUS_CONVERSION(MPI_Status_f082f, MPI_F08_status, MPI_Fint)
STATUS_CONVERSION(MPI_Status_f2f08, MPI_Fint, MPI_F08_status)

/* ---- GPU capability queries (MPICH extensions) ----
 * Unlike other MPI functions, MPIX_Query_*_support return the answer, not an
 * error code: a stub returning an error class would read as "supported" and
 * make GPU-aware callers (mpi4py, frameworks) hand device pointers to us.
 * Tandem moves host memory only. */
int PMPIX_Query_cuda_support(void) {
    return 0;
}
TDM_WEAK(MPIX_Query_cuda_support)

int PMPIX_Query_ze_support(void) {
    return 0;
}
TDM_WEAK(MPIX_Query_ze_support)

int PMPIX_Query_hip_support(void) {
    return 0;
}
TDM_WEAK(MPIX_Query_hip_support)

int PMPIX_GPU_query_support(int gpu_type, int *is_supported) {
    (void)gpu_type;
    if (!is_supported)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPIX_GPU_query_support", "is_supported is NULL");
    *is_supported = 0;
    return MPI_SUCCESS;
}
TDM_WEAK(MPIX_GPU_query_support)

/* Address arithmetic (MPI 3.1 §4.1.12): plain integer arithmetic on this
 * flat-address-space platform. */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
TDM_WEAK(MPI_Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
TDM_WEAK(MPI_Aint_diff)

/* ---- the ABI values the layers below use under Tandem names (base/abi.def) ---- */
#define TDM_ABI(_name, _value)                                                                     \
    _Static_assert((int)(_name) == TDM_##_name, "base/abi.def: " #_name " differs from mpi.h");
#include "../base/abi.def"
#undef TDM_ABI
_Static_assert(_Generic((MPI_Aint)0, tdm_mpi_aint_t : 1, default : 0) &&
                   _Generic((MPI_Offset)0, tdm_mpi_offset_t : 1, default : 0) &&
                   _Generic((MPI_Count)0, tdm_mpi_count_t : 1, default : 0),
               "base/abi.h: the address and count types differ from mpi.h");
_Static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8,
               "coll/op.c reduces MPI_AINT, MPI_OFFSET and MPI_COUNT as 64-bit integers");
