/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A session beside the World Model, started and ended in either order:
 *   arg session-first: Session_init, MPI_Init, ..., MPI_Finalize, then the session
 *                      still works, then Session_finalize;
 *   arg world-first:   MPI_Init, Session_init, ..., Session_finalize, then
 *                      MPI_COMM_WORLD still works, then MPI_Finalize.
 * While both are up: objects of the two models are not mixed in one call (each
 * refused with the class of the offending argument); a group of the World Model
 * makes a communicator of the World Model with MPI_Comm_create_from_group. When
 * one model ends, the communicators derived from it that the user still holds are
 * refused by every call but MPI_Comm_free, and its groups can no longer make
 * communicators.
 */
#include "stest.h"

static void work(MPI_Comm c, int salt) {
    int rank, size, sum = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    T_OK(MPI_Allreduce(&salt, &sum, 1, MPI_INT, MPI_SUM, c));
    T_CHECK(sum == salt * size, "allreduce %d", sum);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, got = -1;
    T_OK(MPI_Sendrecv(&rank, 1, MPI_INT, to, salt, &got, 1, MPI_INT, from, salt, c,
                      MPI_STATUS_IGNORE));
    T_CHECK(got == from, "ring got %d, want %d", got, from);
}

/* Both models up: what mixes and what does not. */
static void mixing(MPI_Session s, MPI_Comm sc) {
    const char *other = "different sessions";
    MPI_Group wg, sg, out = MPI_GROUP_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    T_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &sg));
    int rc = MPI_Group_union(wg, sg, &out);
    T_FAILS(MPI_ERR_GROUP, "MPI_Group_union", rc);
    T_CHECK(rc == MPI_SUCCESS || t_msg_has(rc, other), "union's message does not say why");
    T_FAILS(MPI_ERR_GROUP, "MPI_Group_compare", MPI_Group_compare(wg, sg, &(int){0}));
    T_FAILS(MPI_ERR_GROUP, "MPI_Group_translate_ranks",
            MPI_Group_translate_ranks(sg, 1, (int[]){0}, wg, (int[]){0}));
    /* MPI_GROUP_EMPTY goes with either */
    T_OK(MPI_Group_union(sg, MPI_GROUP_EMPTY, &out));
    MPI_Comm c = MPI_COMM_NULL;
    T_OK(MPI_Comm_create(sc, out, &c)); /* the union is the session's */
    T_CHECK(c != MPI_COMM_NULL, "MPI_Comm_create of the session's group gave MPI_COMM_NULL");
    MPI_Comm_free(&c);
    MPI_Group_free(&out);
    T_FAILS(MPI_ERR_GROUP, "MPI_Comm_create", MPI_Comm_create(MPI_COMM_WORLD, sg, &c));
    T_FAILS(MPI_ERR_GROUP, "MPI_Comm_create", MPI_Comm_create(sc, wg, &c));
    T_FAILS(MPI_ERR_GROUP, "MPI_Comm_create_group", MPI_Comm_create_group(sc, wg, 1, &c));
    T_FAILS(MPI_ERR_COMM, "MPI_Comm_compare", MPI_Comm_compare(MPI_COMM_WORLD, sc, &(int){0}));
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        /* the two halves, one from each model */
        MPI_Group lo, hi;
        int mid = size / 2, rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Group_range_incl(wg, 1, (int[][3]){{0, mid - 1, 1}}, &lo);
        MPI_Group_range_incl(sg, 1, (int[][3]){{mid, size - 1, 1}}, &hi);
        T_FAILS(MPI_ERR_GROUP, "MPI_Intercomm_create_from_groups",
                MPI_Intercomm_create_from_groups(rank < mid ? lo : hi, 0, rank < mid ? hi : lo, 0,
                                                 "org.tandem.test.beside.mixed", MPI_INFO_NULL,
                                                 MPI_ERRORS_RETURN, &c));
        MPI_Group_free(&lo);
        MPI_Group_free(&hi);
    }
    /* a World Model group makes a World Model communicator */
    T_OK(MPI_Comm_create_from_group(wg, "org.tandem.test.beside.world", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &c));
    int cmp = -1;
    T_OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &cmp));
    T_CHECK(cmp == MPI_CONGRUENT, "compare with MPI_COMM_WORLD: %d", cmp);
    work(c, 11);
    MPI_Comm_free(&c);
    MPI_Group_free(&wg);
    MPI_Group_free(&sg);
}

