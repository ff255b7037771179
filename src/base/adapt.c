/* SPDX-License-Identifier: BSD-3-Clause */
/* The adaptive cell (adapt.h): estimates, periods between looks, decisions. */
#include "adapt.h"
#include "util.h"

unsigned tdm_adapt_class(uint64_t size) {
    unsigned lg = size ? 63u - (unsigned)__builtin_clzll(size) : 0;
    return lg <= 14 ? 0 : TDM_MIN(lg - 14, TDM_ADAPT_CLASSES - 1u);
}

float tdm_adapt_cost(const tdm_adapt_cell_t *c, int way) {
    const float *v = c->cost[way];
    float a = v[0], b = v[1], d = v[2];
    if (b == 0)
        return a;  /* one sample (or none) */
    if (c->by_min) /* latencies: noise only adds */
        return d == 0 ? TDM_MIN(a, b) : TDM_MIN(TDM_MIN(a, b), d);
    if (d == 0)
        return TDM_MAX(a, b); /* two: the worse, until a third can outvote it */
    return TDM_MAX(TDM_MIN(a, b), TDM_MIN(TDM_MAX(a, b), d));
}

unsigned tdm_adapt_warm(uint64_t ring_bytes, uint64_t size) {
    if (size == 0)
        return 1;
    return 1 + (unsigned)TDM_MIN((ring_bytes + size - 1) / size, (uint64_t)1000);
}

/* Completions not timed after changing to `way`. */
static unsigned warm_of(int way, unsigned warm0, unsigned warm1) {
    return TDM_MAX(1u, way ? warm1 : warm0);
}

unsigned tdm_adapt_period(const tdm_adapt_cell_t *c, unsigned warm0, unsigned warm1) {
    float r = tdm_adapt_cost(c, 0), p = tdm_adapt_cost(c, 1);
    int other = p < r ? 0 : 1; /* the way a look would take */
    float lo = TDM_MIN(r, p), hi = TDM_MAX(r, p);
    unsigned look = warm_of(other, warm0, warm1) + TDM_ADAPT_SAMPLES + c->last_lag;
    float period = (float)look * 100.0f * (hi - lo) / (lo > 0 ? lo : 1);
    /* a look at most a seventeenth of the decisions, however soon it is due: a
     * look can last long (two ring cycles; a window of sends out all take the
     * way looked at, `last_lag`) */
    float cap = TDM_MAX(c->cap < 64 ? 64.0f : (float)c->cap, 16.0f * (float)look);
    period = TDM_MIN(period, cap);
    return period < 16 ? 16 : period > 4096 ? 4096 : (unsigned)period;
}

/* Fresh ring pages fault and a first CMA read pins its pages: timing them
 * would send the next many messages the slower way. */
void tdm_adapt_begin(tdm_adapt_cell_t *c, unsigned warm0, unsigned warm1) {
    if (c->begun)
        return;
    c->begun = 1;
    c->skip = (uint16_t)warm_of(0, warm0, warm1);
}

bool tdm_adapt_choose(tdm_adapt_cell_t *c, unsigned warm0, unsigned warm1) {
    uint8_t way;
    float r = tdm_adapt_cost(c, 0), p = tdm_adapt_cost(c, 1);
    tdm_adapt_begin(c, warm0, warm1);
    if (c->left) {
        c->left--;
        way = c->way;
    } else if (r == 0) {
        way = 0; /* a first sample of each way, RGET first */
    } else if (p == 0) {
        way = 1;
    } else {
        uint8_t best = p < r;
        way = best;
        if (c->judge) { /* the first decision after a look, with its times */
            c->judge = 0;
            c->cap =
                best == c->look_best ? (uint16_t)TDM_MIN(TDM_MAX(c->cap, 64u) * 2u, 4096u) : 64;
        } else if (best != c->way) {
            c->cap = 64; /* the times turned the choice round: the host moved us */
            c->n = 0;
        }
        if (++c->n >= tdm_adapt_period(c, warm0, warm1)) {
            /* the host may have moved us: look again, from fresh samples */
            c->n = 0;
            c->look_best = best;
            c->judge = 1;
            c->last_lag = c->lag;
            c->lag = 0;
            way = !best;
            c->cost[way][0] = c->cost[way][1] = c->cost[way][2] = 0;
            c->next[way] = 0;
            c->left = (uint16_t)(warm_of(way, warm0, warm1) + TDM_ADAPT_SAMPLES - 1);
        }
    }
    if (way != c->way) {
        c->way = way;
        c->skip = (uint16_t)warm_of(way, warm0, warm1);
    }
    return way != 0;
}

void tdm_adapt_record(tdm_adapt_cell_t *c, bool way1, uint64_t ns, uint64_t bytes) {
    bool stale = (way1 ? 1 : 0) != c->way; /* the way changed before this completed */
    /* after a look, one of the way looked at: the look lasted that much longer
     * (a sender with a window of sends out took that way for all of them) */
    if (stale && c->way == c->look_best && c->lag < UINT16_MAX)
        c->lag++;
    if (c->skip) {
        c->skip--;
        return;
    }
    if (bytes == 0 || stale)
        return;
    float x = (float)ns * 1024.0f / (float)bytes;
    if (x < 1e-3f)
        x = 1e-3f; /* 0 means no sample */
    int way = way1 ? 1 : 0;
    c->cost[way][c->next[way]] = x;
    c->next[way] = (uint8_t)((c->next[way] + 1) % 3);
}
