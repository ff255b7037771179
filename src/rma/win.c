/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Windows: creation, the shared object, shared_query, attach and detach, free.
 *
 * The shared object. The window's rank 0 creates a memfd (no name in /dev/shm, ever)
 * sized for the header, one slot per member and, for MPI_Win_allocate(_shared), every
 * member's memory; it broadcasts its pid and descriptor number, and the others open
 * /proc/<pid>/fd/<n>, map it and close their descriptor. Opening a process's
 * descriptor through /proc needs PTRACE_MODE_READ, which Yama's ptrace_scope does not
 * restrict (CMA needs ATTACH), so this works where CMA is denied; pidfd_getfd would
 * need ATTACH too. The memory belongs to no name: it goes with the last process that
 * maps it, even when a rank dies during creation (rma/create_killed kills one).
 *
 * Layout of members' memory: MPI_Win_allocate_shared puts rank i+1's right after rank
 * i's (contiguous, MPI-4.1 12.2.3) unless alloc_shared_noncontig, which starts each
 * at a page; MPI_Win_allocate starts each at a page. Every member maps the whole
 * object, so any member reaches any other's memory by load/store: the origin of a
 * Put of 8 bytes to an allocated window does one 8-byte store.
 */
#include "rma_impl.h"
#include "../net/cma.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct member {
    uint64_t bytes;
    int64_t unit;
} member_t;

/* Where a slot's lock queue starts: after its attached regions. */
static size_t lockq_off(void) {
    return sizeof(tdm_rma_slot_t) + (size_t)TDM_PARAM_I(RMA_ATTACH_MAX) * 16;
}

/* The lock queue holds a word per member (a member waits for one lock of a target at
 * a time), and a grant byte per member follows it. */
static size_t slot_stride(int n) {
    size_t s = lockq_off() + (size_t)n * (sizeof(uint32_t) + 1);
    return TDM_ALIGN_UP(s, TDM_CACHELINE);
}

static tdm_comm_peers_t peers(tdm_comm_t *c) {
    return (tdm_comm_peers_t){.parent = c,
                              .prank = NULL,
                              .n = c->size,
                              .me = c->rank,
                              .tag_up = TDM_COMM_TAG_GATHER,
                              .tag_down = TDM_COMM_TAG_BCAST};
}

/* Map the object rank 0 made: its pid and descriptor came with the broadcast. */
static void *map_peer_object(int pid, int fd, size_t bytes) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    int mine = open(path, O_RDWR | O_CLOEXEC);
    if (mine < 0) {
        tdm_error(RMA,
                  "window creation: cannot open rank 0's window memory %s: %m (is /proc "
                  "mounted with hidepid?)",
                  path);
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
    int err = errno;
    close(mine);
    if (p == MAP_FAILED) {
        errno = err;
        tdm_error(RMA, "window creation: mmap of %zu bytes of %s failed: %m", bytes, path);
        return NULL;
    }
    return p;
}

