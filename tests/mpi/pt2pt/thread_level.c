/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TANDEM_THREAD_LEVEL caps the thread level: MPI_Init_thread(required) provides
 * min(required, the cap), MPI_Query_thread repeats it, MPI_Is_thread_main is true on
 * the thread that initialised MPI only, and a session's "thread_level" info key gets
 * the same cap. Arguments: the level asked for and the one expected (single, funneled,
 * serialized, multiple).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const words[] = {"single", "funneled", "serialized", "multiple"};
static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                    "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};

static int word(const char *w) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(w, words[i]))
            return i;
    return -1;
}

static int errs;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            errs++;                                                                                \
        }                                                                                          \
    } while (0)

static void *other(void *arg) {
    int *flag = arg;
    MPI_Is_thread_main(flag);
    return NULL;
}

/* A session asking for `want` gets min(want, cap). */
static void session(int want, int cap) {
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "thread_level", names[want]);
    MPI_Session s;
    CHECK(MPI_Session_init(in, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "MPI_Session_init failed");
    MPI_Info_free(&in);
    MPI_Info out;
    MPI_Session_get_info(s, &out);
    char val[64] = "";
    int len = sizeof(val) - 1, flag = 0;
    MPI_Info_get_string(out, "thread_level", &len, val, &flag);
    int got = want < cap ? want : cap;
    CHECK(flag && !strcmp(val, names[got]), "session asking %s: thread_level %s, want %s",
          names[want], flag ? val : "(unset)", names[got]);
    MPI_Info_free(&out);
    MPI_Session_finalize(&s);
}

int main(int argc, char **argv) {
    int req = argc > 2 ? word(argv[1]) : -1, want = argc > 2 ? word(argv[2]) : -1;
    if (req < 0 || want < 0) {
        fprintf(stderr, "usage: thread_level REQUIRED EXPECTED (single|funneled|...)\n");
        return 1;
    }
    int provided = -1;
    MPI_Init_thread(&argc, &argv, levels[req], &provided);
    CHECK(provided == levels[want], "asked for %s: provided %d, want %d (%s)", names[req], provided,
          levels[want], names[want]);
    int q = -1;
    MPI_Query_thread(&q);
    CHECK(q == provided, "MPI_Query_thread %d, MPI_Init_thread gave %d", q, provided);
    int mainflag = 0, otherflag = 1;
    MPI_Is_thread_main(&mainflag);
    CHECK(mainflag, "MPI_Is_thread_main false on the thread that called MPI_Init_thread");
    pthread_t t;
    pthread_create(&t, NULL, other, &otherflag);
    pthread_join(t, NULL);
    CHECK(!otherflag, "MPI_Is_thread_main true on another thread");
    /* the cap: the tunable's value (multiple unless set) */
    const char *env = getenv("TANDEM_THREAD_LEVEL");
    int cap = word(env ? env : "multiple");
    for (int w = 0; w < 4; w++)
        session(w, cap);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
