/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication (MPI-4.1 chapter 12) below the bindings: windows, their
 * synchronization and the operations. src/mpi/win.c and src/mpi/rma.c check the
 * arguments and call this; nothing here includes mpi.h.
 *
 * Every window, whatever its kind, has a shared object of its own (a memfd that the
 * members map; see win.c for how it is passed without a name): a header (the fence
 * barrier), and one slot per member with what origins need to reach it (base, size,
 * displacement unit, pid), its passive-target lock, its accumulate lock, its PSCW
 * counters and, for dynamic windows, its attached regions. Memory the library
 * allocates (MPI_Win_allocate, MPI_Win_allocate_shared) follows in the same object,
 * so an origin reaches it by load/store and CPU atomics. User memory (MPI_Win_create,
 * dynamic windows) is reached by CMA, or by messages on the window's own communicator
 * where CMA is denied (am.c). Per-process memory of a window does not grow with the
 * number of members: what the slots hold is read where it is.
 *
 * Issuing (seed 003 §3.4, §4.2): an epoch starts "delayed": operations are queued
 * (op objects from a fixed pool) and issued with the closing synchronization (or a
 * flush); once the epoch has seen TANDEM_RMA_EAGER_OPS operations or
 * TANDEM_RMA_EAGER_BYTES bytes it turns "eager": the synchronization is completed
 * and each operation is issued as it is posted. An empty pool is an aggressive
 * clean-up: queued operations are issued to free their objects. Small Puts and Gets
 * to user memory in another process are combined: consecutive ones to one target go
 * as one process_vm_writev/readv at the closing synchronization, a flush, or when
 * the batch is full (op.c).
 */
#ifndef TDM_RMA_H
#define TDM_RMA_H

#include "../base/lock.h"
#include "../base/pvar.h"
#include "../base/util.h"
#include "../comm/comm.h"
#include "../dtype/dtype.h"
#include "../p2p/p2p.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Window kinds: the values of MPI_WIN_FLAVOR_* (checked in src/mpi). */
typedef enum {
    TDM_WIN_CREATE = 1,
    TDM_WIN_ALLOCATE = 2,
    TDM_WIN_DYNAMIC = 3,
    TDM_WIN_SHARED = 4,
} tdm_win_flavor_t;

/* Results; src/mpi turns them into MPI error classes, tdm_rma_why() says why. */
typedef enum {
    TDM_RMA_OK = 0,
    TDM_RMA_ENOMEM,
    TDM_RMA_ESYNC,     /* MPI_ERR_RMA_SYNC */
    TDM_RMA_ERANGE,    /* MPI_ERR_RMA_RANGE */
    TDM_RMA_EATTACH,   /* MPI_ERR_RMA_ATTACH */
    TDM_RMA_ECONFLICT, /* MPI_ERR_RMA_CONFLICT */
    TDM_RMA_ESHARED,   /* MPI_ERR_RMA_SHARED */
    TDM_RMA_ETYPE,     /* MPI_ERR_TYPE */
    TDM_RMA_EOTHER,    /* MPI_ERR_OTHER (a system call failed: logged) */
} tdm_rma_rc_t;

/* The message of the last failure of this thread. */
const char *tdm_rma_why(void);

/* Operation kinds. */
typedef enum {
    TDM_RMA_PUT,
    TDM_RMA_GET,
    TDM_RMA_ACC,
    TDM_RMA_GACC,
    TDM_RMA_FOP,
    TDM_RMA_CAS,
    TDM_RMA_NKINDS
} tdm_rma_kind_t;

/* How the data of an operation moved (the counters' rows). */
typedef enum {
    TDM_RMA_PATH_LOAD_STORE, /* the target's memory is mapped here: memcpy, pack/unpack */
    TDM_RMA_PATH_ATOMIC,     /* CPU atomic instructions, element by element */
    TDM_RMA_PATH_LOCKED,     /* under the target's accumulate lock (types the CPU cannot do) */
    TDM_RMA_PATH_CMA,        /* process_vm_readv/writev */
    TDM_RMA_PATH_MSG,        /* messages served by the target (CMA denied) */
    TDM_RMA_NPATHS
} tdm_rma_path_t;

/* Op codes (the low byte of MPICH's predefined op handles, as coll.h's). */
enum {
    TDM_RMA_OP_SUM = 3,
    TDM_RMA_OP_BAND = 6,
    TDM_RMA_OP_BOR = 8,
    TDM_RMA_OP_BXOR = 10,
    TDM_RMA_OP_MINLOC = 11,
    TDM_RMA_OP_MAXLOC = 12,
    TDM_RMA_OP_REPLACE = 13,
    TDM_RMA_OP_NO_OP = 14
};