tdm_rma_rc_t tdm_rma_win_create(tdm_win_flavor_t flavor, void *base, size_t bytes,
                                ptrdiff_t disp_unit, bool noncontig, tdm_comm_t *comm,
                                tdm_win_t **win_p) {
    tdm_win_t *w = calloc(1, sizeof(*w));
    if (!w)
        return tdm_rma_fail(TDM_RMA_ENOMEM, "out of memory for the window object");
    tdm_lock_init(&w->lock);
    w->flavor = flavor;
    w->disp_unit = disp_unit;
    w->noncontig = noncontig;
    w->acc_ordered = true;
    tdm_list_init(&w->queue);
    for (size_t b = 0; b < sizeof(w->targets) / sizeof(w->targets[0]); b++)
        tdm_list_init(&w->targets[b]);
    /* a communicator of the window's own: its messages and internal exchanges never
     * meet the user's (a split copies no attributes, unlike a dup) */
    tdm_comm_t *wc = NULL;
    if (tdm_comm_split(comm, 0, comm->rank, &wc) != 0 || !wc) {
        free(w);
        return tdm_rma_fail(TDM_RMA_ENOMEM, "cannot make the window's communicator");
    }
    w->comm = wc;
    w->rank = wc->rank;
    w->size = wc->size;
    int n = w->size;
    tdm_comm_peers_t p = peers(wc);

    member_t me = {.bytes = bytes, .unit = disp_unit}, *all = malloc((size_t)n * sizeof(*all));
    if (!all || tdm_comm_allgather(&p, &me, sizeof(me), all)) {
        free(all);
        tdm_comm_free(wc);
        free(w);
        return tdm_rma_fail(TDM_RMA_ENOMEM, "window creation: the exchange of sizes failed");
    }
    size_t stride = slot_stride(n);
    size_t slots_off = sizeof(tdm_rma_shared_t);
    size_t data_off = TDM_ALIGN_UP(slots_off + (size_t)n * stride, 4096);
    size_t total = data_off;
    bool alloc = flavor == TDM_WIN_ALLOCATE || flavor == TDM_WIN_SHARED;
    uint64_t my_off = 0;
    if (alloc) {
        bool contig = flavor == TDM_WIN_SHARED && !noncontig;
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            if (!contig)
                off = TDM_ALIGN_UP(off, 4096);
            if (i == w->rank)
                my_off = off;
            off += all[i].bytes;
        }
        total += TDM_ALIGN_UP(off, 4096);
    }
    free(all);

    /* rank 0 makes the object; the others learn where it is */
    struct {
        int32_t pid, fd;
        uint64_t total;
    } where = {0, -1, total};
    tdm_rma_shared_t *sh = NULL;
    int fd = -1;
    if (w->rank == 0) {
        fd = memfd_create("tandem-win", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)total) != 0) {
            tdm_error(RMA, "window creation: memfd of %zu bytes: %m", total);
        } else {
            void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                sh = m;
                sh->magic = TDM_RMA_MAGIC;
                sh->nranks = (uint32_t)n;
                sh->slot_stride = (uint32_t)stride;
                sh->slots_off = slots_off;
                sh->data_off = data_off;
                sh->lockq_off = (uint32_t)lockq_off();
                where.pid = (int32_t)getpid();
                where.fd = fd;
            } else {
                tdm_error(RMA, "window creation: mmap of %zu bytes: %m", total);
            }
        }
    }
    if (tdm_comm_bcast(&p, &where, sizeof(where))) {
        where.fd = -1;
    }
    /* a test kills one rank here: rank 0 has made the object, the others not mapped it */
    if (TDM_PARAM_I(TEST_RMA_DIE_IN_CREATE) == tdm_comm_world_rank(wc, w->rank))
        raise(SIGKILL);
    if (w->rank != 0 && where.fd >= 0)
        sh = map_peer_object(where.pid, where.fd, (size_t)where.total);
    /* everyone says whether it mapped; a failure anywhere fails everywhere */
    int ok = sh != NULL, *oks = malloc((size_t)n * sizeof(int));
    if (!oks || tdm_comm_allgather(&p, &ok, sizeof(ok), oks)) {
        ok = 0;
    } else {
        for (int i = 0; i < n; i++)
            ok &= oks[i];
    }
    free(oks);
    if (fd >= 0)
        close(fd); /* every member mapped it (or the creation failed): the mappings hold it */
    if (!ok) {
        if (sh)
            munmap(sh, total);
        tdm_comm_free(wc);
        free(w);
        return tdm_rma_fail(TDM_RMA_EOTHER, "window creation: a member could not map the "
                                            "window's shared memory (see the log)");
    }
    w->sh = sh;
    w->sh_bytes = total;
    if (alloc) {
        w->data = (unsigned char *)sh + data_off;
        w->base = bytes ? w->data + my_off : NULL;
    } else {
        w->base = base;
    }
    w->bytes = bytes;

    tdm_rma_slot_t *s = tdm_rma_slot(w, w->rank);
    s->base = alloc ? my_off : (uint64_t)(uintptr_t)base;
    s->bytes = bytes;
    s->disp_unit = disp_unit;
    s->pid = (int32_t)getpid();
    s->world = tdm_comm_world_rank(wc, w->rank);
    atomic_store(&s->owner, -1);
    if (!alloc) {
        for (int i = 0; i < n; i++)
            if (i != w->rank && !tdm_cma_usable(tdm_comm_world_rank(wc, i)))
                atomic_store(&sh->am, 1);
    }
    /* the barrier's wait drops the window's lock (nobody else has the window yet) */
    tdm_lock_acquire(&w->lock);
    tdm_rma_barrier(w); /* every slot is written */
    tdm_lock_release(&w->lock);
    w->am = atomic_load(&sh->am) != 0;
    w->direct = !w->am && (w->flavor == TDM_WIN_ALLOCATE || w->flavor == TDM_WIN_SHARED);
    if (w->am && tdm_rma_am_start(w) != TDM_RMA_OK) {
        /* the others may already send: this process cannot serve them; the job ends */
        tdm_error(RMA, "window creation: cannot serve the message path: %s", tdm_rma_why());
        munmap(sh, total);
        tdm_comm_free(wc);
        free(w);
        return TDM_RMA_ENOMEM;
    }
    tdm_rma_win_register(w);
    TDM_COUNTER_ADD(&tdm_rma_windows, 1);
    *win_p = w;
    return TDM_RMA_OK;
}

tdm_rma_rc_t tdm_rma_free_check(tdm_win_t *w) {
    if (w->epoch != TDM_EPOCH_NONE && w->epoch != TDM_EPOCH_FENCE)
        return tdm_rma_fail(TDM_RMA_ESYNC, "an access epoch is still open (%s)",
                            w->epoch == TDM_EPOCH_LOCK       ? "MPI_Win_lock without unlock"
                            : w->epoch == TDM_EPOCH_LOCK_ALL ? "MPI_Win_lock_all without unlock_all"
                                                             : "MPI_Win_start without complete");
    if (w->exposed)
        return tdm_rma_fail(TDM_RMA_ESYNC, "an exposure epoch is still open (MPI_Win_post "
                                           "without MPI_Win_wait)");
    return TDM_RMA_OK;
}

