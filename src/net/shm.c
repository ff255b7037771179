/* SPDX-License-Identifier: BSD-3-Clause */
#include "shm.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TDM_SHM_MAGIC 0x54616e64656d3031ull /* "Tandem01" */

tdm_shm_t tdm_shm;
/* read by peers through process_vm_readv to learn whether CMA works (cma.c) */
static volatile uint64_t probe_word;

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts) {
    /* not FUTEX_PRIVATE: the word is shared between processes */
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void tdm_shm_wake(int peer) {
    tdm_shm_proc_t *p = tdm_shm.port[peer].proc;
    atomic_fetch_add_explicit(&p->doorbell, 1, memory_order_seq_cst);
    futex(&p->doorbell, FUTEX_WAKE, INT_MAX, NULL);
}

void tdm_shm_block_fence(void) {
    if (tdm_shm.membarrier && syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0)
        return;
    atomic_thread_fence(memory_order_seq_cst);
}

/* Light publishes need every rank registered for GLOBAL_EXPEDITED (the kernel
 * is the node's, so all ranks get the same answer). A rank that cannot
 * register publishes with seq_cst stores; a failing membarrier call later
 * (not expected once registered) leaves a blocked rank to its timeout. */
static void membarrier_setup(tdm_shm_t *s) {
    s->membarrier = 0;
    if (!TDM_PARAM_I(SHM_MEMBARRIER))
        return;
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED))
        return;
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0)
        s->membarrier = 1;
    else
        tdm_debug(SHM, "membarrier registration failed (%m): seq_cst publishes");
}

void tdm_shm_sleep(uint32_t seen, long timeout_us) {
    tdm_shm_proc_t *p = &tdm_shm.procs[tdm_shm.rank];
    struct timespec ts = {timeout_us / 1000000, (timeout_us % 1000000) * 1000};
    futex(&p->doorbell, FUTEX_WAIT, seen, &ts);
}

/* Where the parts of a node's segment start: the per-process blocks, the pair slots and
 * the rings, for `nlocal` ranks (not the job: a multi-node job's segment does not grow
 * with the world). */
typedef struct seg_layout {
    size_t off_procs, off_pairs, off_rings, bytes, ring_bytes;
} seg_layout_t;

static seg_layout_t seg_layout(int nlocal) {
    /* params.def's ranges hold: a power of two of 4..1M cells of 256 B..16 MiB, a
     * multiple of a cache line (other values were refused) */
    seg_layout_t l;
    size_t n = (size_t)nlocal;
    l.ring_bytes = (size_t)TDM_PARAM_I(SHM_CELLS) * (size_t)TDM_PARAM_I(SHM_CELL_SIZE);
    l.off_procs = 4096;
    l.off_pairs = TDM_ALIGN_UP(l.off_procs + n * sizeof(tdm_shm_proc_t), 4096);
    l.off_rings = TDM_ALIGN_UP(l.off_pairs + n * n * sizeof(tdm_shm_pair_t), 4096);
    l.bytes = l.off_rings + n * n * l.ring_bytes;
    return l;
}

size_t tdm_shm_bytes(int nlocal) {
    return seg_layout(nlocal).bytes;
}

