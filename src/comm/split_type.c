/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_split_type: each process's choice becomes a 64-bit color, and an
 * ordinary split by color (intra- or intercomm) does the rest. A color hashes
 * what the processes must share: the kind of split, the node (for anything that
 * is only meaningful within one: memory, hardware instances, a directory's inode)
 * and the instance or the caller's value. So processes that chose differently
 * never meet, and processes of different nodes only meet by TDM_SPLIT_COLOR.
 *
 * MPI_COMM_TYPE_HW_UNGUIDED must give every process a strict subset, so its level
 * is chosen collectively: the processes exchange their instances at every level
 * and take the largest level at which all of them taking part lie within one
 * instance and there are at least two instances among them.
 */
#include "comm.h"
#include "../base/log.h"
#include "comm_impl.h"
#include "hwtopo.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, uint64_t v) {
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (v & 0xff)) * 0x100000001b3ull;
    return h;
}

/* The color of a split of `kind` by (a, b) on the node of color `node` (0: any
 * node). */
static uint64_t color_of(tdm_split_kind_t kind, uint64_t node, uint64_t a, uint64_t b) {
    return fnv(fnv(fnv(fnv(0xcbf29ce484222325ull, (uint64_t)kind), node), a), b);
}

/* What each process tells the others: its split item as far as it knows it, and
 * for HW_UNGUIDED its instances at every level. Every split_type call makes this
 * one exchange whatever the process chose, so processes passing MPI_UNDEFINED meet
 * the others whichever split they make. */
typedef struct type_item {
    tdm_comm_split_item_t it;
    int32_t unguided;
    int32_t pad;
    uint64_t node;
    int64_t inst[TDM_HW_LEVELS];
} type_item_t;

/* The largest level that splits the n processes of `all` that are unguided (all of
 * them within one instance, at least two instances), or -1. */
static int choose_level(const type_item_t *all, int n) {
    for (int l = 0; l < TDM_HW_LEVELS; l++) {
        const type_item_t *first = NULL; /* instances are told apart by node too */
        bool within = true, two = false;
        for (int i = 0; i < n && within; i++) {
            if (!all[i].unguided)
                continue;
            if (all[i].inst[l] < 0)
                within = false;
            else if (!first)
                first = &all[i];
            else if (all[i].inst[l] != first->inst[l] || all[i].node != first->node)
                two = true;
        }
        bool any = first != NULL;
        if (any && within && two)
            return l;
    }
    return -1;
}

int tdm_comm_split_type(tdm_comm_t *c, tdm_split_kind_t kind, uint64_t arg, int key, int *level_p,
                        tdm_comm_t **new_p) {
    uint64_t node = tdm_comm_node_color();
    type_item_t mine = {.it = {.key = key, .defined = 1}, .node = node};
    switch (kind) {
    case TDM_SPLIT_NONE:
        mine.it.defined = 0;
        break;
    case TDM_SPLIT_SHARED:
        mine.it.color = color_of(kind, node, 0, 0);
        break;
    case TDM_SPLIT_HW:
    case TDM_SPLIT_HW_UNGUIDED:
        tdm_comm_hw_instances(mine.inst);
        if (kind == TDM_SPLIT_HW_UNGUIDED) {
            /* the machine is the node: processes of different nodes share none */
            mine.inst[TDM_HW_MACHINE] = (int64_t)(node >> 1);
            mine.unguided = 1;
        } else if (arg < TDM_HW_LEVELS && mine.inst[arg] >= 0) {
            mine.it.color = color_of(TDM_SPLIT_HW, node, arg, (uint64_t)mine.inst[arg]);
        } else {
            mine.it.defined = 0; /* not within one instance */
        }
        break;
    case TDM_SPLIT_COLOR:
        mine.it.color = color_of(kind, 0, arg, 0);
        break;
    case TDM_SPLIT_NODE_COLOR:
        mine.it.color = color_of(kind, node, arg, 0);
        break;
    }
    int nl = c->size, n = nl + (c->inter ? c->remote.n : 0);
    type_item_t *all = malloc((size_t)n * sizeof(*all));
    tdm_comm_split_item_t *items = malloc((size_t)n * sizeof(*items));
    int rc = -1;
    if (!all || !items) {
        tdm_error(COMM, "out of memory for a split of %d ranks", n);
        goto out;
    }
    if (c->inter) {
        if (tdm_comm_inter_allgather(c, &mine, sizeof(mine), all, all + nl))
            goto out;
    } else {
        tdm_comm_peers_t p =
            tdm_comm_peers(c, NULL, nl, c->rank, TDM_COMM_TAG_GATHER, TDM_COMM_TAG_BCAST);
        if (tdm_comm_allgather(&p, &mine, sizeof(mine), all))
            goto out;
    }
    /* every process works out the unguided ones' colors from the same data */
    int level = choose_level(all, n);
    for (int i = 0; i < n; i++) {
        items[i] = all[i].it;
        if (all[i].unguided) {
            items[i].defined = level >= 0;
            if (level >= 0)
                items[i].color = color_of(TDM_SPLIT_HW, all[i].node, (uint64_t)level,
                                          (uint64_t)all[i].inst[level]);
        }
    }
    if (level_p)
        *level_p = mine.unguided ? level : -1;
    rc = c->inter ? tdm_comm_inter_split_items(c, items, items + nl, new_p)
                  : tdm_comm_split_items(c, items, new_p);
out:
    free(all);
    free(items);
    return rc;
}
