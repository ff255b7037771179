/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every window kind x every synchronization x every operation, contiguous and derived
 * target datatypes: each rank writes to, reads from and accumulates into its right
 * neighbour, and every value is checked where it lands.
 */
#include "rmatest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64

/* rmatest.h's kinds but shared_noncontig (rma/ops runs every operation on it) */
static const int kinds[] = {K_CREATE, K_ALLOCATE, K_SHARED, K_DYNAMIC};
enum { S_FENCE, S_LOCK, S_LOCK_ALL, S_PSCW, NSYNCS };
static const char *sname[] = {"fence", "lock", "lock_all+flush", "pscw"};

typedef struct {
    MPI_Win win;
    long *mem;
    MPI_Aint base_of_right; /* dynamic: the right neighbour's address */
    void *own;
} win_t;

static void make(int kind, win_t *w) {
    w->own = NULL;
    switch (kind) {
    case K_CREATE:
        w->mem = w->own = calloc(N, sizeof(long));
        MPI_Win_create(w->mem, N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &w->win);
        break;
    case K_ALLOCATE:
        MPI_Win_allocate(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem,
                         &w->win);
        break;
    case K_SHARED:
        MPI_Win_allocate_shared(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &w->mem, &w->win);
        break;
    case K_DYNAMIC:
        w->mem = w->own = calloc(N, sizeof(long));
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        MPI_Win_attach(w->win, w->mem, N * sizeof(long));
        break;
    }
    memset(w->mem, 0, N * sizeof(long));
    MPI_Aint mine;
    MPI_Get_address(w->mem, &mine);
    MPI_Aint *all = malloc(size * sizeof(MPI_Aint));
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    w->base_of_right = all[(rank + 1) % size];
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void destroy(int kind, win_t *w) {
    if (kind == K_DYNAMIC)
        MPI_Win_detach(w->win, w->mem);
    MPI_Win_free(&w->win);
    free(w->own);
}

/* displacement of element i at the right neighbour */
static MPI_Aint disp(int kind, win_t *w, int i) {
    return kind == K_DYNAMIC ? w->base_of_right + i * (MPI_Aint)sizeof(long) : i;
}

static MPI_Group neighbour_group(int peer) {
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &g);
    MPI_Group_free(&world);
    return g;
}

static void open_epoch(int sync, win_t *w, int right, int left) {
    switch (sync) {
    case S_FENCE:
        MPI_Win_fence(0, w->win);
        break;
    case S_LOCK:
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w->win);
        break;
    case S_LOCK_ALL:
        MPI_Win_lock_all(0, w->win);
        break;
    case S_PSCW: {
        MPI_Group gl = neighbour_group(left), gr = neighbour_group(right);
        MPI_Win_post(gl, 0, w->win);
        MPI_Win_start(gr, 0, w->win);
        MPI_Group_free(&gl);
        MPI_Group_free(&gr);
        break;
    }
    }
}

static void mid_epoch(int sync, win_t *w, int right) {
    if (sync == S_LOCK_ALL)
        MPI_Win_flush(right, w->win);
    else if (sync == S_LOCK)
        MPI_Win_flush_local(right, w->win);
}