int tdm_shm_init(int fd, size_t offset, const int *locals, int nlocal, int me, int world) {
    tdm_shm_t *s = &tdm_shm;
    uint64_t ncells = (uint64_t)TDM_PARAM_I(SHM_CELLS);
    uint64_t cell_size = (uint64_t)TDM_PARAM_I(SHM_CELL_SIZE);
    int rank = me, nranks = nlocal;
    memset(s, 0, sizeof(*s));
    s->rank = rank;
    s->nranks = nranks;
    s->world_size = world;
    s->ncells = (uint32_t)ncells;
    s->cell_mask = (uint32_t)ncells - 1;
    s->cell_size = (uint32_t)cell_size;
    s->lap_shift = (uint32_t)__builtin_ctzll(ncells);
    membarrier_setup(s);

    seg_layout_t lay = seg_layout(nlocal);
    s->ring_bytes = lay.ring_bytes;
    s->bytes = lay.bytes;

    /* every rank computes the same size; growing to it is idempotent and pages are
     * only allocated when touched, so unused rings (self, idle pairs) cost nothing. Never
     * shrink: mpirun's memfd is sealed against it (its stamp comes first), and a rank with
     * other tunables must not cut the others' mappings short (the layout check says why) */
    struct stat st;
    if (fstat(fd, &st) != 0 || ((size_t)st.st_size < offset + s->bytes &&
                                ftruncate(fd, (off_t)(offset + s->bytes)) != 0)) {
        tdm_error(SHM, "growing the shared segment (fd %d) to %zu bytes failed: %m", fd,
                  offset + s->bytes);
        return -errno;
    }
    s->base = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
    if (s->base == MAP_FAILED) {
        s->base = NULL;
        tdm_error(SHM, "mmap of %zu bytes of the shared segment failed: %m", s->bytes);
        return -errno;
    }
    s->hdr = (tdm_shm_hdr_t *)s->base;
    s->procs = (tdm_shm_proc_t *)((char *)s->base + lay.off_procs);
    s->pairs = (tdm_shm_pair_t *)((char *)s->base + lay.off_pairs);
    s->rings = (unsigned char *)s->base + lay.off_rings;
    s->port = aligned_alloc(64, (size_t)world * sizeof(tdm_shm_port_t));
    if (!s->port) {
        tdm_error(SHM, "out of memory for %d ring cursors", world);
        goto err_unmap;
    }
    memset(s->port, 0, (size_t)world * sizeof(tdm_shm_port_t));
    /* a peer of another node has no block here: one of zeros reads as "awake, no load" to
     * the engine's heuristics that look at a peer's block */
    static tdm_shm_proc_t far_proc;
    for (int w = 0; w < world; w++) {
        s->port[w].local = -1;
        s->port[w].proc = &far_proc;
    }
    for (int l = 0; l < nlocal; l++) {
        tdm_shm_port_t *pt = &s->port[locals[l]];
        size_t tx = (size_t)rank * (size_t)nranks + (size_t)l;
        size_t rx = (size_t)l * (size_t)nranks + (size_t)rank;
        pt->local = l;
        pt->tx_ring = s->rings + tx * s->ring_bytes;
        pt->rx_ring = s->rings + rx * s->ring_bytes;
        pt->proc = &s->procs[l];
        pt->rx_pair = &s->pairs[rx];
    }
    if (rank == 0) {
        s->hdr->nranks = (uint32_t)nranks;
        s->hdr->ncells = s->ncells;
        s->hdr->cell_size = s->cell_size;
    }
    s->procs[rank].pid = (int32_t)getpid();
    atomic_store_explicit(&s->procs[rank].cpu, -1, memory_order_relaxed);
    atomic_store_explicit(&s->procs[rank].beat, tdm_shm_clock(), memory_order_relaxed);
    probe_word = 0x74616e64656d0000ull ^ (uint64_t)getpid();
    s->procs[rank].probe_addr = (uint64_t)(uintptr_t)&probe_word;
    s->procs[rank].probe_val = probe_word;
    tdm_shm_barrier(NULL);
    if (s->hdr->ncells != s->ncells || s->hdr->cell_size != s->cell_size ||
        s->hdr->nranks != (uint32_t)nranks) {
        tdm_error(SHM,
                  "ranks disagree on the segment layout (local rank 0: %u cells of %u bytes for "
                  "%u ranks; here: %u of %u for %d): set TANDEM_SHM_* alike on every rank",
                  s->hdr->ncells, s->hdr->cell_size, s->hdr->nranks, s->ncells, s->cell_size,
                  nranks);
        goto err_unmap;
    }
    return 0;

err_unmap:
    free(s->port);
    s->port = NULL;
    munmap(s->base, s->bytes);
    s->base = NULL;
    return -EINVAL;
}

void tdm_shm_fini(void) {
    tdm_shm_t *s = &tdm_shm;
    if (!s->base)
        return;
    munmap(s->base, s->bytes);
    free(s->port);
    s->port = NULL;
    s->base = NULL;
}

void tdm_shm_barrier(void (*progress)(void)) {
    tdm_shm_hdr_t *h = tdm_shm.hdr;
    /* the epoch is read before arriving, so the last arriver's bump is always seen */
    uint32_t epoch = atomic_load_explicit(&h->barrier_epoch, memory_order_acquire);
    uint32_t n = (uint32_t)tdm_shm.nranks;
    if (atomic_fetch_add_explicit(&h->barrier_count, 1, memory_order_acq_rel) + 1 == n) {
        atomic_store_explicit(&h->barrier_count, 0, memory_order_relaxed);
        atomic_store_explicit(&h->barrier_epoch, epoch + 1, memory_order_release);
        futex(&h->barrier_epoch, FUTEX_WAKE, INT_MAX, NULL);
        return;
    }
    for (unsigned spins = 0; atomic_load_explicit(&h->barrier_epoch, memory_order_acquire) == epoch;
         spins++) {
        if (progress)
            progress();
        if (spins < 64)
            continue;
        if (progress) {
            sched_yield();
        } else {
            /* nothing to serve: block until the last rank bumps the epoch */
            struct timespec ts = {0, 10 * 1000 * 1000};
            futex(&h->barrier_epoch, FUTEX_WAIT, epoch, &ts);
        }
    }
}
