/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The functions MPI-4.1 §11.4.1 (Table 11.1) allows at any time, before MPI_Init
 * and after MPI_Finalize: MPI_Initialized, MPI_Finalized, MPI_Get_version,
 * MPI_Get_library_version, the MPI_Info_* calls (MPI_INFO_ENV included; it says
 * the job's size before MPI_Init already), MPI_Error_class, MPI_Error_string and
 * MPI_Errhandler_free. Info objects made before MPI_Init work inside MPI and after
 * MPI_Finalize, as do codes, classes and handlers made inside it.
 * Checks after MPI_Finalize cannot be summed over the ranks: a rank that finds
 * an error there prints it and exits with status 1, which fails the job.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static void expect_value(MPI_Info info, const char *key, const char *want, const char *when) {
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = -1, len = -1, buflen = sizeof(v);
    CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag &&
              strcmp(v, want) == 0,
          "%s: MPI_Info_get(%s): flag %d '%s', want '%s'", when, key, flag, v, want);
    CHECK(MPI_Info_get_string(info, key, &buflen, v, &flag) == MPI_SUCCESS && flag &&
              strcmp(v, want) == 0 && buflen == (int)strlen(want) + 1,
          "%s: MPI_Info_get_string(%s): flag %d '%s' buflen %d", when, key, flag, v, buflen);
    CHECK(MPI_Info_get_valuelen(info, key, &len, &flag) == MPI_SUCCESS && flag &&
              len == (int)strlen(want),
          "%s: MPI_Info_get_valuelen(%s): flag %d len %d", when, key, flag, len);
}

/* Everything Table 11.1 lists that needs no MPI state, at `when`; the info
 * `keep` (made before MPI_Init) must still hold k1=v1, k2=v2. */
static void anytime(const char *when, MPI_Info keep, int init_flag, int fin_flag) {
    int flag = -1, v = 0, sv = 0, len = 0;
    char s[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == init_flag, "%s: MPI_Initialized %d",
          when, flag);
    CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == fin_flag, "%s: MPI_Finalized %d", when,
          flag);
    CHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS && v >= 3, "%s: MPI_Get_version", when);
    CHECK(MPI_Get_library_version(s, &len) == MPI_SUCCESS && len > 0, "%s: MPI_Get_library_version",
          when);

    expect_value(keep, "k1", "v1", when);
    expect_value(keep, "k2", "v2", when);
    MPI_Info in = MPI_INFO_NULL, d = MPI_INFO_NULL;
    CHECK(MPI_Info_create(&in) == MPI_SUCCESS && in != MPI_INFO_NULL, "%s: MPI_Info_create", when);
    CHECK(MPI_Info_set(in, "alpha", "1") == MPI_SUCCESS, "%s: MPI_Info_set", when);
    MPI_Info_set(in, "beta", "22");
    CHECK(MPI_Info_delete(in, "alpha") == MPI_SUCCESS, "%s: MPI_Info_delete", when);
    int n = -1;
    char key[MPI_MAX_INFO_KEY + 1] = "";
    CHECK(MPI_Info_get_nkeys(in, &n) == MPI_SUCCESS && n == 1, "%s: nkeys %d", when, n);
    CHECK(MPI_Info_get_nthkey(in, 0, key) == MPI_SUCCESS && strcmp(key, "beta") == 0,
          "%s: nthkey '%s'", when, key);
    CHECK(MPI_Info_dup(in, &d) == MPI_SUCCESS, "%s: MPI_Info_dup", when);
    expect_value(d, "beta", "22", when);
    CHECK(MPI_Info_free(&d) == MPI_SUCCESS && d == MPI_INFO_NULL, "%s: MPI_Info_free", when);
    MPI_Info_free(&in);

    CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n) == MPI_SUCCESS && n > 0,
          "%s: MPI_INFO_ENV has %d keys", when, n);
    MPI_Info env = MPI_INFO_NULL;
    CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS, "%s: MPI_Info_create_env", when);
    if (env != MPI_INFO_NULL)
        MPI_Info_free(&env);

    int cls = -1;
    CHECK(MPI_Error_class(MPI_ERR_INFO_KEY, &cls) == MPI_SUCCESS && cls == MPI_ERR_INFO_KEY,
          "%s: MPI_Error_class %d", when, cls);
    CHECK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len) == MPI_SUCCESS && len > 0,
          "%s: MPI_Error_string", when);
    MPI_Errhandler eh = MPI_ERRORS_RETURN;
    CHECK(MPI_Errhandler_free(&eh) == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL,
          "%s: MPI_Errhandler_free of a predefined handler", when);
}

static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
}

int main(int argc, char **argv) {
    /* before MPI_Init */
    MPI_Info keep;
    char maxprocs_before[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_create(&keep);
    MPI_Info_set(keep, "k1", "v1");
    MPI_Info_set(keep, "k2", "v2");
    anytime("before MPI_Init", keep, 0, 0);
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, maxprocs_before, &flag);
    CHECK(flag, "before MPI_Init: MPI_INFO_ENV has no maxprocs");

    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(atoi(maxprocs_before) == size, "maxprocs before MPI_Init '%s', world size %d",
          maxprocs_before, size);
    anytime("inside MPI", keep, 1, 0);
    /* an info made before MPI_Init is an ordinary argument inside it */
    MPI_Comm c;
    CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, keep, &c) == MPI_SUCCESS,
          "MPI_Comm_dup_with_info with an info made before MPI_Init");
    MPI_Info used;
    MPI_Comm_get_info(c, &used);
    expect_value(used, "k1", "v1", "hints of the dup");
    MPI_Info_free(&used);
    MPI_Comm_free(&c);
    /* made inside MPI, used after MPI_Finalize */
    MPI_Info inside;
    MPI_Info_create(&inside);
    MPI_Info_set(inside, "made", "inside");
    int uclass, ucode;
    MPI_Add_error_class(&uclass);
    MPI_Add_error_code(uclass, &ucode);
    MPI_Add_error_string(ucode, "a code added inside MPI");
    MPI_Errhandler ueh;
    MPI_Comm_create_errhandler(handler, &ueh);

    /* sum the errors found so far over the ranks */
    int total = errs;
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    MPI_Finalize();

    /* after MPI_Finalize: this rank's own checks */
    int before = errs;
    anytime("after MPI_Finalize", keep, 1, 1);
    expect_value(inside, "made", "inside", "after MPI_Finalize");
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = -1;
    CHECK(MPI_Error_class(ucode, &cls) == MPI_SUCCESS && cls == uclass,
          "after MPI_Finalize: class of an added code %d, want %d", cls, uclass);
    CHECK(MPI_Error_string(ucode, s, &len) == MPI_SUCCESS &&
              strcmp(s, "a code added inside MPI") == 0,
          "after MPI_Finalize: string of an added code '%s'", s);
    CHECK(MPI_Errhandler_free(&ueh) == MPI_SUCCESS && ueh == MPI_ERRHANDLER_NULL,
          "after MPI_Finalize: MPI_Errhandler_free of a handler made inside MPI");
    char v[MPI_MAX_INFO_VAL + 1] = "";
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && atoi(v) == size, "after MPI_Finalize: MPI_INFO_ENV maxprocs '%s'", v);
    CHECK(MPI_Info_free(&keep) == MPI_SUCCESS && MPI_Info_free(&inside) == MPI_SUCCESS,
          "after MPI_Finalize: freeing the infos");
    if (errs > before)
        return 1;
    if (rank == 0) {
        if (total)
            printf(" Found %d errors\n", total);
        else
            printf(" No Errors\n");
        fflush(stdout);
    }
    return total ? 1 : 0;
}