static void close_epoch(int sync, win_t *w, int right) {
    switch (sync) {
    case S_FENCE:
        MPI_Win_fence(0, w->win);
        break;
    case S_LOCK:
        MPI_Win_unlock(right, w->win);
        break;
    case S_LOCK_ALL:
        MPI_Win_unlock_all(w->win);
        break;
    case S_PSCW:
        MPI_Win_complete(w->win);
        MPI_Win_wait(w->win);
        break;
    }
    /* the data the others put here is visible after their epoch and a barrier */
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run(int kind, int sync) {
    win_t w;
    make(kind, &w);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long src[N], got[N], res[N];

    /* 1: a contiguous Put into [0, 16), a strided one into the even slots of [16, 48), two
     * Accumulates into [48, 56) */
    for (int i = 0; i < N; i++)
        src[i] = 1000 * rank + i;
    open_epoch(sync, &w, right, left);
    MPI_Put(src, 16, MPI_LONG, right, disp(kind, &w, 0), 16, MPI_LONG, w.win);
    MPI_Datatype v16;
    MPI_Type_vector(16, 1, 2, MPI_LONG, &v16);
    MPI_Type_commit(&v16);
    MPI_Put(src + 16, 16, MPI_LONG, right, disp(kind, &w, 16), 1, v16, w.win);
    mid_epoch(sync, &w, right);
    MPI_Accumulate(src, 8, MPI_LONG, right, disp(kind, &w, 48), 8, MPI_LONG, MPI_SUM, w.win);
    MPI_Accumulate(src, 8, MPI_LONG, right, disp(kind, &w, 48), 8, MPI_LONG, MPI_SUM, w.win);
    close_epoch(sync, &w, right);
    for (int i = 0; i < 16; i++)
        CHECK(w.mem[i] == 1000 * left + i, "%s/%s: put [%d] = %ld, want %d", rt_kind_names[kind],
              sname[sync], i, w.mem[i], 1000 * left + i);
    for (int i = 0; i < 16; i++) {
        CHECK(w.mem[16 + 2 * i] == 1000 * left + 16 + i, "%s/%s: strided put [%d] = %ld",
              rt_kind_names[kind], sname[sync], 16 + 2 * i, w.mem[16 + 2 * i]);
        CHECK(w.mem[17 + 2 * i] == 0, "%s/%s: strided put wrote the gap [%d] = %ld",
              rt_kind_names[kind], sname[sync], 17 + 2 * i, w.mem[17 + 2 * i]);
    }
    for (int i = 0; i < 8; i++)
        CHECK(w.mem[48 + i] == 2 * (1000 * left + i), "%s/%s: acc [%d] = %ld", rt_kind_names[kind],
              sname[sync], 48 + i, w.mem[48 + i]);

    MPI_Barrier(MPI_COMM_WORLD); /* checked before the left neighbour changes it again */

    /* 2: Get, Get_accumulate, Fetch_and_op, Compare_and_swap read back what is there */
    memset(got, -1, sizeof(got));
    memset(res, -1, sizeof(res));
    long one = 1, fop = -1, cmp = 1000 * rank + 0, nv = 77, old = -1, gsum[4];
    long add[4] = {1, 2, 3, 4};
    open_epoch(sync, &w, right, left);
    MPI_Get(got, 16, MPI_LONG, right, disp(kind, &w, 0), 16, MPI_LONG, w.win);
    MPI_Get(got + 16, 16, MPI_LONG, right, disp(kind, &w, 16), 1, v16, w.win);
    MPI_Get_accumulate(add, 4, MPI_LONG, gsum, 4, MPI_LONG, right, disp(kind, &w, 48), 4, MPI_LONG,
                       MPI_SUM, w.win);
    MPI_Fetch_and_op(&one, &fop, MPI_LONG, right, disp(kind, &w, 60), MPI_SUM, w.win);
    MPI_Compare_and_swap(&nv, &cmp, &old, MPI_LONG, right, disp(kind, &w, 0), w.win);
    close_epoch(sync, &w, right);
    for (int i = 0; i < 16; i++)
        CHECK(got[i] == 1000 * rank + i, "%s/%s: get [%d] = %ld", rt_kind_names[kind], sname[sync],
              i, got[i]);
    for (int i = 0; i < 16; i++)
        CHECK(got[16 + i] == 1000 * rank + 16 + i, "%s/%s: strided get [%d] = %ld",
              rt_kind_names[kind], sname[sync], i, got[16 + i]);
    for (int i = 0; i < 4; i++) {
        CHECK(gsum[i] == 2 * (1000 * rank + i), "%s/%s: get_accumulate old [%d] = %ld",
              rt_kind_names[kind], sname[sync], i, gsum[i]);
        CHECK(w.mem[48 + i] == 2 * (1000 * left + i) + add[i], "%s/%s: get_accumulate [%d] = %ld",
              rt_kind_names[kind], sname[sync], i, w.mem[48 + i]);
    }
    CHECK(fop == 0 && w.mem[60] == 1, "%s/%s: fetch_and_op old %ld, now %ld", rt_kind_names[kind],
          sname[sync], fop, w.mem[60]);
    CHECK(old == 1000 * rank && w.mem[0] == 77, "%s/%s: compare_and_swap old %ld, now %ld",
          rt_kind_names[kind], sname[sync], old, w.mem[0]);
    MPI_Type_free(&v16);
    destroy(kind, &w);
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        for (int s = 0; s < NSYNCS; s++)
            run(kinds[k], s);
    return rt_finish();
}
