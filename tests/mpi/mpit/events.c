/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Events are delivered with the right payload (2 ranks):
 *  - rank 0 sends 3 messages that arrive before their receives: rank 1 hears
 *    tandem_unexp_enqueued for each and an empty last one (peer 0, the tag,
 *    the size, queue lengths 1, 2, 3, 4), then tandem_unexp_dequeued as it
 *    receives the three (lengths 3, 2, 1); MPI_T_event_copy lays the data out as
 *    MPI_T_event_get_info's displacements say, timestamps come from the one
 *    source, in order, between the source's readings before and after;
 *  - a 1 MiB message: tandem_rndv_protocol at the receiver names the protocol
 *    whose counter moved;
 *  - exchanges of 256 KiB both ways: if rank 0 (the pair's lower rank) took
 *    the pipeline, it heard tandem_adapt_changed to it (kind 0, class 4);
 *  - a registration with only an MPI_T_CB_REQUIRE_NONE callback gets nothing
 *    (events come from inside the library) and counts them as dropped; its
 *    dropped handler hears the count before the first event its new
 *    MPI_RESTRICTED callback gets; the free callback runs on free;
 *  - with the argument cma-fail (TANDEM_TEST_CMA_FAIL_AFTER=0), a failing CMA
 *    copy raises tandem_cma_off (reason 1, EPERM) for the peer.
 */
#include "mtest.h"

#include <errno.h>

#define MAXLOG 64
typedef struct {
    int event; /* index */
    long long v[8];
    MPI_Count ts;
    int source;
    int copy_ok;
} logged_t;
static logged_t logs[MAXLOG];
static int nlogs;

static int ev_unexp_in, ev_unexp_out, ev_rndv, ev_adapt, ev_cma;
static MPI_Datatype types[8][8];
static MPI_Aint displs[8][8];
static int nelems[8];

static void on_event(MPI_T_event_instance inst, MPI_T_event_registration reg,
                     MPI_T_cb_safety safety, void *user) {
    (void)reg;
    int e = *(int *)user;
    if (safety != MPI_T_CB_REQUIRE_MPI_RESTRICTED || nlogs >= MAXLOG)
        return;
    logged_t *l = &logs[nlogs++];
    l->event = e;
    unsigned char whole[128] = {0};
    MPI_T_event_copy(inst, whole);
    l->copy_ok = 1;
    for (int k = 0; k < nelems[e]; k++) {
        if (types[e][k] == MPI_INT) {
            int x = 0;
            MPI_T_event_read(inst, k, &x);
            l->v[k] = x;
            l->copy_ok &= !memcmp(whole + displs[e][k], &x, sizeof(x));
        } else {
            unsigned long long x = 0;
            MPI_T_event_read(inst, k, &x);
            l->v[k] = (long long)x;
            l->copy_ok &= !memcmp(whole + displs[e][k], &x, sizeof(x));
        }
    }
    int bad = 0;
    l->copy_ok &= MPI_T_event_read(inst, nelems[e], &bad) == MPI_T_ERR_INVALID_INDEX;
    MPI_T_event_get_timestamp(inst, &l->ts);
    MPI_T_event_get_source(inst, &l->source);
}

static long long dropped_count = -1;
static int dropped_before_event = -1, dropped_source = -1;
static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source,
                       MPI_T_cb_safety safety, void *user) {
    (void)reg;
    (void)safety;
    (void)user;
    dropped_count = count;
    dropped_source = source;
    dropped_before_event = nlogs;
}
static int none_called;
static void on_none(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety,
                    void *user) {
    (void)inst;
    (void)reg;
    (void)safety;
    (void)user;
    none_called++;
}
static void *freed_with = NULL;
static int freed_safety = -1;
static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user) {
    (void)reg;
    freed_with = user;
    freed_safety = safety;
}

static int event_index(const char *name) {
    int i = -1;
    M_OK(MPI_T_event_get_index(name, &i));
    if (i >= 0 && i < 8) {
        nelems[i] = 8;
        M_OK(MPI_T_event_get_info(i, NULL, NULL, NULL, types[i], displs[i], &nelems[i], NULL, NULL,
                                  NULL, NULL, NULL));
    }
    return i;
}

static MPI_T_event_registration reg_of(int *which) {
    MPI_T_event_registration r = NULL;
    M_OK(MPI_T_event_handle_alloc(*which, NULL, MPI_INFO_NULL, &r));
    M_OK(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, which,
                                       on_event));
    return r;
}

static int count_of(int event) {
    int n = 0;
    for (int i = 0; i < nlogs; i++)
        n += logs[i].event == event;
    return n;
}

static char big[1 << 20], big2[256 << 10];

