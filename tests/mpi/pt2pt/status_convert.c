/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Status conversions (MPI-4.1 19.3.5): MPI_Status_c2f, f2c, c2f08, f082c, f082f and
 * f2f08 carry every field of a status through the C, Fortran and Fortran 2008 layouts
 * and back, and refuse an ignored status on either side with MPI_ERR_ARG.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 10) {                                                            \
            fprintf(stderr, "line %d: ", __LINE__);                                                \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static int class_of(int code) {
    int cls = MPI_SUCCESS;
    MPI_Error_class(code, &cls);
    return cls;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Status c = {0}, back;
    MPI_Fint f[MPI_F_STATUS_SIZE], f2[MPI_F_STATUS_SIZE];
    MPI_F08_status f08, f08b;
    c.MPI_SOURCE = 3;
    c.MPI_TAG = 77;
    c.MPI_ERROR = MPI_ERR_TRUNCATE;
    MPI_Status_set_elements_x(&c, MPI_INT, (MPI_Count)3 << 31); /* a count above 32 bits */
    MPI_Status_set_cancelled(&c, 1);

    CHECK(MPI_Status_c2f(&c, f) == MPI_SUCCESS, "MPI_Status_c2f failed");
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 77 && f[MPI_F_ERROR] == MPI_ERR_TRUNCATE,
          "MPI_Status_c2f: source %d tag %d error %d", (int)f[MPI_F_SOURCE], (int)f[MPI_F_TAG],
          (int)f[MPI_F_ERROR]);
    CHECK(MPI_Status_f2f08(f, &f08) == MPI_SUCCESS, "MPI_Status_f2f08 failed");
    CHECK(f08.MPI_SOURCE == 3 && f08.MPI_TAG == 77 && f08.MPI_ERROR == MPI_ERR_TRUNCATE,
          "MPI_Status_f2f08: source %d tag %d error %d", (int)f08.MPI_SOURCE, (int)f08.MPI_TAG,
          (int)f08.MPI_ERROR);
    memset(&back, 0, sizeof(back));
    CHECK(MPI_Status_f082c(&f08, &back) == MPI_SUCCESS && !memcmp(&back, &c, sizeof(c)),
          "c2f, f2f08, f082c did not give the status back");

    memset(&back, 0, sizeof(back));
    CHECK(MPI_Status_c2f08(&c, &f08b) == MPI_SUCCESS, "MPI_Status_c2f08 failed");
    CHECK(MPI_Status_f082f(&f08b, f2) == MPI_SUCCESS, "MPI_Status_f082f failed");
    CHECK(MPI_Status_f2c(f2, &back) == MPI_SUCCESS && !memcmp(&back, &c, sizeof(c)),
          "c2f08, f082f, f2c did not give the status back");
    MPI_Count n = 0;
    int flag = 0;
    MPI_Get_elements_x(&back, MPI_INT, &n);
    MPI_Test_cancelled(&back, &flag);
    CHECK(n == (MPI_Count)3 << 31 && flag, "converted status: %lld elements, cancelled %d",
          (long long)n, flag);

    CHECK(class_of(MPI_Status_c2f(MPI_STATUS_IGNORE, f)) == MPI_ERR_ARG,
          "MPI_Status_c2f of MPI_STATUS_IGNORE is not MPI_ERR_ARG");
    CHECK(class_of(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back)) == MPI_ERR_ARG,
          "MPI_Status_f2c of MPI_F_STATUS_IGNORE is not MPI_ERR_ARG");
    CHECK(class_of(MPI_Status_c2f08(&c, MPI_F08_STATUS_IGNORE)) == MPI_ERR_ARG,
          "MPI_Status_c2f08 into MPI_F08_STATUS_IGNORE is not MPI_ERR_ARG");
    CHECK(class_of(MPI_Status_f2f08(f, NULL)) == MPI_ERR_ARG,
          "MPI_Status_f2f08 into NULL is not MPI_ERR_ARG");

    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}