/* Lock types (MPI_LOCK_EXCLUSIVE / MPI_LOCK_SHARED are mapped by the bindings). */
enum { TDM_RMA_LOCK_SHARED = 1, TDM_RMA_LOCK_EXCLUSIVE = 2 };
/* Assert bits as MPI_MODE_* (the same values; src/mpi checks). */
enum {
    TDM_RMA_MODE_NOCHECK = 1024,
    TDM_RMA_MODE_NOSTORE = 2048,
    TDM_RMA_MODE_NOPUT = 4096,
    TDM_RMA_MODE_NOPRECEDE = 8192,
    TDM_RMA_MODE_NOSUCCEED = 16384,
};

/* The per-member slot of the window's shared object (win.c has the layout). */
typedef struct tdm_rma_slot tdm_rma_slot_t;
struct tdm_rma_shared;
struct tdm_rma_target;

/* Access epochs this process has open on a window. */
typedef enum {
    TDM_EPOCH_NONE = 0,
    TDM_EPOCH_FENCE, /* after a fence without NOSUCCEED */
    TDM_EPOCH_LOCK,  /* one or more MPI_Win_lock */
    TDM_EPOCH_LOCK_ALL,
    TDM_EPOCH_START, /* MPI_Win_start .. MPI_Win_complete */
} tdm_rma_epoch_t;

typedef struct tdm_win {
    tdm_lock_t lock; /* guards what follows but the constants (rma_impl.h says what) */
    int handle;
    tdm_win_flavor_t flavor;
    tdm_comm_t *comm; /* a duplicate of the user's communicator: its messages, its group */
    int rank, size;   /* in comm */
    void *base;       /* this process's window memory (NULL: none; dynamic: MPI_BOTTOM) */
    size_t bytes;
    ptrdiff_t disp_unit;
    bool noncontig;   /* alloc_shared_noncontig */
    unsigned acc_ops; /* accumulate_ops: 0 same_op_no_op, 1 same_op */
    bool acc_ordered; /* accumulate_ordering not "none" */
    bool am;          /* some member reaches another by messages (am.c) */
    bool direct;      /* mapped here and no message path: op.c's direct path may apply */
    /* the shared object */
    struct tdm_rma_shared *sh;
    size_t sh_bytes;
    unsigned char *data; /* allocate/shared: where the members' memory starts in sh */
    /* synchronization */
    tdm_rma_epoch_t epoch;
    bool exposed;       /* MPI_Win_post .. MPI_Win_wait */
    bool fence_pending; /* a fence's barrier arrival not yet seen complete */
    uint32_t fence_gen; /* the barrier generation that arrival waits for */
    unsigned fence_ops; /* operations since the last fence */
    int nlocks;         /* targets locked by MPI_Win_lock */
    bool lock_all_nocheck;
    uint32_t posts_seen, completes_seen; /* PSCW counters consumed */
    int start_n, post_n;                 /* sizes of the start and post groups */
    int *start_ranks;                    /* window ranks of the start group (MPI_Win_complete) */
    bool start_nocheck;
    /* issuing */
    bool eager;
    uint64_t epoch_nops, epoch_bytes;
    tdm_list_t queue; /* queued op objects, in posting order */
    uint32_t nqueued;
    struct tdm_rma_batch *batch; /* small Puts/Gets to one CMA target, combined (op.c) */
    tdm_list_t targets[16];      /* the RMA table: target objects by rank */
    int ntargets;
    tdm_list_t link; /* in the list of windows (clean-up) */
    /* message path (am.c) */
    tdm_req_t *am_req; /* the posted service receive */
    void *am_buf;
    /* per target: messages sent, and how many of them a flush has seen applied (two
     * threads may flush one target at once: each waits for what was sent before it) */
    struct tdm_rma_am_count {
        uint32_t sent, flushed;
    } * am_dirty;
    uint32_t am_seq;
    /* owned by the bindings */
    void *mpi;
} tdm_win_t;

/* ---- creation and destruction (win.c); collective over comm ---- */

/* MPI_Win_create / _allocate / _allocate_shared / _create_dynamic. `base` and `bytes`
 * are the caller's memory (create) or the size to allocate (allocate kinds); the
 * window gets a duplicate of comm. hints may be NULL. The allocated base is
 * win->base. */
tdm_rma_rc_t tdm_rma_win_create(tdm_win_flavor_t flavor, void *base, size_t bytes,
                                ptrdiff_t disp_unit, bool noncontig, tdm_comm_t *comm,
                                tdm_win_t **win_p);
/* ESYNC when an epoch is still open on the window (MPI_Win_free refuses it). */
tdm_rma_rc_t tdm_rma_free_check(tdm_win_t *win);
/* MPI_Win_free: collective; completes everything (ESYNC when an epoch is still open). */
tdm_rma_rc_t tdm_rma_win_free(tdm_win_t *win);
/* MPI_Win_shared_query: rank's memory (rank -1: the lowest rank with a non-zero
 * size). */
tdm_rma_rc_t tdm_rma_shared_query(tdm_win_t *win, int rank, size_t *bytes_p, ptrdiff_t *unit_p,
                                  void **base_p);
