/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An adaptive choice between two ways of doing the same thing, by their recent
 * cost. A cell keeps the last three costs of each way (ns per KiB), takes the
 * cheaper, and now and then looks at the other, the more rarely the further
 * apart the two costs and the longer the choice has held, so that looks take
 * about 1% of the time. The first completions after a change of way are not
 * timed (they run cold). p2p keeps cells per peer and size class for its
 * adaptive protocols (p2p/adapt.c), coll one per size class for its copies
 * (coll/sched.c).
 *
 * Owner: whoever holds the cell; nothing here is shared between processes.
 */
#ifndef TDM_BASE_ADAPT_H
#define TDM_BASE_ADAPT_H

#include <stdbool.h>
#include <stdint.h>

#define TDM_ADAPT_CLASSES 10 /* 16 KiB (and below), 32 KiB, ..., 8 MiB and up */
#define TDM_ADAPT_SAMPLES 2  /* timed completions in a look at the way not taken */

typedef struct tdm_adapt_cell {
    float cost[2][3];  /* per way: ns per KiB of the last three timed completions (0: none) */
    uint8_t next[2];   /* where each way's next sample goes */
    uint8_t way;       /* the way of the last decision */
    uint16_t left;     /* decisions left in the current look */
    uint16_t skip;     /* completions not to time (the way just changed) */
    uint8_t look_best; /* the better way when the last look began */
    uint8_t judge;     /* a look ended: the next decision sets `cap` */
    uint16_t cap;      /* longest period now: 64 after a look changed the way, doubling
                          after each look that did not */
    uint32_t n;        /* decisions since the last look at the way not taken */
    uint16_t lag;      /* completions of the way looked at after the look ended */
    uint16_t last_lag; /* ... after the last look: part of what a look costs */
    uint8_t begun;     /* a decision was taken (the first ones, cold, are not timed) */
    uint8_t by_min;    /* the estimate is the least sample, not the median: for a latency,
                          which noise only lengthens */
} tdm_adapt_cell_t;

/* Size class of a message or copy (index into a row of TDM_ADAPT_CLASSES cells). */
unsigned tdm_adapt_class(uint64_t size);
/* The estimate of one way: the median of its samples, or their minimum with
 * by_min (0: none). */
float tdm_adapt_cost(const tdm_adapt_cell_t *c, int way);
/* Completions not timed after changing to a way that streams through a ring of
 * `ring_bytes` with pieces of `size`: 1 + those that take to cycle the ring. */
unsigned tdm_adapt_warm(uint64_t ring_bytes, uint64_t size);
/* Decisions between two looks at the way not taken: what a look costs (its
 * length times the excess cost of that way) times 100; at least 16, at most
 * 4096 and at most `cap` (at least 64, and at least 16 looks: a look is at most
 * a seventeenth of the decisions). `warm0`, `warm1`: completions not timed
 * after changing to way 0 or way 1 (at least 1). */
unsigned tdm_adapt_period(const tdm_adapt_cell_t *c, unsigned warm0, unsigned warm1);
/* The first use of a cell: way 0 runs cold too, so its first warm0 completions
 * are not timed either (tdm_adapt_choose calls it). */
void tdm_adapt_begin(tdm_adapt_cell_t *c, unsigned warm0, unsigned warm1);
/* The way to take now: true for way 1. */
bool tdm_adapt_choose(tdm_adapt_cell_t *c, unsigned warm0, unsigned warm1);
/* A completion that went way `way1` took `ns` for `bytes`. */
void tdm_adapt_record(tdm_adapt_cell_t *c, bool way1, uint64_t ns, uint64_t bytes);

#endif
