/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * p2p/req.c's communicator reference: a request given its communicator with
 * tdm_req_set_comm retains it once and releases it once when freed; a blocking call's
 * own request (tdm_req_set_comm_owned) does neither, the caller holding it; and a slot
 * that served an owned request takes a reference again when reused for another.
 */
#include "p2p/req.h"

#include <stdio.h>

static int refs, retains, releases;

static void retain(void *c) {
    (void)c;
    refs++;
    retains++;
}

static void release(void *c) {
    (void)c;
    refs--;
    releases++;
}

static int check(const char *what, int want_retains, int want_releases) {
    if (retains == want_retains && releases == want_releases && refs == 0)
        return 0;
    printf("%s: %d retains, %d releases, %d references left (want %d, %d, 0)\n", what, retains,
           releases, refs, want_retains, want_releases);
    return 1;
}

int main(void) {
    int comm_obj, errs = 0;
    tdm_req_set_comm_hooks(retain, release);

    tdm_req_t *r = tdm_req_alloc(TDM_REQ_SEND);
    tdm_req_set_comm(r, &comm_obj);
    if (refs != 1 || r->comm != &comm_obj) {
        printf("set_comm: %d references, comm %p\n", refs, r->comm);
        errs++;
    }
    tdm_req_free(r);
    errs += check("request with a reference", 1, 1);

    retains = releases = 0;
    r = tdm_req_alloc(TDM_REQ_RECV);
    tdm_req_set_comm_owned(r, &comm_obj);
    if (r->comm != &comm_obj) { /* error handlers and the dump still find it */
        printf("set_comm_owned: comm %p\n", r->comm);
        errs++;
    }
    tdm_req_free(r);
    errs += check("owned request", 0, 0);

    /* the free list hands the same slot back: it must not stay owned */
    retains = releases = 0;
    tdm_req_t *again = tdm_req_alloc(TDM_REQ_RECV);
    tdm_req_set_comm(again, &comm_obj);
    tdm_req_free(again);
    errs += check("request after an owned one", 1, 1);

    if (errs == 0)
        printf("No Errors\n");
    return errs != 0;
}