int main(int argc, char **argv) {
    int provided;
    int cma_fail = argc > 1 && !strcmp(argv[1], "cma-fail");
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    ev_unexp_in = event_index("tandem_unexp_enqueued");
    ev_unexp_out = event_index("tandem_unexp_dequeued");
    ev_rndv = event_index("tandem_rndv_protocol");
    ev_adapt = event_index("tandem_adapt_changed");
    ev_cma = event_index("tandem_cma_off");
    /* registered before MPI_Init: a failing CMA probe would be heard too */
    MPI_T_event_registration rcma = reg_of(&ev_cma);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    int go = 0;

    if (cma_fail) {
        /* every CMA copy fails: the message still arrives, by DATA cells */
        if (m_rank == 0)
            MPI_Send(big, sizeof(big), MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        else
            MPI_Recv(big, sizeof(big), MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int mine = 0, peer = 1 - m_rank;
        for (int i = 0; i < nlogs; i++) {
            if (logs[i].event != ev_cma || logs[i].v[2] != 1)
                continue;
            mine++;
            M_CHECK(logs[i].v[0] == peer && logs[i].v[1] == EPERM, "cma_off: peer %lld errno %lld",
                    logs[i].v[0], logs[i].v[1]);
        }
        int all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        M_CHECK(all >= 1, "no rank heard tandem_cma_off after a failed copy");
        goto done;
    }

    /* unexpected messages, and a registration that gets nothing (NONE only) */
    MPI_T_event_registration rin = NULL, rout = NULL, rnone = NULL;
    MPI_Count t0 = 0, t1 = 0;
    if (m_rank == 1) {
        rin = reg_of(&ev_unexp_in);
        rout = reg_of(&ev_unexp_out);
        M_OK(MPI_T_event_handle_alloc(ev_unexp_in, NULL, MPI_INFO_NULL, &rnone));
        M_OK(MPI_T_event_register_callback(rnone, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL,
                                           on_none));
        M_OK(MPI_T_event_set_dropped_handler(rnone, on_dropped));
        M_OK(MPI_T_source_get_timestamp(0, &t0));
        MPI_Send(&go, 1, MPI_INT, 0, 77770, MPI_COMM_WORLD);
        MPI_Probe(0, 77789, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++)
            MPI_Recv(big, 100, MPI_BYTE, 0, 77781 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        M_OK(MPI_T_source_get_timestamp(0, &t1));
        int seen_in = 0, seen_out = 0;
        MPI_Count last = 0;
        for (int i = 0; i < nlogs; i++) {
            logged_t *l = &logs[i];
            M_CHECK(l->copy_ok && l->source == 0, "event %d: copy %d, source %d", i, l->copy_ok,
                    l->source);
            M_CHECK(l->ts >= t0 && l->ts <= t1 && l->ts >= last, "event %d at %lld (%lld..%lld)", i,
                    (long long)l->ts, (long long)t0, (long long)t1);
            last = l->ts;
            if (l->event == ev_unexp_in && seen_in == 3) { /* the empty one, last */
                M_CHECK(l->v[0] == 0 && l->v[1] == 77789 && l->v[2] == 0 && l->v[3] == 4,
                        "enqueued 3: peer %lld tag %lld bytes %lld length %lld", l->v[0], l->v[1],
                        l->v[2], l->v[3]);
                seen_in++;
            } else if (l->event == ev_unexp_in) {
                M_CHECK(l->v[0] == 0 && l->v[1] == 77781 + seen_in &&
                            l->v[2] == 10 * (seen_in + 1) && l->v[3] == seen_in + 1,
                        "enqueued %d: peer %lld tag %lld bytes %lld length %lld", seen_in, l->v[0],
                        l->v[1], l->v[2], l->v[3]);
                seen_in++;
            } else if (l->event == ev_unexp_out) {
                M_CHECK(l->v[0] == 0 && l->v[1] == 77781 + seen_out &&
                            l->v[2] == 10 * (seen_out + 1) && l->v[3] == 3 - seen_out,
                        "dequeued %d: peer %lld tag %lld bytes %lld length %lld", seen_out, l->v[0],
                        l->v[1], l->v[2], l->v[3]);
                seen_out++;
            }
        }
        M_CHECK(seen_in == 4 && seen_out == 3, "%d enqueued, %d dequeued", seen_in, seen_out);
        M_CHECK(none_called == 0 && dropped_count == -1,
                "a NONE callback ran %d times, dropped %lld", none_called, dropped_count);
        /* an MPI_RESTRICTED callback now: the drops are told before its first event */
        static int which_none = 0;
        which_none = ev_unexp_in;
        M_OK(MPI_T_event_register_callback(rnone, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                           &which_none, on_event));
        int before = nlogs;
        MPI_Send(&go, 1, MPI_INT, 0, 77771, MPI_COMM_WORLD);
        MPI_Probe(0, 77784, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(big, 100, MPI_BYTE, 0, 77784, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        M_CHECK(dropped_count == 4 && dropped_source == 0 && dropped_before_event == before + 1,
                "dropped handler: count %lld source %d, before event %d (of %d..)", dropped_count,
                dropped_source, dropped_before_event, before);
        M_CHECK(count_of(ev_unexp_in) == 4 + 2, "%d enqueued events", count_of(ev_unexp_in));
        static int token;
        M_OK(MPI_T_event_handle_free(rnone, &token, on_free));
        M_CHECK(freed_with == &token && freed_safety == MPI_T_CB_REQUIRE_NONE,
                "free callback: user %p, safety %d", freed_with, freed_safety);
        M_OK(MPI_T_event_handle_free(rin, NULL, NULL));
        M_OK(MPI_T_event_handle_free(rout, NULL, NULL));
        MPI_Send(&go, 1, MPI_INT, 0, 77772, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 1, 77770, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++)
            MPI_Send(big, 10 * (i + 1), MPI_BYTE, 1, 77781 + i, MPI_COMM_WORLD);
        MPI_Send(big, 0, MPI_BYTE, 1, 77789, MPI_COMM_WORLD);
        MPI_Recv(&go, 1, MPI_INT, 1, 77771, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(big, 100, MPI_BYTE, 1, 77784, MPI_COMM_WORLD);
        /* no other message (a collective's) may reach rank 1 while it counts */
        MPI_Recv(&go, 1, MPI_INT, 1, 77772, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (m_rank == 1) /* the empty message of tag 77789 is still queued */
        MPI_Recv(big, 0, MPI_BYTE, 0, 77789, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a rendezvous: the receiver names the protocol its counter shows */
    {
        MPI_T_event_registration r = m_rank == 1 ? reg_of(&ev_rndv) : NULL;
        MPI_T_pvar_session s;
        M_OK(MPI_T_pvar_session_create(&s));
        static const char *const names[] = {"tandem_rndv_pipeline_msgs", "tandem_rndv_rget_msgs",
                                            "tandem_rndv_rput_msgs", "tandem_rndv_coop_msgs",
                                            "tandem_rndv_rtr_msgs"};
        MPI_T_pvar_handle h[5];
        for (int p = 0; p < 5; p++)
            h[p] = m_handle(s, names[p], MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
        int before = nlogs;
        if (m_rank == 0)
            MPI_Send(big, sizeof(big), MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        else
            MPI_Recv(big, sizeof(big), MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (m_rank == 1) {
            M_CHECK(nlogs == before + 1 && logs[before].event == ev_rndv,
                    "%d events for one rendezvous", nlogs - before);
            int p = (int)logs[before].v[2];
            MPI_T_enum e;
            M_OK(MPI_T_event_get_info(ev_rndv, NULL, NULL, NULL, NULL, NULL, NULL, &e, NULL, NULL,
                                      NULL, NULL));
            char item[32];
            int value = -1, len = sizeof(item);
            M_OK(MPI_T_enum_get_item(e, p, &value, item, &len));
            char want[64];
            snprintf(want, sizeof(want), "tandem_rndv_%s_msgs", item);
            for (int k = 0; k < 5; k++)
                M_CHECK(m_read(s, h[k]) == (strcmp(names[k], want) ? 0u : 1u),
                        "event says %s, %s counted %llu", item, names[k], m_read(s, h[k]));
            M_CHECK(logs[before].v[0] == 0 && logs[before].v[1] == (long long)sizeof(big),
                    "rendezvous event: peer %lld, %lld bytes", logs[before].v[0],
                    logs[before].v[1]);
            M_OK(MPI_T_event_handle_free(r, NULL, NULL));
        }
        M_OK(MPI_T_pvar_session_free(&s));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* exchanges: the lower rank's adaptive choice */
    {
        MPI_T_event_registration r = m_rank == 0 ? reg_of(&ev_adapt) : NULL;
        MPI_T_pvar_session s;
        M_OK(MPI_T_pvar_session_create(&s));
        MPI_T_pvar_handle pipe =
            m_handle(s, "tandem_adapt_exchange_pipeline", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
        for (int i = 0; i < 20; i++) {
            MPI_Request q;
            int peer = 1 - m_rank;
            MPI_Isend(big2, sizeof(big2), MPI_BYTE, peer, 3, MPI_COMM_WORLD, &q);
            MPI_Recv(big, sizeof(big2), MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        if (m_rank == 0) {
            int to_pipe = 0;
            for (int i = 0; i < nlogs; i++)
                if (logs[i].event == ev_adapt && logs[i].v[0] == 1 && logs[i].v[1] == 0 &&
                    logs[i].v[2] == 4 && logs[i].v[3] == 1)
                    to_pipe++;
            M_CHECK(m_read_sum(s, pipe, 10) == 0 || to_pipe > 0,
                    "%llu exchanges by the pipeline, no change to it heard",
                    m_read_sum(s, pipe, 10));
            M_OK(MPI_T_event_handle_free(r, NULL, NULL));
        }
        M_OK(MPI_T_pvar_session_free(&s));
    }

done:
    for (int i = 0; i < nlogs; i++) /* with CMA working, nothing turned it off */
        M_CHECK(cma_fail || logs[i].event != ev_cma || logs[i].v[2] == 0,
                "tandem_cma_off: peer %lld errno %lld reason %lld", logs[i].v[0], logs[i].v[1],
                logs[i].v[2]);
    M_OK(MPI_T_event_handle_free(rcma, NULL, NULL));
    int errs = m_finish();
    MPI_Finalize();
    M_OK(MPI_T_finalize());
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