/* MPI_Win_attach / detach (dynamic windows). */
tdm_rma_rc_t tdm_rma_attach(tdm_win_t *win, void *base, size_t bytes);
tdm_rma_rc_t tdm_rma_detach(tdm_win_t *win, const void *base);

/* ---- operations (op.c) ---- */

typedef struct tdm_rma_args {
    uint8_t kind; /* tdm_rma_kind_t */
    int op;       /* accumulates: predefined op code */
    const void *obuf;
    size_t ocount;
    tdm_dtype_t *odt;
    void *rbuf; /* result: Get's origin buffer, Get_accumulate/Fetch_and_op/CAS's result */
    size_t rcount;
    tdm_dtype_t *rdt;
    const void *cbuf; /* Compare_and_swap's compare value */
    int target;       /* rank in the window */
    int64_t disp;     /* target displacement in units (dynamic windows: an address) */
    size_t tcount;
    tdm_dtype_t *tdt;
} tdm_rma_args_t;

/* Post an operation (checked by the caller but for what needs the target's slot:
 * range, attached regions, epoch). With req_p, the operation is issued now and
 * *req_p is a completed request (MPI_Rput ...). */
tdm_rma_rc_t tdm_rma_post(tdm_win_t *win, const tdm_rma_args_t *a, tdm_req_t **req_p);
/* MPI_Put (put) or MPI_Get of `bytes` contiguous bytes at buf to `target` at unit
 * displacement disp, when the direct path takes it (a granted passive target on mapped
 * memory, inside the range): true, done. False: nothing changed, post it the general way,
 * which reports any error. The caller has checked the types and that disp >= 0. */
bool tdm_rma_put_get_direct(tdm_win_t *win, bool put, void *buf, size_t bytes, int target,
                            int64_t disp);
/* MPI_Fetch_and_op (op: a TDM_RMA_OP_ code valid on t) or MPI_Compare_and_swap (cas) of one
 * element of the predefined type t, by one CPU atomic when the direct path takes it: true,
 * done; false: nothing changed, post it the general way. */
bool tdm_rma_atomic_direct(tdm_win_t *win, bool cas, int op, const tdm_dtype_t *t, const void *o,
                           const void *cmp, void *r, int target, int64_t disp);
/* MPI_Win_flush of `rank` in the common case (a passive epoch covering it, nothing queued,
 * no message path): true, done. False: call tdm_rma_flush, which reports any error. */
bool tdm_rma_flush_direct(tdm_win_t *win, int rank);

/* ---- synchronization (sync.c) ---- */
tdm_rma_rc_t tdm_rma_fence(tdm_win_t *win, int assert);
tdm_rma_rc_t tdm_rma_lock(tdm_win_t *win, int type, int rank, int assert);
tdm_rma_rc_t tdm_rma_unlock(tdm_win_t *win, int rank);
tdm_rma_rc_t tdm_rma_lock_all(tdm_win_t *win, int assert);
tdm_rma_rc_t tdm_rma_unlock_all(tdm_win_t *win);
/* rank -1: every target. local: MPI_Win_flush_local(_all). */
tdm_rma_rc_t tdm_rma_flush(tdm_win_t *win, int rank, bool local);
/* ranks: window ranks of the group. */
tdm_rma_rc_t tdm_rma_post_group(tdm_win_t *win, const int *ranks, int n, int assert);
tdm_rma_rc_t tdm_rma_start(tdm_win_t *win, const int *ranks, int n, int assert);
tdm_rma_rc_t tdm_rma_complete(tdm_win_t *win);
/* test: *flag_p gets whether it is done (MPI_Win_test); else waits. */
tdm_rma_rc_t tdm_rma_wait(tdm_win_t *win, bool test, bool *flag_p);
void tdm_rma_sync(tdm_win_t *win);
/* Is an operation to `rank` allowed now (an access epoch covers it)? */
bool tdm_rma_may_access(tdm_win_t *win, int rank);
/* Is request-based access allowed (a passive-target epoch)? */
bool tdm_rma_passive(tdm_win_t *win);

/* ---- counters (pvars.def) ---- */
extern uint64_t tdm_rma_ops[TDM_RMA_NKINDS][TDM_RMA_NPATHS];
extern uint64_t tdm_rma_bytes[TDM_RMA_NPATHS];
extern uint64_t tdm_rma_to_eager, tdm_rma_queued, tdm_rma_direct, tdm_rma_cleanups,
    tdm_rma_lock_waits;
extern uint64_t tdm_rma_lock_handoffs, tdm_rma_lock_wakeups;
extern uint64_t tdm_rma_am_served;
extern uint64_t tdm_rma_combined_ops, tdm_rma_combined_calls;
extern uint64_t tdm_rma_windows;
extern const tdm_pvar_desc_t tdm_rma_pvars[];
extern const int tdm_rma_npvars;
/* TANDEM_PROTO_STATS: one line per rank of the RMA counters. */
void tdm_rma_stats_print(int rank);

#endif
