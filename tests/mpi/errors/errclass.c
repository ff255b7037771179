/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error classes, codes and strings: every predefined class is its own class and
 * has a non-empty string; MPI_Add_error_class/MPI_Add_error_code/
 * MPI_Add_error_string create classes and codes that MPI_Error_class and
 * MPI_Error_string then report (a code without a string gives ""), strings can be
 * replaced, codes can be added to predefined classes, MPI_LASTUSEDCODE covers
 * them, and misuse returns an error (MPI_ERRORS_RETURN).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static const int classes[] = {
    MPI_SUCCESS,
    MPI_ERR_BUFFER,
    MPI_ERR_COUNT,
    MPI_ERR_TYPE,
    MPI_ERR_TAG,
    MPI_ERR_COMM,
    MPI_ERR_RANK,
    MPI_ERR_REQUEST,
    MPI_ERR_ROOT,
    MPI_ERR_GROUP,
    MPI_ERR_OP,
    MPI_ERR_TOPOLOGY,
    MPI_ERR_DIMS,
    MPI_ERR_ARG,
    MPI_ERR_UNKNOWN,
    MPI_ERR_TRUNCATE,
    MPI_ERR_OTHER,
    MPI_ERR_INTERN,
    MPI_ERR_IN_STATUS,
    MPI_ERR_PENDING,
    MPI_ERR_KEYVAL,
    MPI_ERR_NO_MEM,
    MPI_ERR_BASE,
    MPI_ERR_INFO_KEY,
    MPI_ERR_INFO_VALUE,
    MPI_ERR_INFO_NOKEY,
    MPI_ERR_SPAWN,
    MPI_ERR_PORT,
    MPI_ERR_SERVICE,
    MPI_ERR_NAME,
    MPI_ERR_WIN,
    MPI_ERR_SIZE,
    MPI_ERR_DISP,
    MPI_ERR_INFO,
    MPI_ERR_LOCKTYPE,
    MPI_ERR_ASSERT,
    MPI_ERR_RMA_CONFLICT,
    MPI_ERR_RMA_SYNC,
    MPI_ERR_RMA_RANGE,
    MPI_ERR_RMA_ATTACH,
    MPI_ERR_RMA_SHARED,
    MPI_ERR_RMA_FLAVOR,
    MPI_ERR_FILE,
    MPI_ERR_NOT_SAME,
    MPI_ERR_AMODE,
    MPI_ERR_UNSUPPORTED_DATAREP,
    MPI_ERR_UNSUPPORTED_OPERATION,
    MPI_ERR_NO_SUCH_FILE,
    MPI_ERR_FILE_EXISTS,
    MPI_ERR_BAD_FILE,
    MPI_ERR_ACCESS,
    MPI_ERR_NO_SPACE,
    MPI_ERR_QUOTA,
    MPI_ERR_READ_ONLY,
    MPI_ERR_FILE_IN_USE,
    MPI_ERR_DUP_DATAREP,
    MPI_ERR_CONVERSION,
    MPI_ERR_IO,
};
#define NCLASSES (int)(sizeof(classes) / sizeof(classes[0]))

static void string_is(int code, const char *want, const char *what) {
    char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    memset(s, 'x', sizeof(s));
    int err = MPI_Error_string(code, s, &len);
    CHECK(err == MPI_SUCCESS && !strcmp(s, want) && len == (int)strlen(want),
          "%s: Error_string gave \"%.60s\" (len %d), want \"%s\"", what, s, len, want);
}

