/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Post/Start/Complete/Wait with groups that are not the whole window: a ring.
 * usage: pscw KIND [EPOCHS (default 200)]
 * In each epoch rank r exposes its window to r - 1 and r - 2 only (Post), accesses
 * r + 1 and r + 2 only (Start), puts its epoch number and rank into its slot there,
 * and accumulates into a counter; every other epoch the target ends with Win_test
 * polled to completion, else with Win_wait. After each epoch the target checks what
 * its two origins wrote in that epoch (no epoch may see the next one's data: an
 * origin's next Start must wait for the target's next Post). With 1 or 2 ranks the
 * groups shrink to the distinct ranks.
 */
#include "rmatest.h"

static int ring_group(MPI_Group world, int d1, int d2, MPI_Group *g) {
    int ranks[2], n = 0;
    int a = ((rank + d1) % size + size) % size, b = ((rank + d2) % size + size) % size;
    ranks[n++] = a;
    if (b != a)
        ranks[n++] = b;
    MPI_Group_incl(world, n, ranks, g);
    return n;
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: pscw KIND [EPOCHS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    int epochs = argc > 2 ? atoi(argv[2]) : 200;
    rt_win_t W;
    rt_win_make(kind, 8 * 8, 8, MPI_COMM_WORLD, &W);
    long long *mem = (long long *)W.base;
    memset(mem, 0, 64);
    MPI_Group world, expose, access;
    MPI_Win_get_group(W.win, &world);
    int nexp = ring_group(world, -1, -2, &expose);
    int nacc = ring_group(world, 1, 2, &access);
    int targets[2] = {(rank + 1) % size, (rank + 2) % size};
    int origins[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
    long long counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int e = 0; e < epochs; e++) {
        OK(MPI_Win_post(expose, 0, W.win));
        OK(MPI_Win_start(access, 0, W.win));
        for (int i = 0; i < nacc; i++) {
            long long val[2] = {e, rank};
            long long one = 1;
            int t = targets[i];
            /* slot 2i at the target: origin r - 1 - i of that target is this rank */
            OK(MPI_Put(val, 2, MPI_LONG_LONG, t, rt_disp(&W, t, (MPI_Aint)(2 * i) * 8), 2,
                       MPI_LONG_LONG, W.win));
            OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, rt_disp(&W, t, 6 * 8), 1, MPI_LONG_LONG,
                              MPI_SUM, W.win));
        }
        OK(MPI_Win_complete(W.win));
        if (e % 2) {
            int flag = 0;
            while (!flag)
                OK(MPI_Win_test(W.win, &flag));
        } else {
            OK(MPI_Win_wait(W.win));
        }
        counter += nexp;
        for (int i = 0; i < nexp; i++)
            CHECK(mem[2 * i] == e && mem[2 * i + 1] == origins[i],
                  "epoch %d: slot %d holds epoch %lld from rank %lld, expected rank %d", e, i,
                  mem[2 * i], mem[2 * i + 1], origins[i]);
        CHECK(mem[6] == counter, "epoch %d: counter %lld, expected %lld", e, mem[6], counter);
    }
    MPI_Group_free(&expose);
    MPI_Group_free(&access);
    MPI_Group_free(&world);
    rt_win_free(&W);
    return rt_finish();
}
