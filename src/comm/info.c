/* SPDX-License-Identifier: BSD-3-Clause */
#include "info.h"
#include "../base/htab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tdm_htab_t infos = TDM_HTAB_INIT((int)TDM_INFO_INDEX_MASK + 1, false);
static tdm_info_t env_obj = {.handle = TDM_INFO_ENV_HANDLE, .readonly = true};
static int env_size;
static char env_thread_level[32] = "MPI_THREAD_SINGLE";
static bool env_filled;

tdm_info_t *tdm_info_new(bool with_handle) {
    tdm_info_t *info = calloc(1, sizeof(*info));
    if (!info)
        return NULL;
    if (with_handle) {
        int index = tdm_htab_alloc(&infos, info);
        if (index < 0) {
            free(info);
            return NULL;
        }
        info->handle = (int)(TDM_INFO_USER_BASE | (unsigned)index);
    }
    return info;
}

void tdm_info_free(tdm_info_t *info) {
    if (!info || info == &env_obj)
        return;
    for (int i = 0; i < info->n; i++) {
        free(info->e[i].key);
        free(info->e[i].val);
    }
    free(info->e);
    if (info->handle)
        tdm_htab_free(&infos, (int)((unsigned)info->handle & TDM_INFO_INDEX_MASK));
    free(info);
}

static tdm_info_entry_t *find(const tdm_info_t *info, const char *key) {
    for (int i = 0; i < info->n; i++) {
        if (strcmp(info->e[i].key, key) == 0)
            return &info->e[i];
    }
    return NULL;
}

static int set(tdm_info_t *info, const char *key, const char *val) {
    char *v = strdup(val);
    if (!v)
        return -1;
    tdm_info_entry_t *e = find(info, key);
    if (e) {
        free(e->val);
        e->val = v;
        return 0;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        tdm_info_entry_t *ne = realloc(info->e, (size_t)cap * sizeof(*ne));
        if (!ne) {
            free(v);
            return -1;
        }
        info->e = ne;
        info->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return -1;
    }
    info->e[info->n++] = (tdm_info_entry_t){.key = k, .val = v};
    return 0;
}

int tdm_info_set(tdm_info_t *info, const char *key, const char *val) {
    return set(info, key, val);
}

static void env_fill(void);

tdm_info_t *tdm_info_dup(const tdm_info_t *src, bool with_handle) {
    if (src == &env_obj)
        env_fill();
    tdm_info_t *info = tdm_info_new(with_handle);
    if (!info)
        return NULL;
    for (int i = 0; src && i < src->n; i++) {
        if (set(info, src->e[i].key, src->e[i].val) != 0) {
            tdm_info_free(info);
            return NULL;
        }
    }
    return info;
}

tdm_info_t *tdm_info_get(int handle) {
    if (handle == TDM_INFO_ENV_HANDLE) {
        env_fill();
        return &env_obj;
    }
    if (((unsigned)handle & ~TDM_INFO_INDEX_MASK) != TDM_INFO_USER_BASE)
        return NULL;
    return tdm_htab_get(&infos, (unsigned)handle & TDM_INFO_INDEX_MASK);
}

const char *tdm_info_find(const tdm_info_t *info, const char *key) {
    tdm_info_entry_t *e = find(info, key);
    return e ? e->val : NULL;
}

bool tdm_info_delete(tdm_info_t *info, const char *key) {
    tdm_info_entry_t *e = find(info, key);
    if (!e)
        return false;
    free(e->key);
    free(e->val);
    int i = (int)(e - info->e);
    memmove(&info->e[i], &info->e[i + 1], (size_t)(info->n - i - 1) * sizeof(*e));
    info->n--;
    return true;
}

void tdm_info_env_init(int world_size, const char *thread_level) {
    if (world_size == env_size && strcmp(thread_level, env_thread_level) == 0)
        return;
    env_size = world_size;
    snprintf(env_thread_level, sizeof(env_thread_level), "%s", thread_level);
    /* read before MPI_Init, filled with what was known then: fill it again */
    for (int i = 0; i < env_obj.n; i++) {
        free(env_obj.e[i].key);
        free(env_obj.e[i].val);
    }
    env_obj.n = 0;
    env_filled = false;
}

/* MPI-4.1 §11.2.3: command, argv, maxprocs, soft, host, arch, wdir, file,
 * thread_level; only the ones we actually know are present. */
static void env_fill(void) {
    if (env_filled)
        return;
    env_filled = true;
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        if (len > 0) {
            set(&env_obj, "command", buf);
            /* the remaining NUL-separated words, joined by spaces */
            size_t first = strlen(buf) + 1;
            if (first < len) {
                for (size_t i = first; i + 1 < len; i++) {
                    if (buf[i] == '\0')
                        buf[i] = ' ';
                }
                set(&env_obj, "argv", buf + first);
            }
        }
    }
    if (env_size > 0) {
        snprintf(buf, sizeof(buf), "%d", env_size);
        set(&env_obj, "maxprocs", buf);
    }
    if (gethostname(buf, sizeof(buf)) == 0) {
        buf[sizeof(buf) - 1] = '\0';
        set(&env_obj, "host", buf);
    }
#if defined(__x86_64__)
    set(&env_obj, "arch", "x86_64");
#elif defined(__aarch64__)
    set(&env_obj, "arch", "aarch64");
#endif
    if (getcwd(buf, sizeof(buf)))
        set(&env_obj, "wdir", buf);
    set(&env_obj, "thread_level", env_thread_level);
}
