/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * params.def's ranges: every RANGE parses and holds its default, and values
 * from the environment below, at and above the bounds of a few tunables are
 * taken or refused (the default stays). Parameters are read once per process,
 * so each setting runs in a child with its own environment.
 */
#include "base/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(_c)                                                                                  \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #_c);                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int find(const char *name) {
    for (int i = 0; i < TDM_PARAM_COUNT; i++)
        if (!strcmp(tdm_param_descs[i].name, name))
            return i;
    return -1;
}

/* Every declaration is usable: a numeric RANGE parses and a STRING's words
 * are listed; the default parses and lies inside (bounds made of parameters
 * read their defaults: the parent has no TANDEM_ variables). */
static void check_declarations(void) {
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        const tdm_param_desc_t *d = &tdm_param_descs[i];
        tdm_param_val_t v;
        char why[256] = "";
        long long lo, hi;
        if (tdm_param_parse(d->type, d->defval, &v) != 0) {
            fprintf(stderr, "%s: default '%s' does not parse\n", d->name, d->defval);
            failures++;
            continue;
        }
        if ((d->type == TDM_PTYPE_INT || d->type == TDM_PTYPE_SIZE) &&
            tdm_param_bounds((tdm_param_id_t)i, &lo, &hi) != 0) {
            fprintf(stderr, "%s: range '%s' does not parse\n", d->name, d->range);
            failures++;
        }
        if (d->type == TDM_PTYPE_BOOL && d->range[0]) {
            fprintf(stderr, "%s: a bool takes no range ('%s')\n", d->name, d->range);
            failures++;
        }
        if (tdm_param_check((tdm_param_id_t)i, &v, why, sizeof(why)) != 0) {
            fprintf(stderr, "%s: default '%s' %s\n", d->name, d->defval, why);
            failures++;
        }
    }
    int cma = find("CMA");
    char w[32];
    CHECK(tdm_param_nchoices((tdm_param_id_t)cma) == 3);
    CHECK(tdm_param_choice_index((tdm_param_id_t)cma, "off") == 2);
    CHECK(tdm_param_choice_index((tdm_param_id_t)cma, "of") == -1);
    CHECK(tdm_param_choice_name((tdm_param_id_t)cma, 1, w, sizeof(w)) == 0 && !strcmp(w, "on"));
    CHECK(tdm_param_choice_name((tdm_param_id_t)cma, 3, w, sizeof(w)) != 0);
    CHECK(tdm_param_nchoices((tdm_param_id_t)find("JOBID")) == 0);
}

typedef struct env_case {
    const char *var; /* without TANDEM_ */
    const char *value;
    long long want;   /* the value in effect */
    int taken;        /* 1: from the environment; 0: refused, the default */
    const char *also; /* another setting first ("NAME=value"), or NULL */
} env_case_t;

static const env_case_t cases[] = {
    /* the eager limit: 0 is meaningful (every non-empty message by rendezvous), and
     * at most one ring (64 cells of 8 KiB by default; the bound follows the ring) */
    {"EAGER_LIMIT", "0", 0, 1, NULL},
    {"EAGER_LIMIT", "512k", 512 << 10, 1, NULL},
    {"EAGER_LIMIT", "524289", 16 << 10, 0, NULL},
    {"EAGER_LIMIT", "1g", 16 << 10, 0, NULL},
    {"EAGER_LIMIT", "99999999999999", 16 << 10, 0, NULL},
    {"EAGER_LIMIT", "1m", 1 << 20, 1, "SHM_CELLS=128"},
    {"EAGER_LIMIT", "1m", 16 << 10, 0, "SHM_CELLS=64"},
    {"SHM_CELLS", "2", 64, 0, NULL},
    {"SHM_CELLS", "4", 4, 1, NULL},
    {"SHM_CELLS", "48", 64, 0, NULL},
    {"SHM_CELLS", "1048576", 1048576, 1, NULL},
    {"SHM_CELLS", "2097152", 64, 0, NULL},
    {"SHM_CELL_SIZE", "192", 8192, 0, NULL},
    {"SHM_CELL_SIZE", "256", 256, 1, NULL},
    {"SHM_CELL_SIZE", "300", 8192, 0, NULL},
    {"SHM_CELL_SIZE", "16m", 16 << 20, 1, NULL},
    {"SHM_CELL_SIZE", "16777280", 8192, 0, NULL},
    {"WAIT_SPIN_US", "-5", 1000, 0, NULL},
    {"WAIT_SPIN_US", "-1", 1000, 0, NULL},
    {"WAIT_SPIN_US", "0", 0, 1, NULL},
    {"WAIT_SPIN_US", "100000000", 100000000, 1, NULL},
    {"WAIT_SPIN_US", "100000001", 1000, 0, NULL},
    {"WAIT_BLOCK_US", "0", 2000, 0, NULL},
    {"WAIT_BLOCK_US", "1", 1, 1, NULL},
    {"COOP_RATIO", "-1", 50, 0, NULL},
    {"COOP_RATIO", "0", 0, 1, NULL},
    {"COOP_RATIO", "100", 100, 1, NULL},
    {"COOP_RATIO", "101", 50, 0, NULL},
    {"COOP_RATIO", "half", 50, 0, NULL},
    {"COPY_CHUNK", "4095", 2 << 20, 0, NULL},
    {"COPY_CHUNK", "4k", 4096, 1, NULL},
    {"COPY_CHUNK", "64g", 64ll << 30, 1, NULL},
    {"COPY_CHUNK", "65g", 2 << 20, 0, NULL},
    {"COOP_LOAD_MARGIN", "0", 2, 0, NULL},
    {"COOP_LOAD_MARGIN", "1", 1, 1, NULL},
};