tdm_rma_rc_t tdm_rma_win_free(tdm_win_t *w) {
    tdm_lock_acquire(&w->lock);
    tdm_rma_rc_t rc = tdm_rma_free_check(w);
    if (rc == TDM_RMA_OK)
        rc = tdm_rma_drain(w, -1);
    if (rc == TDM_RMA_OK && w->am)
        rc = tdm_rma_am_flush(w, -1);
    if (rc == TDM_RMA_OK)
        tdm_rma_barrier(w); /* nobody reaches this memory once every member is here */
    tdm_lock_release(&w->lock);
    if (rc != TDM_RMA_OK)
        return rc;
    if (w->am)
        tdm_rma_am_stop(w);
    tdm_rma_win_unregister(w);
    munmap(w->sh, w->sh_bytes);
    free(w->start_ranks);
    tdm_rma_batch_free(w);
    tdm_comm_free(w->comm);
    tdm_lock_fini(&w->lock);
    free(w);
    TDM_COUNTER_SUB(&tdm_rma_windows, 1);
    return TDM_RMA_OK;
}

tdm_rma_rc_t tdm_rma_shared_query(tdm_win_t *w, int rank, size_t *bytes_p, ptrdiff_t *unit_p,
                                  void **base_p) {
    if (w->flavor != TDM_WIN_ALLOCATE && w->flavor != TDM_WIN_SHARED) {
        /* MPI-4.1 12.2.3: memory that cannot be shared reads as none */
        *bytes_p = 0;
        *unit_p = rank >= 0 ? (ptrdiff_t)tdm_rma_slot(w, rank)->disp_unit : 1;
        *base_p = NULL;
        return TDM_RMA_OK;
    }
    if (rank < 0) {
        for (int i = 0; i < w->size; i++) {
            if (tdm_rma_slot(w, i)->bytes) {
                rank = i;
                break;
            }
        }
        if (rank < 0)
            rank = 0;
    }
    tdm_rma_slot_t *s = tdm_rma_slot(w, rank);
    *bytes_p = (size_t)s->bytes;
    *unit_p = (ptrdiff_t)s->disp_unit;
    *base_p = s->bytes ? w->data + s->base : NULL;
    return TDM_RMA_OK;
}

static tdm_rma_rc_t attach_impl(tdm_win_t *w, void *base, size_t bytes) {
    tdm_rma_slot_t *s = tdm_rma_slot(w, w->rank);
    uint64_t b = (uint64_t)(uintptr_t)base;
    uint32_t max = (uint32_t)TDM_PARAM_I(RMA_ATTACH_MAX);
    for (uint32_t i = 0; i < s->ndyn; i++) {
        if (b < s->dyn[i].base + s->dyn[i].bytes && s->dyn[i].base < b + bytes)
            return tdm_rma_fail(TDM_RMA_EATTACH,
                                "memory [%p, +%zu) overlaps memory attached at %p (%llu bytes)",
                                base, bytes, (void *)(uintptr_t)s->dyn[i].base,
                                (unsigned long long)s->dyn[i].bytes);
    }
    if (s->ndyn >= max)
        return tdm_rma_fail(TDM_RMA_EATTACH,
                            "%u regions are attached already, the most a dynamic window takes "
                            "(TANDEM_RMA_ATTACH_MAX)",
                            max);
    /* a sequence lock: origins reading the list retry while it is odd or changed */
    atomic_fetch_add_explicit(&s->dyn_seq, 1, memory_order_acq_rel);
    s->dyn[s->ndyn].base = b;
    s->dyn[s->ndyn].bytes = bytes;
    s->ndyn++;
    atomic_fetch_add_explicit(&s->dyn_seq, 1, memory_order_release);
    return TDM_RMA_OK;
}

static tdm_rma_rc_t detach_impl(tdm_win_t *w, const void *base) {
    tdm_rma_slot_t *s = tdm_rma_slot(w, w->rank);
    uint64_t b = (uint64_t)(uintptr_t)base;
    for (uint32_t i = 0; i < s->ndyn; i++) {
        if (s->dyn[i].base != b)
            continue;
        atomic_fetch_add_explicit(&s->dyn_seq, 1, memory_order_acq_rel);
        s->dyn[i] = s->dyn[s->ndyn - 1];
        s->ndyn--;
        atomic_fetch_add_explicit(&s->dyn_seq, 1, memory_order_release);
        return TDM_RMA_OK;
    }
    return tdm_rma_fail(TDM_RMA_EATTACH, "no memory is attached at %p", base);
}

/* Two threads may attach or detach at once: the window's lock orders their changes of
 * the region list (origins read it under its sequence lock). */
tdm_rma_rc_t tdm_rma_attach(tdm_win_t *w, void *base, size_t bytes) {
    tdm_lock_acquire(&w->lock);
    tdm_rma_rc_t rc = attach_impl(w, base, bytes);
    tdm_lock_release(&w->lock);
    return rc;
}

tdm_rma_rc_t tdm_rma_detach(tdm_win_t *w, const void *base) {
    tdm_lock_acquire(&w->lock);
    tdm_rma_rc_t rc = detach_impl(w, base);
    tdm_lock_release(&w->lock);
    return rc;
}
