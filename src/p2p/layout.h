/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory layouts of communication buffers, local or in a peer process, and the
 * CMA copy between two of them: stream bytes [off, off+len) of the message are
 * turned into iovecs (at most IOV_MAX a call) on both sides, and partial
 * transfers are resumed.
 */
#ifndef TDM_P2P_LAYOUT_H
#define TDM_P2P_LAYOUT_H

#include "wire.h"
#include "../dtype/dtype.h"

#include <stdbool.h>
#include <sys/uio.h>

typedef struct tdm_layout {
    uintptr_t base;
    size_t count;
    ptrdiff_t extent;
    ptrdiff_t true_lb;
    size_t item_size;
    const tdm_seg_t *segs;
    size_t nsegs;
    bool contig;
    tdm_seg_t *owned; /* segments fetched from a peer (freed by tdm_layout_clear) */
} tdm_layout_t;

/* Can a peer address this buffer by CMA from its description? */
bool tdm_layout_describable(const tdm_dtype_t *dt);
void tdm_layout_local(tdm_layout_t *l, void *buf, size_t count, const tdm_dtype_t *dt);
void tdm_layout_to_wire(const tdm_layout_t *l, tdm_rlayout_t *w);
/* A peer's layout; its segment list (if any) is read from the peer by CMA.
 * 0 or -errno. */
int tdm_layout_remote(tdm_layout_t *l, const tdm_rlayout_t *w, int peer, int pid);
void tdm_layout_clear(tdm_layout_t *l);

/* Move stream bytes [off, off+len): read them from `remote` into `local`
 * (write=false) or write them from `local` into `remote`. 0 or -errno. */
int tdm_layout_cma_copy(int peer, int pid, bool write, const tdm_layout_t *local,
                        const tdm_layout_t *remote, size_t off, size_t len);

#endif
