/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The large-count point-to-point forms (MPI-4 `_c`, MPI_Count counts): every
 * send mode blocking, non-blocking and persistent, Recv/Irecv/Recv_init,
 * Sendrecv(_replace), Isendrecv(_replace), Mrecv/Imrecv, Get_count_c/Get_elements_c and
 * Buffer_attach_c/detach_c, eager and rendezvous, each checked against the data
 * and the status, between ranks 0 and 1 (the others take part in nothing but
 * the checks). A negative count is MPI_ERR_COUNT from the _c call itself.
 *
 * arg "big": one message of 2^31 + 24 bytes (a count no int holds), by
 * Send_c / Recv_c and by Isend_c / Irecv_c with a derived type, checked at its
 * start, around the 2 GiB boundary and at its end; Get_count says MPI_UNDEFINED
 * and Get_count_c the whole count; then Sendrecv_replace of as many bytes with an
 * int count of doubles.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 10) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static unsigned char pat(size_t i, int seed) {
    return (unsigned char)((i ^ (i >> 8) ^ (i >> 24)) * 131u + (unsigned)seed * 17u + 1u);
}

static void fill(unsigned char *b, size_t n, int seed) {
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, seed);
}

static void check_data(const unsigned char *b, size_t n, int seed, const char *what) {
    for (size_t i = 0; i < n; i++) {
        if (b[i] != pat(i, seed)) {
            CHECK(0, "%s: %zu-byte message differs at byte %zu", what, n, i);
            return;
        }
    }
}

static void check_status(const MPI_Status *st, int source, int tag, MPI_Count bytes,
                         const char *what) {
    MPI_Count n = -1, e = -1;
    CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag, "%s: status source %d tag %d", what,
          st->MPI_SOURCE, st->MPI_TAG);
    MPI_Get_count_c(st, MPI_BYTE, &n);
    MPI_Get_elements_c(st, MPI_BYTE, &e);
    CHECK(n == bytes && e == bytes, "%s: Get_count_c %lld, Get_elements_c %lld, want %lld", what,
          (long long)n, (long long)e, (long long)bytes);
}

/* One message of n bytes from rank 0 to rank 1 with send mode `mode` (0 Send_c, 1 Ssend_c,
 * 2 Rsend_c, 3 Bsend_c, 4 Isend_c, 5 Issend_c, 6 Irsend_c, 7 Ibsend_c, 8 Send_init_c ...
 * 11 Bsend_init_c) and a receive of kind `rk` (0 Recv_c, 1 Irecv_c, 2 Recv_init_c). */
