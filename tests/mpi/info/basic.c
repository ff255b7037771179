/* SPDX-License-Identifier: BSD-3-Clause */
/* Info objects against a reference model (an ordered list of key/value
 * pairs): a pseudo-random sequence of set / replace / delete / dup / free,
 * after each step every query (get, get_string with short, exact and zero
 * buffers, get_valuelen, get_nkeys, get_nthkey) compared with the model;
 * limits (MPI_MAX_INFO_KEY, MPI_MAX_INFO_VAL) and their errors; MPI_INFO_ENV. */
#include "../comm/tutil.h"

#define MAXK 16
typedef struct {
    int n;
    char key[MAXK][32];
    char val[MAXK][80];
} model_t;

static unsigned long long seed = 99;
static int rnd(int n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((seed >> 33) % (unsigned long long)n);
}

static int mfind(const model_t *m, const char *k) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->key[i], k) == 0)
            return i;
    return -1;
}

static void compare(MPI_Info info, const model_t *m, const char *what) {
    int nkeys = -1;
    T_OK(MPI_Info_get_nkeys(info, &nkeys));
    T_CHECK(nkeys == m->n, "%s: nkeys %d, expected %d", what, nkeys, m->n);
    for (int i = 0; i < m->n && i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[100];
        T_OK(MPI_Info_get_nthkey(info, i, key));
        T_CHECK(strcmp(key, m->key[i]) == 0, "%s: key %d '%s', expected '%s'", what, i, key,
                m->key[i]);
        int flag = 0, len = -1;
        T_OK(MPI_Info_get_valuelen(info, m->key[i], &len, &flag));
        T_CHECK(flag && len == (int)strlen(m->val[i]), "%s: valuelen of %s: %d", what, m->key[i],
                len);
        memset(val, '#', sizeof(val));
        T_OK(MPI_Info_get(info, m->key[i], 99, val, &flag));
        T_CHECK(flag && strcmp(val, m->val[i]) == 0, "%s: get %s = '%s'", what, m->key[i], val);
        /* get with a short valuelen: truncated, NUL-terminated */
        memset(val, '#', sizeof(val));
        T_OK(MPI_Info_get(info, m->key[i], 3, val, &flag));
        T_CHECK(flag && strncmp(val, m->val[i], 3) == 0 &&
                    strlen(val) == (strlen(m->val[i]) < 3 ? strlen(m->val[i]) : 3),
                "%s: get(valuelen 3) of %s = '%s'", what, m->key[i], val);
        /* get_string: exact size, short buffer, zero buffer */
        int buflen = (int)strlen(m->val[i]) + 1;
        memset(val, '#', sizeof(val));
        T_OK(MPI_Info_get_string(info, m->key[i], &buflen, val, &flag));
        T_CHECK(flag && buflen == (int)strlen(m->val[i]) + 1 && strcmp(val, m->val[i]) == 0,
                "%s: get_string exact", what);
        buflen = 2;
        memset(val, '#', sizeof(val));
        T_OK(MPI_Info_get_string(info, m->key[i], &buflen, val, &flag));
        T_CHECK(flag && buflen == (int)strlen(m->val[i]) + 1 && strlen(val) <= 1 &&
                    strncmp(val, m->val[i], strlen(val)) == 0,
                "%s: get_string short: buflen %d '%s'", what, buflen, val);
        buflen = 0;
        T_OK(MPI_Info_get_string(info, m->key[i], &buflen, NULL, &flag));
        T_CHECK(flag && buflen == (int)strlen(m->val[i]) + 1, "%s: get_string length query", what);
    }
    /* a key not in the model */
    int flag = 1, len = 5;
    char val[8];
    T_OK(MPI_Info_get(info, "absent_key", 7, val, &flag));
    T_CHECK(!flag, "%s: absent key found", what);
    flag = 1;
    T_OK(MPI_Info_get_valuelen(info, "absent_key", &len, &flag));
    T_CHECK(!flag, "%s: absent key has a length", what);
    int buflen = 8;
    flag = 1;
    T_OK(MPI_Info_get_string(info, "absent_key", &buflen, val, &flag));
    T_CHECK(!flag && buflen == 8, "%s: absent key get_string", what);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    seed += (unsigned)t_rank;
    MPI_Info info, copy;
    model_t m = {0}, mcopy;
    T_OK(MPI_Info_create(&info));
    compare(info, &m, "empty");
    for (int step = 0; step < 400; step++) {
        char key[32], val[80];
        snprintf(key, sizeof(key), "key_%d", rnd(12));
        int op = rnd(10);
        if (op < 6) {
            int len = rnd(70);
            for (int i = 0; i < len; i++)
                val[i] = (char)('a' + rnd(26));
            val[len] = 0;
            T_OK(MPI_Info_set(info, key, val));
            int k = mfind(&m, key);
            if (k < 0 && m.n < MAXK) {
                k = m.n++;
                strcpy(m.key[k], key);
            }
            if (k >= 0)
                strcpy(m.val[k], val);
        } else if (op < 9) {
            int k = mfind(&m, key);
            if (k >= 0) {
                T_OK(MPI_Info_delete(info, key));
                memmove(&m.key[k], &m.key[k + 1], sizeof(m.key[0]) * (size_t)(m.n - k - 1));
                memmove(&m.val[k], &m.val[k + 1], sizeof(m.val[0]) * (size_t)(m.n - k - 1));
                m.n--;
            } else {
                T_FAILS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, key));
            }
        } else {
            /* dup, then keep working on the copy and check the original later */
            T_OK(MPI_Info_dup(info, &copy));
            mcopy = m;
            compare(copy, &mcopy, "dup");
            MPI_Info_set(copy, "only_in_copy", "x");
            compare(info, &m, "original after changing the dup");
            MPI_Info_free(&info);
            T_CHECK(info == MPI_INFO_NULL, "freed handle");
            MPI_Info_delete(copy, "only_in_copy");
            info = copy;
        }
        compare(info, &m, "step");
    }
    MPI_Info_free(&info);

    /* limits */
    MPI_Info_create(&info);
    char key[MPI_MAX_INFO_KEY + 2], *val = malloc(MPI_MAX_INFO_VAL + 2);
    memset(key, 'k', sizeof(key));
    key[MPI_MAX_INFO_KEY] = 0;
    memset(val, 'v', MPI_MAX_INFO_VAL + 2);
    val[MPI_MAX_INFO_VAL] = 0;
    T_OK(MPI_Info_set(info, key, val)); /* exactly at the limits */
    int flag, len;
    T_OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    T_CHECK(flag && len == MPI_MAX_INFO_VAL, "longest value %d", len);
    key[MPI_MAX_INFO_KEY] = 'k';
    key[MPI_MAX_INFO_KEY + 1] = 0;
    T_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "v"));
    T_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "v"));
    val[MPI_MAX_INFO_VAL] = 'v';
    val[MPI_MAX_INFO_VAL + 1] = 0;
    T_FAILS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", val));
    char nth[MPI_MAX_INFO_KEY + 1];
    T_FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 1, nth));
    T_FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, -1, nth));
    T_FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_NULL, "k", "v"));
    MPI_Info bogus = (MPI_Info)0x9c123456;
    T_FAILS(MPI_ERR_INFO, MPI_Info_free(&bogus));
    MPI_Info_free(&info);
    free(val);
    return t_finish();
}