int main(int argc, char **argv) {
    int world_first = argc > 1 && strcmp(argv[1], "world-first") == 0;
    if (argc < 2 || (!world_first && strcmp(argv[1], "session-first") != 0)) {
        fprintf(stderr, "usage: beside session-first|world-first\n");
        return 2;
    }
    MPI_Session s = MPI_SESSION_NULL;
    int flag = -1;
    if (world_first) {
        MPI_Init(&argc, &argv);
        T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    } else {
        T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        MPI_Initialized(&flag);
        T_CHECK(flag == 0, "MPI_Initialized before MPI_Init: %d", flag);
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Initialized(&flag);
    T_CHECK(flag == 1, "MPI_Initialized after MPI_Init: %d", flag);

    MPI_Comm sc = MPI_COMM_NULL, sc_kept = MPI_COMM_NULL, wc_kept = MPI_COMM_NULL;
    MPI_Group sg_kept = MPI_GROUP_NULL, wg_kept = MPI_GROUP_NULL;
    int rank = t_rank;
    sc = t_world_comm(s, "org.tandem.test.beside");
    T_CHECK(t_rank == rank, "rank %d in the session, %d in MPI_COMM_WORLD", t_rank, rank);
    work(sc, 1);
    work(MPI_COMM_WORLD, 2);
    mixing(s, sc);
    T_OK(MPI_Comm_dup(sc, &sc_kept));
    T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &wc_kept));
    T_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &sg_kept));
    MPI_Comm_group(MPI_COMM_WORLD, &wg_kept);

    if (world_first) {
        /* the session ends first; sc and sc_kept are still held */
        T_OK(MPI_Session_finalize(&s));
        work(MPI_COMM_WORLD, 3);
        work(wc_kept, 4);
        int size = -1, rc = MPI_Comm_size(sc_kept, &size);
        T_FAILS(MPI_ERR_COMM, "MPI_Comm_size", rc);
        T_CHECK(rc == MPI_SUCCESS || t_msg_has(rc, "finalized"), "the message does not say why");
        T_FAILS(MPI_ERR_COMM, "MPI_Barrier", MPI_Barrier(sc));
        MPI_Comm c = MPI_COMM_NULL;
        T_FAILS(MPI_ERR_GROUP, "MPI_Comm_create_from_group",
                MPI_Comm_create_from_group(sg_kept, "org.tandem.test.beside.late", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &c));
        T_OK(MPI_Comm_free(&sc_kept));
        T_OK(MPI_Comm_free(&sc));
        T_CHECK(sc == MPI_COMM_NULL, "MPI_Comm_free left %#x", (unsigned)sc);
        MPI_Group_free(&sg_kept);
        MPI_Group_free(&wg_kept);
        MPI_Comm_free(&wc_kept);
        t_verdict(MPI_COMM_WORLD);
        MPI_Finalize();
    } else {
        /* the World Model ends first; wc_kept is still held */
        MPI_Finalize();
        MPI_Initialized(&flag);
        T_CHECK(flag == 1, "MPI_Initialized after MPI_Finalize: %d", flag);
        MPI_Finalized(&flag);
        T_CHECK(flag == 1, "MPI_Finalized after MPI_Finalize: %d", flag);
        work(sc, 5);
        work(sc_kept, 6);
        MPI_Comm c = MPI_COMM_NULL;
        T_FAILS(MPI_ERR_GROUP, "MPI_Comm_create_from_group",
                MPI_Comm_create_from_group(wg_kept, "org.tandem.test.beside.late", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &c));
        /* and the session's groups still make communicators */
        T_OK(MPI_Comm_create_from_group(sg_kept, "org.tandem.test.beside.late", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &c));
        work(c, 7);
        T_OK(MPI_Comm_free(&c));
        T_OK(MPI_Comm_free(&wc_kept));
        MPI_Group_free(&sg_kept);
        MPI_Group_free(&wg_kept);
        MPI_Comm_free(&sc_kept);
        t_verdict(sc);
        MPI_Comm_free(&sc);
        T_OK(MPI_Session_finalize(&s));
    }
    return 0;
}
