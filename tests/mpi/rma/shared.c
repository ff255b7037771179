/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Win_allocate_shared and MPI_Win_shared_query: every rank's segment reached
 * by plain loads and stores. usage: shared [noncontig]
 * Rank r asks for (r + 1) x 1000 bytes with disp_unit 4 x (r + 1), except the
 * middle rank (with 3 ranks or more), which asks for none. shared_query gives each
 * rank's size, disp_unit and an address in this process; by default the segments are
 * contiguous (rank r + 1's starts where rank r's ends, MPI 4.1 12.2.3); with
 * alloc_shared_noncontig they need not be. MPI_PROC_NULL gives the segment of the
 * lowest rank with a size above 0. Each rank stores into its own segment; after
 * Win_sync, a barrier and Win_sync (in a Lock_all epoch) every rank reads every
 * segment, then stores into its neighbour's segment and reads its own back.
 * Also: a window on a communicator of half the ranks (MPI_Comm_split_type), and one
 * where every rank asks for 0 bytes.
 */
#include "rmatest.h"

static void one_window(MPI_Comm comm, int noncontig) {
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    int empty = csize >= 3 ? csize / 2 : -1;
    MPI_Aint mysize = crank == empty ? 0 : (MPI_Aint)(crank + 1) * 1000;
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    unsigned char *mine = NULL;
    MPI_Win win;
    OK(MPI_Win_allocate_shared(mysize, 4 * (crank + 1), info, comm, &mine, &win));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    unsigned char **seg = malloc(sizeof(*seg) * (size_t)csize);
    MPI_Aint *sz = malloc(sizeof(MPI_Aint) * (size_t)csize);
    for (int p = 0; p < csize; p++) {
        int du = -1;
        OK(MPI_Win_shared_query(win, p, &sz[p], &du, &seg[p]));
        MPI_Aint want = p == empty ? 0 : (MPI_Aint)(p + 1) * 1000;
        CHECK(sz[p] == want, "rank %d's segment: size %ld, expected %ld", p, (long)sz[p],
              (long)want);
        CHECK(du == 4 * (p + 1), "rank %d's segment: disp_unit %d, expected %d", p, du,
              4 * (p + 1));
        if (p == crank && mysize > 0)
            CHECK(seg[p] == mine, "shared_query of this rank gave %p, not the base %p",
                  (void *)seg[p], (void *)mine);
        if (!noncontig && p > 0 && sz[p] > 0 && sz[p - 1] > 0)
            CHECK(seg[p] == seg[p - 1] + sz[p - 1],
                  "segments not contiguous: rank %d's at %p, rank %d's ends at %p", p,
                  (void *)seg[p], p - 1, (void *)(seg[p - 1] + sz[p - 1]));
    }
    MPI_Aint psz = -1;
    int pdu = -1;
    unsigned char *pbase = NULL;
    OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &psz, &pdu, &pbase));
    CHECK(psz == sz[0] && pdu == 4 && pbase == seg[0], "MPI_PROC_NULL: %ld %d %p", (long)psz, pdu,
          (void *)pbase);

    OK(MPI_Win_lock_all(0, win));
    for (MPI_Aint i = 0; i < mysize; i++)
        mine[i] = (unsigned char)(crank * 31 + i * 7);
    OK(MPI_Win_sync(win));
    MPI_Barrier(comm);
    OK(MPI_Win_sync(win));
    for (int p = 0; p < csize; p++)
        for (MPI_Aint i = 0; i < sz[p]; i++)
            if (seg[p][i] != (unsigned char)(p * 31 + i * 7)) {
                CHECK(0, "rank %d's segment, byte %ld: %d", p, (long)i, seg[p][i]);
                break;
            }
    MPI_Barrier(comm);
    /* stores into the next rank's segment, read back by its owner */
    int next = (crank + 1) % csize, prev = (crank + csize - 1) % csize;
    for (MPI_Aint i = 0; i < sz[next]; i++)
        seg[next][i] = (unsigned char)(200 + crank + i);
    OK(MPI_Win_sync(win));
    MPI_Barrier(comm);
    OK(MPI_Win_sync(win));
    for (MPI_Aint i = 0; i < mysize; i++)
        if (mine[i] != (unsigned char)(200 + prev + i)) {
            CHECK(0, "stored by rank %d: byte %ld is %d", prev, (long)i, mine[i]);
            break;
        }
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(comm);
    OK(MPI_Win_free(&win));
    free(seg);
    free(sz);
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    int noncontig = argc > 1 && !strcmp(argv[1], "noncontig");
    one_window(MPI_COMM_WORLD, noncontig);

    /* half the ranks, split by the shared-memory type then by parity */
    MPI_Comm node, half;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_split(node, rank % 2, rank, &half);
    one_window(half, noncontig);
    MPI_Comm_free(&half);
    MPI_Comm_free(&node);

    /* nobody asks for memory */
    void *base = NULL;
    MPI_Win win;
    OK(MPI_Win_allocate_shared(0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Aint sz = -1;
    int du = -1;
    void *qb = (void *)&sz;
    OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &qb));
    CHECK(sz == 0, "MPI_PROC_NULL when nobody has memory: size %ld", (long)sz);
    OK(MPI_Win_free(&win));
    return rt_finish();
}