static void class_is(int code, int want, const char *what) {
    int c = -1;
    int err = MPI_Error_class(code, &c);
    CHECK(err == MPI_SUCCESS && c == want, "%s: Error_class of %d is %d, want %d", what, code, c,
          want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char s[MPI_MAX_ERROR_STRING];
    int len, err, c;

    for (int i = 0; i < NCLASSES; i++) {
        class_is(classes[i], classes[i], "predefined class");
        len = -1;
        s[0] = '\0';
        err = MPI_Error_string(classes[i], s, &len);
        CHECK(err == MPI_SUCCESS && len > 0 && len == (int)strlen(s),
              "Error_string of class %d: err %d len %d \"%s\"", classes[i], err, len, s);
        CHECK(classes[i] <= MPI_ERR_LASTCODE, "class %d above MPI_ERR_LASTCODE", classes[i]);
    }

    /* MPI_LASTUSEDCODE starts at MPI_ERR_LASTCODE or above (MPI-3.1 8.5) */
    {
        int *last = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
        CHECK(flag && last && *last >= MPI_ERR_LASTCODE,
              "MPI_LASTUSEDCODE before any class is added: %d, below MPI_ERR_LASTCODE %d",
              last ? *last : -1, MPI_ERR_LASTCODE);
    }

    /* a code keeps its meaning: after many later errors its string is its own
     * message or its class's text, never another error's message */
    {
        int buf[1], first, cls = -1;
        char orig[MPI_MAX_ERROR_STRING], now[MPI_MAX_ERROR_STRING], cls_text[MPI_MAX_ERROR_STRING];
        first = MPI_Send(buf, 1, MPI_INT, 0, -77, MPI_COMM_WORLD);
        MPI_Error_string(first, orig, &len);
        MPI_Error_string(MPI_ERR_TAG, cls_text, &len);
        for (int i = 0; i < 1000; i++)
            MPI_Send(buf, -1 - i, MPI_INT, 0, 0, MPI_COMM_WORLD);
        class_is(first, MPI_ERR_TAG, "a code after 1000 later errors");
        MPI_Error_string(first, now, &len);
        CHECK(!strcmp(now, orig) || !strcmp(now, cls_text),
              "a code's string changed to another error's: was \"%s\", now \"%s\"", orig, now);
        MPI_Error_class(first, &cls);
        CHECK(cls == MPI_ERR_TAG, "class of an old code: %d", cls);
    }

    /* a new class, codes in it, strings */
    int cls1, cls2, code1, code2, code3;
    err = MPI_Add_error_class(&cls1);
    CHECK(err == MPI_SUCCESS && cls1 > 0, "Add_error_class: err %d class %d", err, cls1);
    MPI_Add_error_class(&cls2);
    CHECK(cls2 != cls1, "two added classes are both %d", cls1);
    for (int i = 0; i < NCLASSES; i++)
        CHECK(cls1 != classes[i] && cls2 != classes[i], "added class equals predefined %d",
              classes[i]);
    class_is(cls1, cls1, "added class");
    class_is(cls2, cls2, "second added class");
    string_is(cls1, "", "added class without a string");
    err = MPI_Add_error_code(cls1, &code1);
    CHECK(err == MPI_SUCCESS && code1 != cls1 && code1 != cls2, "Add_error_code: %d -> %d", err,
          code1);
    MPI_Add_error_code(cls1, &code2);
    MPI_Add_error_code(MPI_ERR_TAG, &code3);
    CHECK(code2 != code1 && code3 != code1 && code3 != code2, "codes %d %d %d not distinct", code1,
          code2, code3);
    class_is(code1, cls1, "added code");
    class_is(code2, cls1, "second added code");
    class_is(code3, MPI_ERR_TAG, "code added to MPI_ERR_TAG");
    string_is(code1, "", "added code without a string");
    err = MPI_Add_error_string(cls1, "my class of errors");
    CHECK(err == MPI_SUCCESS, "Add_error_string(class): %d", err);
    MPI_Add_error_string(code1, "my first error");
    MPI_Add_error_string(code3, "a tag error of mine");
    string_is(cls1, "my class of errors", "added class");
    string_is(code1, "my first error", "added code");
    string_is(code2, "", "second added code without a string");
    string_is(code3, "a tag error of mine", "code added to MPI_ERR_TAG");
    MPI_Add_error_string(code1, "my first error, renamed");
    string_is(code1, "my first error, renamed", "replaced string");
    /* the longest allowed string */
    memset(s, 'e', sizeof(s));
    s[MPI_MAX_ERROR_STRING - 1] = '\0';
    err = MPI_Add_error_string(code2, s);
    CHECK(err == MPI_SUCCESS, "a string of MPI_MAX_ERROR_STRING-1 characters: %d", err);
    string_is(code2, s, "longest string");

    /* MPI_LASTUSEDCODE covers the new ones */
    {
        int *last = NULL, flag = 0;
        err = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
        CHECK(err == MPI_SUCCESS && flag && last, "MPI_LASTUSEDCODE: err %d flag %d", err, flag);
        if (flag && last)
            CHECK(*last >= cls1 && *last >= cls2 && *last >= code1 && *last >= code2 &&
                      *last >= code3,
                  "MPI_LASTUSEDCODE %d is below an added code (%d %d %d %d %d)", *last, cls1, cls2,
                  code1, code2, code3);
    }

    /* misuse */
    err = MPI_Add_error_code(cls1 + 1000000, &c);
    CHECK(err != MPI_SUCCESS, "Add_error_code of an unknown class succeeded");
    err = MPI_Add_error_string(MPI_ERR_TAG, "not mine");
    CHECK(err != MPI_SUCCESS, "Add_error_string of a predefined code succeeded");
    string_is(code3, "a tag error of mine", "after failed calls");
    err = MPI_Error_class(-5, &c);
    CHECK(err != MPI_SUCCESS, "Error_class(-5) succeeded (class %d)", c);

    /* the codes of real failures: class and a string */
    {
        int buf[2];
        err = MPI_Send(buf, 1, MPI_INT, 0, -3, MPI_COMM_WORLD);
        class_is(err, MPI_ERR_TAG, "code from a failed MPI_Send");
        err = MPI_Error_string(err, s, &len);
        CHECK(err == MPI_SUCCESS && len > 0, "string of a failed call's code: %d", err);
    }

    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}