/* The string tunables: a word of the list, or refused. */
typedef struct str_case {
    const char *var, *value, *want;
    int taken;
} str_case_t;

static const str_case_t str_cases[] = {
    {"CMA", "off", "off", 1},
    {"CMA", "maybe", "auto", 0},
    {"CMA", "OFF", "auto", 0},
    {"RNDV_PROTOCOL", "pipeline", "pipeline", 1},
    {"RNDV_PROTOCOL", "pipe", "auto", 0},
    {"BCAST_ALGORITHM", "linear", "linear", 1},
    {"BCAST_ALGORITHM", "ring", "auto", 0},
    {"ALLREDUCE_ALGORITHM", "ring", "ring", 1},
    {"JOBID", "anything at all", "anything at all", 1},
};

static void set_env(const char *name, const char *value) {
    char var[128];
    snprintf(var, sizeof(var), "TANDEM_%s", name);
    setenv(var, value, 1);
}

static int run_child(const char *what, void (*body)(const void *), const void *arg) {
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TANDEM_LOG", "error", 1); /* the refusals' messages */
        body(arg);
        _exit(failures ? 1 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "failed: %s\n", what);
        return 1;
    }
    return 0;
}

static void num_body(const void *arg) {
    const env_case_t *c = arg;
    if (c->also) {
        char name[64];
        const char *eq = strchr(c->also, '=');
        snprintf(name, sizeof(name), "%.*s", (int)(eq - c->also), c->also);
        set_env(name, eq + 1);
    }
    set_env(c->var, c->value);
    tdm_params_init();
    int id = find(c->var);
    CHECK(tdm_param_vals[id].i == c->want);
    CHECK(tdm_param_srcs[id] == (c->taken ? TDM_PSRC_ENV : TDM_PSRC_DEFAULT));
}

static void str_body(const void *arg) {
    const str_case_t *c = arg;
    set_env(c->var, c->value);
    tdm_params_init();
    int id = find(c->var);
    CHECK(!strcmp(tdm_param_vals[id].s, c->want));
    CHECK(tdm_param_srcs[id] == (c->taken ? TDM_PSRC_ENV : TDM_PSRC_DEFAULT));
}

/* The reason names the value's range, with the names a bound is made of. */
static void check_reasons(void) {
    char why[256];
    tdm_param_val_t v = {.i = 1ll << 30};
    CHECK(tdm_param_check((tdm_param_id_t)find("EAGER_LIMIT"), &v, why, sizeof(why)) != 0);
    CHECK(!strcmp(why, "is outside its range 0..524288 (0..SHM_CELLS*SHM_CELL_SIZE)"));
    v.i = -5;
    CHECK(tdm_param_check((tdm_param_id_t)find("WAIT_SPIN_US"), &v, why, sizeof(why)) != 0);
    CHECK(!strcmp(why, "is outside its range 0..100000000"));
    v.i = 48;
    CHECK(tdm_param_check((tdm_param_id_t)find("SHM_CELLS"), &v, why, sizeof(why)) != 0);
    CHECK(!strcmp(why, "is not a power of two in 4..1048576"));
    v.s = "maybe";
    CHECK(tdm_param_check((tdm_param_id_t)find("CMA"), &v, why, sizeof(why)) != 0);
    CHECK(!strcmp(why, "is not one of auto, on, off"));
}

int main(void) {
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char what[160];
        snprintf(what, sizeof(what), "TANDEM_%s=%s%s%s", cases[i].var, cases[i].value,
                 cases[i].also ? " with TANDEM_" : "", cases[i].also ? cases[i].also : "");
        failures += run_child(what, num_body, &cases[i]);
    }
    for (size_t i = 0; i < sizeof(str_cases) / sizeof(str_cases[0]); i++) {
        char what[160];
        snprintf(what, sizeof(what), "TANDEM_%s=%s", str_cases[i].var, str_cases[i].value);
        failures += run_child(what, str_body, &str_cases[i]);
    }
    /* the parent reads its parameters last: once read, they are never read again */
    tdm_params_init();
    check_declarations();
    check_reasons();
    if (failures)
        return 1;
    printf("base_params: ok\n");
    return 0;
}
