/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Info bindings. MPI-4 lets these be called before MPI_Init and after
 * MPI_Finalize, so they do not check the library state.
 */
#include "bind.h"
#include "../base/params.h"
#include "../comm/info.h"

#include <string.h>

/* MPI_INFO_ENV says what is known now: before MPI_Init, the job's size from the
 * launcher's environment (a process without one is a singleton). */
static void env_prepare(void) {
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int lvl = tdm_mpi.thread_level, size;
    if (tdm_mpi.initialized) {
        size = tdm_mpi.boot.size;
    } else {
        tdm_params_init();
        size = TDM_PARAM_I(RANK) >= 0 ? (int)TDM_PARAM_I(SIZE) : 1;
        lvl = MPI_THREAD_SINGLE;
    }
    if (lvl < MPI_THREAD_SINGLE || lvl > MPI_THREAD_MULTIPLE)
        lvl = MPI_THREAD_SINGLE;
    tdm_info_env_init(size, levels[lvl - MPI_THREAD_SINGLE]);
}

/* Look up an info handle into _var (MPI_INFO_NULL is invalid here). */
#define GET_INFO(_fn, _handle, _var)                                                               \
    do {                                                                                           \
        if ((_handle) == MPI_INFO_ENV)                                                             \
            env_prepare();                                                                         \
        TDM_GET_OBJ(_fn, NULL, tdm_info_get, _handle, _var, MPI_ERR_INFO, "info", "");             \
    } while (0)

#define CHECK_KEY(_fn, _key)                                                                       \
    do {                                                                                           \
        if (TDM_UNLIKELY(!(_key)))                                                                 \
            return tdm_mpi_err(NULL, MPI_ERR_INFO_KEY, _fn, "key is NULL");                        \
        size_t _len = strlen(_key);                                                                \
        if (TDM_UNLIKELY(_len == 0 || _len > MPI_MAX_INFO_KEY))                                    \
            return tdm_mpi_err(NULL, MPI_ERR_INFO_KEY, _fn,                                        \
                               "key of length %zu (must be 1..MPI_MAX_INFO_KEY=%d)", _len,         \
                               MPI_MAX_INFO_KEY);                                                  \
    } while (0)

#define CHECK_WRITABLE(_fn, _info)                                                                 \
    do {                                                                                           \
        if (TDM_UNLIKELY((_info)->readonly))                                                       \
            return tdm_mpi_err(NULL, MPI_ERR_INFO, _fn, "MPI_INFO_ENV cannot be modified");        \
    } while (0)

int PMPI_Info_create(MPI_Info *info) {
    TDM_CHECK_PTR("MPI_Info_create", NULL, info, "info");
    tdm_info_t *in = tdm_info_new(true);
    if (!in)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    *info = in->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_create)

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info) {
    (void)argc;
    (void)argv;
    TDM_CHECK_PTR("MPI_Info_create_env", NULL, info, "info");
    env_prepare();
    tdm_info_t *in = tdm_info_dup(tdm_info_get(MPI_INFO_ENV), true);
    if (!in)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create_env", "out of memory");
    *info = in->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_create_env)

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo) {
    tdm_info_t *in;
    GET_INFO("MPI_Info_dup", info, in);
    TDM_CHECK_PTR("MPI_Info_dup", NULL, newinfo, "newinfo");
    tdm_info_t *out = tdm_info_dup(in, true);
    if (!out)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    *newinfo = out->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_dup)

int PMPI_Info_free(MPI_Info *info) {
    tdm_info_t *in;
    TDM_CHECK_PTR("MPI_Info_free", NULL, info, "info");
    GET_INFO("MPI_Info_free", *info, in);
    CHECK_WRITABLE("MPI_Info_free", in);
    tdm_info_free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_free)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value) {
    static const char fn[] = "MPI_Info_set";
    tdm_info_t *in;
    GET_INFO(fn, info, in);
    CHECK_WRITABLE(fn, in);
    CHECK_KEY(fn, key);
    if (!value)
        return tdm_mpi_err(NULL, MPI_ERR_INFO_VALUE, fn, "value is NULL");
    size_t len = strlen(value);
    if (len > MPI_MAX_INFO_VAL)
        return tdm_mpi_err(NULL, MPI_ERR_INFO_VALUE, fn,
                           "value of length %zu (longer than MPI_MAX_INFO_VAL=%d)", len,
                           MPI_MAX_INFO_VAL);
    if (tdm_info_set(in, key, value))
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_set)

int PMPI_Info_delete(MPI_Info info, const char *key) {
    static const char fn[] = "MPI_Info_delete";
    tdm_info_t *in;
    GET_INFO(fn, info, in);
    CHECK_WRITABLE(fn, in);
    CHECK_KEY(fn, key);
    if (!tdm_info_delete(in, key))
        return tdm_mpi_err(NULL, MPI_ERR_INFO_NOKEY, fn, "key \"%s\" is not set", key);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_delete)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) {
    static const char fn[] = "MPI_Info_get";
    tdm_info_t *in;
    GET_INFO(fn, info, in);
    CHECK_KEY(fn, key);
    TDM_CHECK_PTR(fn, NULL, flag, "flag");
    if (valuelen < 0)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid valuelen %d", valuelen);
    const char *v = tdm_info_find(in, key);
    *flag = v != NULL;
    if (v) {
        TDM_CHECK_PTR(fn, NULL, value, "value");
        /* at most valuelen characters, plus the terminating NUL */
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_get)

int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag) {
    static const char fn[] = "MPI_Info_get_string";
    tdm_info_t *in;
    GET_INFO(fn, info, in);
    CHECK_KEY(fn, key);
    TDM_CHECK_PTR(fn, NULL, flag, "flag");
    TDM_CHECK_PTR(fn, NULL, buflen, "buflen");
    if (*buflen < 0)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid *buflen %d", *buflen);
    const char *v = tdm_info_find(in, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    size_t len = strlen(v);
    /* MPI-4.1 §10: *buflen in: size of value; out: length + 1. With *buflen 0,
     * value is not touched (it may be NULL): the call asks for the length */
    if (*buflen > 0) {
        TDM_CHECK_PTR(fn, NULL, value, "value");
        size_t n = len < (size_t)*buflen - 1 ? len : (size_t)*buflen - 1;
        memcpy(value, v, n);
        value[n] = '\0';
    }
    *buflen = (int)len + 1;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_get_string)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag) {
    static const char fn[] = "MPI_Info_get_valuelen";
    tdm_info_t *in;
    GET_INFO(fn, info, in);
    CHECK_KEY(fn, key);
    TDM_CHECK_PTR(fn, NULL, valuelen, "valuelen");
    TDM_CHECK_PTR(fn, NULL, flag, "flag");
    const char *v = tdm_info_find(in, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_get_valuelen)

TDM_MPI_PROPERTY(MPI_Info_get_nkeys, MPI_Info, tdm_info_t, in, GET_INFO, NULL, int, nkeys, in->n)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key) {
    static const char fn[] = "MPI_Info_get_nthkey";
    tdm_info_t *in;
    GET_INFO(fn, info, in);
    TDM_CHECK_PTR(fn, NULL, key, "key");
    if (n < 0 || n >= in->n)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid n=%d (the info has %d keys)", n, in->n);
    strcpy(key, in->e[n].key);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Info_get_nthkey)