static void one(size_t n, int mode, int rk, unsigned char *buf) {
    static const char *names[] = {"Send_c",      "Ssend_c",      "Rsend_c",      "Bsend_c",
                                  "Isend_c",     "Issend_c",     "Irsend_c",     "Ibsend_c",
                                  "Send_init_c", "Ssend_init_c", "Rsend_init_c", "Bsend_init_c"};
    int tag = mode * 3 + rk;
    MPI_Count cnt = (MPI_Count)n;
    if (rank == 1) {
        MPI_Request r;
        MPI_Status st;
        memset(buf, 0, n);
        if (rk == 0 && mode % 4 != 2) {
            MPI_Recv_c(buf, cnt, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        } else {
            if (rk == 2)
                MPI_Recv_init_c(buf, cnt, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r);
            else
                MPI_Irecv_c(buf, cnt, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r);
            if (rk == 2)
                MPI_Start(&r);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 999, MPI_COMM_WORLD); /* posted: ready sends may go */
            MPI_Wait(&r, &st);
            if (rk == 2)
                MPI_Request_free(&r);
        }
        char what[64];
        snprintf(what, sizeof(what), "%s to receive %d", names[mode], rk);
        check_data(buf, n, tag, what);
        check_status(&st, 0, tag, cnt, what);
    } else if (rank == 0) {
        fill(buf, n, tag);
        if (mode % 4 == 2 || rk != 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request r = MPI_REQUEST_NULL;
        switch (mode) {
        case 0:
            MPI_Send_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            break;
        case 1:
            MPI_Ssend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            break;
        case 2:
            MPI_Rsend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            break;
        case 3:
            MPI_Bsend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            break;
        case 4:
            MPI_Isend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        case 5:
            MPI_Issend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        case 6:
            MPI_Irsend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        case 7:
            MPI_Ibsend_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        case 8:
            MPI_Send_init_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        case 9:
            MPI_Ssend_init_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        case 10:
            MPI_Rsend_init_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        default:
            MPI_Bsend_init_c(buf, cnt, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
            break;
        }
        if (mode >= 8)
            MPI_Start(&r);
        if (r != MPI_REQUEST_NULL)
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (mode >= 8)
            MPI_Request_free(&r);
    }
}

static void sendrecv_forms(unsigned char *a, unsigned char *b, size_t n) {
    if (rank > 1)
        return;
    int peer = 1 - rank;
    MPI_Status st;
    fill(a, n, 40 + rank);
    memset(b, 0, n);
    MPI_Sendrecv_c(a, (MPI_Count)n, MPI_BYTE, peer, 7, b, (MPI_Count)n, MPI_BYTE, peer, 7,
                   MPI_COMM_WORLD, &st);
    check_data(b, n, 40 + peer, "Sendrecv_c");
    check_status(&st, peer, 7, (MPI_Count)n, "Sendrecv_c");
    fill(a, n, 50 + rank);
    MPI_Sendrecv_replace_c(a, (MPI_Count)n, MPI_BYTE, peer, 8, peer, 8, MPI_COMM_WORLD, &st);
    check_data(a, n, 50 + peer, "Sendrecv_replace_c");
    check_status(&st, peer, 8, (MPI_Count)n, "Sendrecv_replace_c");
    MPI_Request r;
    fill(a, n, 44 + rank);
    memset(b, 0, n);
    MPI_Isendrecv_c(a, (MPI_Count)n, MPI_BYTE, peer, 11, b, (MPI_Count)n, MPI_BYTE, peer, 11,
                    MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    check_data(b, n, 44 + peer, "Isendrecv_c");
    check_status(&st, peer, 11, (MPI_Count)n, "Isendrecv_c");
    fill(a, n, 54 + rank);
    MPI_Isendrecv_replace_c(a, (MPI_Count)n, MPI_BYTE, peer, 12, peer, 12, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    check_data(a, n, 54 + peer, "Isendrecv_replace_c");
    check_status(&st, peer, 12, (MPI_Count)n, "Isendrecv_replace_c");
}

static void matched_forms(unsigned char *buf, size_t n) {
    if (rank == 0) {
        fill(buf, n, 60);
        MPI_Send_c(buf, (MPI_Count)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        fill(buf, n, 61);
        MPI_Send_c(buf, (MPI_Count)n, MPI_BYTE, 1, 10, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Message m;
        MPI_Status st;
        MPI_Request r;
        int flag = 0;
        MPI_Mprobe(0, 9, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv_c(buf, (MPI_Count)n, MPI_BYTE, &m, &st);
        check_data(buf, n, 60, "Mrecv_c");
        check_status(&st, 0, 9, (MPI_Count)n, "Mrecv_c");
        while (!flag)
            MPI_Improbe(0, 10, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
        MPI_Imrecv_c(buf, (MPI_Count)n, MPI_BYTE, &m, &r);
        MPI_Wait(&r, &st);
        check_data(buf, n, 61, "Imrecv_c");
        check_status(&st, 0, 10, (MPI_Count)n, "Imrecv_c");
    }
}

/* Bad counts are reported by the _c call, with its name, as MPI_ERR_COUNT. */
static void bad_counts(void) {
    char b[8];
    MPI_Request r;
    int cls, len;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send_c(b, -1, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(cls == MPI_ERR_COUNT && strstr(msg, "MPI_Send_c") && strstr(msg, "count=-1"),
          "Send_c count -1: class %d, \"%s\"", cls, msg);
    rc = MPI_Irecv_c(b, (MPI_Count)-5000000000LL, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECK(cls == MPI_ERR_COUNT && strstr(msg, "MPI_Irecv_c") && strstr(msg, "-5000000000"),
          "Irecv_c count -5e9: class %d, \"%s\"", cls, msg);
    MPI_Count sz = -1;
    void *p = NULL;
    rc = MPI_Buffer_attach_c(b, -1);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "Buffer_attach_c size -1: class %d", cls);
    rc = MPI_Buffer_detach_c(&p, &sz); /* nothing attached: NULL, 0 */
    CHECK(rc == MPI_SUCCESS && p == NULL && sz == 0, "Buffer_detach_c: rc %d, %p, %lld", rc, p,
          (long long)sz);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void big(void) {
    const size_t n = ((size_t)1 << 31) + 24;
    if (rank > 1)
        return;
    unsigned char *buf = malloc(n);
    CHECK(buf != NULL, "cannot allocate %zu bytes", n);
    if (!buf)
        return;
    static const size_t at[] = {0, 1, 4095, ((size_t)1 << 31) - 1, (size_t)1 << 31, 0};
    for (int form = 0; form < 2; form++) {
        if (rank == 0) {
            memset(buf, 0x5a, n);
            for (int i = 0; i < 5; i++)
                buf[at[i]] = (unsigned char)(i + 1 + form);
            buf[n - 1] = (unsigned char)(0xa0 + form);
            if (form == 0) {
                MPI_Send_c(buf, (MPI_Count)n, MPI_BYTE, 1, 70, MPI_COMM_WORLD);
            } else {
                MPI_Datatype t; /* 8-byte items, so the count of items is n / 8 */
                MPI_Type_contiguous(8, MPI_BYTE, &t);
                MPI_Type_commit(&t);
                MPI_Request r;
                MPI_Isend_c(buf, (MPI_Count)(n / 8), t, 1, 71, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                MPI_Type_free(&t);
            }
        } else {
            MPI_Status st;
            memset(buf, 0, n);
            if (form == 0) {
                MPI_Recv_c(buf, (MPI_Count)n, MPI_BYTE, 0, 70, MPI_COMM_WORLD, &st);
            } else {
                MPI_Request r;
                MPI_Irecv_c(buf, (MPI_Count)n, MPI_BYTE, 0, 71, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, &st);
            }
            for (int i = 0; i < 5; i++)
                CHECK(buf[at[i]] == (unsigned char)(i + 1 + form), "big %d: byte %zu is %u", form,
                      at[i], buf[at[i]]);
            CHECK(buf[2] == 0x5a && buf[n - 2] == 0x5a && buf[n / 2 + 7] == 0x5a,
                  "big %d: filler bytes differ", form);
            CHECK(buf[n - 1] == (unsigned char)(0xa0 + form), "big %d: last byte %u", form,
                  buf[n - 1]);
            check_status(&st, 0, 70 + form, (MPI_Count)n, "big");
            int ni = 0;
            MPI_Get_count(&st, MPI_BYTE, &ni);
            CHECK(ni == MPI_UNDEFINED, "big %d: Get_count %d, want MPI_UNDEFINED", form, ni);
        }
    }
    /* an int count whose bytes no int holds: Sendrecv_replace sends from a packed copy
     * of all of them (its byte count once went through an int) */
    int peer = 1 - rank;
    memset(buf, 0x30 + rank, n);
    buf[n - 1] = (unsigned char)(0x40 + rank);
    MPI_Status st;
    MPI_Sendrecv_replace(buf, (int)(n / 8), MPI_DOUBLE, peer, 72, peer, 72, MPI_COMM_WORLD, &st);
    CHECK(buf[0] == 0x30 + peer && buf[(size_t)1 << 31] == 0x30 + peer && buf[n - 1] == 0x40 + peer,
          "big Sendrecv_replace: bytes %u %u %u", buf[0], buf[(size_t)1 << 31], buf[n - 1]);
    check_status(&st, peer, 72, (MPI_Count)n, "big Sendrecv_replace");
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "large_count needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (argc > 1 && strcmp(argv[1], "big") == 0) {
        big();
    } else {
        /* eager, several cells, rendezvous */
        static const size_t sizes[] = {0, 40, 5000, 300000};
        const size_t most = 300000;
        unsigned char *a = malloc(most), *b = malloc(most);
        MPI_Count bsz = 12 * (MPI_Count)(most + MPI_BSEND_OVERHEAD);
        void *bbuf = malloc((size_t)bsz), *back = NULL;
        MPI_Buffer_attach_c(bbuf, bsz);
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            for (int mode = 0; mode < 12; mode++)
                for (int rk = 0; rk < 3; rk++)
                    one(sizes[s], mode, rk, a);
            sendrecv_forms(a, b, sizes[s]);
            matched_forms(a, sizes[s]);
        }
        MPI_Count got = 0;
        MPI_Buffer_detach_c(&back, &got);
        CHECK(back == bbuf && got == bsz, "Buffer_detach_c gave %p, %lld", back, (long long)got);
        bad_counts();
        free(bbuf);
        free(a);
        free(b);
    }
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
