/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input to partitioned communication: each refusal has the right error
 * class and a message naming the call, the argument and the rank, and leaves
 * the requests as they were (a round after the refusals still moves the right
 * data). MPI_ANY_SOURCE / MPI_ANY_TAG in MPI_Precv_init, partitions < 1,
 * partitions x count overflowing, a negative count, an invalid info; MPI_Pready
 * (and _range, _list) on an inactive request, twice in one round, out of range,
 * on a receive, an ordinary or a null request, a reversed range, a list with a
 * repeated partition; MPI_Parrived on a send, out of range, with a NULL flag
 * (and true for null and inactive requests); MPI_Request_free and MPI_Cancel
 * of an active request; MPI_Start of an active one.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs;
static MPI_Comm comm;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 20) {                                                             \
            fprintf(stderr, "[%d] line %d: ", rank, __LINE__);                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define OK(_call)                                                                                  \
    do {                                                                                           \
        int rc_ = (_call);                                                                         \
        CHECK(rc_ == MPI_SUCCESS, "%s failed: %d", #_call, rc_);                                   \
    } while (0)

/* rc must be of class `cls`, its message naming `fn`, the rank and `word`. */
static void expect(int line, int rc, int cls, const char *fn, const char *word) {
    char msg[MPI_MAX_ERROR_STRING] = "", want[32];
    int len = 0, got = -1;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &got);
        MPI_Error_string(rc, msg, &len);
    }
    snprintf(want, sizeof(want), "rank %d", rank);
    if ((got != cls || !strstr(msg, fn) || !strstr(msg, want) || !strstr(msg, word)) && errs++ < 20)
        fprintf(stderr,
                "[%d] line %d: expected class %d naming %s, rank and '%s'; got rc %d class %d: "
                "%s\n",
                rank, line, cls, fn, word, rc, got, msg);
}
#define EXPECT(_call, _cls, _fn, _word) expect(__LINE__, (_call), (_cls), (_fn), (_word))

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dest = (rank + 1) % size, src = (rank + size - 1) % size;
    int sb[16], rb[16], flag;
    MPI_Request s = MPI_REQUEST_NULL, r = MPI_REQUEST_NULL, x = MPI_REQUEST_NULL;

    /* ---- init ---- */
    EXPECT(MPI_Precv_init(rb, 4, 4, MPI_INT, MPI_ANY_SOURCE, 0, comm, MPI_INFO_NULL, &x),
           MPI_ERR_RANK, "MPI_Precv_init", "MPI_ANY_SOURCE");
    EXPECT(MPI_Precv_init(rb, 4, 4, MPI_INT, src, MPI_ANY_TAG, comm, MPI_INFO_NULL, &x),
           MPI_ERR_TAG, "MPI_Precv_init", "MPI_ANY_TAG");
    EXPECT(MPI_Psend_init(sb, 0, 4, MPI_INT, dest, 0, comm, MPI_INFO_NULL, &x), MPI_ERR_ARG,
           "MPI_Psend_init", "partitions");
    EXPECT(MPI_Precv_init(rb, -3, 4, MPI_INT, src, 0, comm, MPI_INFO_NULL, &x), MPI_ERR_ARG,
           "MPI_Precv_init", "partitions");
    EXPECT(MPI_Psend_init(sb, 4, -1, MPI_INT, dest, 0, comm, MPI_INFO_NULL, &x), MPI_ERR_COUNT,
           "MPI_Psend_init", "count");
    /* 2^30 x 2^40 items, and 2^30 x 2^31 items of 4 bytes (2^63 bytes) */
    EXPECT(
        MPI_Psend_init(sb, 1 << 30, (MPI_Count)1 << 40, MPI_INT, dest, 0, comm, MPI_INFO_NULL, &x),
        MPI_ERR_COUNT, "MPI_Psend_init", "partitions x count");
    EXPECT(
        MPI_Precv_init(rb, 1 << 30, (MPI_Count)1 << 31, MPI_INT, src, 0, comm, MPI_INFO_NULL, &x),
        MPI_ERR_COUNT, "MPI_Precv_init", "partitions x count");
    EXPECT(MPI_Psend_init(sb, 4, 4, MPI_INT, dest, 0, comm, (MPI_Info)0x1c000123, &x), MPI_ERR_INFO,
           "MPI_Psend_init", "info");
    EXPECT(MPI_Psend_init(sb, 4, 4, MPI_INT, size, 0, comm, MPI_INFO_NULL, &x), MPI_ERR_RANK,
           "MPI_Psend_init", "destination");
    CHECK(x == MPI_REQUEST_NULL, "a refused init set the request");

    /* ---- a good pair, and refusals around its rounds ---- */
    OK(MPI_Psend_init(sb, 4, 4, MPI_INT, dest, 3, comm, MPI_INFO_NULL, &s));
    OK(MPI_Precv_init(rb, 2, 8, MPI_INT, src, 3, comm, MPI_INFO_NULL, &r));
    EXPECT(MPI_Pready(0, s), MPI_ERR_REQUEST, "MPI_Pready", "inactive");
    EXPECT(MPI_Pready_range(0, 3, s), MPI_ERR_REQUEST, "MPI_Pready_range", "inactive");
    EXPECT(MPI_Pready_list(1, (int[]){2}, s), MPI_ERR_REQUEST, "MPI_Pready_list", "inactive");
    flag = 0;
    OK(MPI_Parrived(r, 0, &flag));
    CHECK(flag, "MPI_Parrived of an inactive request gave false");
    flag = 0;
    OK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    CHECK(flag, "MPI_Parrived of MPI_REQUEST_NULL gave false");
    OK(MPI_Cancel(&s)); /* inactive: nothing to cancel */

    for (int i = 0; i < 16; i++)
        sb[i] = rank * 100 + i, rb[i] = -1;
    OK(MPI_Start(&r));
    OK(MPI_Start(&s));
    EXPECT(MPI_Start(&s), MPI_ERR_REQUEST, "MPI_Start", "active");
    EXPECT(MPI_Pready(4, s), MPI_ERR_ARG, "MPI_Pready", "partition 4");
    EXPECT(MPI_Pready(-1, s), MPI_ERR_ARG, "MPI_Pready", "out of range");
    EXPECT(MPI_Pready(0, r), MPI_ERR_REQUEST, "MPI_Pready", "not a partitioned send");
    EXPECT(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST, "MPI_Pready",
           "not a partitioned send");
    MPI_Request ord;
    int one = 1;
    OK(MPI_Send_init(&one, 1, MPI_INT, dest, 4, comm, &ord));
    EXPECT(MPI_Pready(0, ord), MPI_ERR_REQUEST, "MPI_Pready", "not a partitioned send");
    EXPECT(MPI_Parrived(ord, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived",
           "not a partitioned receive");
    OK(MPI_Request_free(&ord));
    EXPECT(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived", "not a partitioned receive");
    EXPECT(MPI_Parrived(r, 2, &flag), MPI_ERR_ARG, "MPI_Parrived", "partition 2");
    EXPECT(MPI_Parrived(r, 0, NULL), MPI_ERR_ARG, "MPI_Parrived", "flag");

    OK(MPI_Pready(1, s));
    EXPECT(MPI_Pready(1, s), MPI_ERR_ARG, "MPI_Pready", "already");
    EXPECT(MPI_Pready_range(2, 0, s), MPI_ERR_ARG, "MPI_Pready_range", "partition_low");
    EXPECT(MPI_Pready_range(2, 4, s), MPI_ERR_ARG, "MPI_Pready_range", "partition_high");
    EXPECT(MPI_Pready_range(0, 2, s), MPI_ERR_ARG, "MPI_Pready_range", "already"); /* 1 is */
    EXPECT(MPI_Pready_list(3, (int[]){0, 2, 0}, s), MPI_ERR_ARG, "MPI_Pready_list", "twice");
    EXPECT(MPI_Pready_list(2, (int[]){3, 9}, s), MPI_ERR_ARG, "MPI_Pready_list", "partition 9");
    EXPECT(MPI_Pready_list(2, (int[]){3, 1}, s), MPI_ERR_ARG, "MPI_Pready_list", "already");
    EXPECT(MPI_Pready_list(-1, (int[]){0}, s), MPI_ERR_ARG, "MPI_Pready_list", "length");
    EXPECT(MPI_Pready_list(2, NULL, s), MPI_ERR_ARG, "MPI_Pready_list", "array_of_partitions");

    /* the receiver's first partition (sender 0, 1) may not be complete, so it may
     * still be active: freeing or cancelling it is refused */
    EXPECT(MPI_Request_free(&s), MPI_ERR_REQUEST, "MPI_Request_free", "active");
    EXPECT(MPI_Cancel(&s), MPI_ERR_REQUEST, "MPI_Cancel", "active");
    EXPECT(MPI_Request_free(&r), MPI_ERR_REQUEST, "MPI_Request_free", "active");
    EXPECT(MPI_Cancel(&r), MPI_ERR_REQUEST, "MPI_Cancel", "active");
    CHECK(s != MPI_REQUEST_NULL && r != MPI_REQUEST_NULL, "a refused free nulled the handle");

    /* nothing the refusals named was marked: partitions 0, 2, 3 are still to do */
    OK(MPI_Pready_list(3, (int[]){3, 0, 2}, s));
    MPI_Status st;
    OK(MPI_Wait(&r, &st));
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 16 && st.MPI_SOURCE == src && st.MPI_TAG == 3, "status: %d %d %d", count,
          st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < 16; i++)
        CHECK(rb[i] == src * 100 + i, "rb[%d] = %d", i, rb[i]);
    EXPECT(MPI_Pready(0, s), MPI_ERR_REQUEST, "MPI_Pready", "inactive");

    /* a round complete but not yet waited for may be freed */
    OK(MPI_Start(&r));
    OK(MPI_Start(&s));
    OK(MPI_Pready_range(0, 3, s));
    for (flag = 0; !flag;)
        OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    for (flag = 0; !flag;)
        OK(MPI_Request_get_status(s, &flag, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));
    CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL, "freed handles not null");

    MPI_Comm_free(&comm);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
