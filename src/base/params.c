/* SPDX-License-Identifier: BSD-3-Clause */
#include "params.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

const tdm_param_desc_t tdm_param_descs[TDM_PARAM_COUNT] = {
#define TDM_PARAM(_name, _type, _def, _scope, _verb, _desc)                                        \
    [TDM_PARAM_##                                                                                  \
        _name] = {#_name, TDM_PTYPE_##_type, _def, TDM_PSCOPE_##_scope, TDM_PVERB_##_verb, _desc},
#include "params.def"
#undef TDM_PARAM
};

tdm_param_val_t tdm_param_vals[TDM_PARAM_COUNT];
tdm_psrc_t tdm_param_srcs[TDM_PARAM_COUNT];

int tdm_param_parse(tdm_ptype_t type, const char *text, tdm_param_val_t *val_p) {
    char *end;
    switch (type) {
    case TDM_PTYPE_BOOL:
        if (!strcasecmp(text, "1") || !strcasecmp(text, "yes") || !strcasecmp(text, "on") ||
            !strcasecmp(text, "true")) {
            val_p->i = 1;
            return 0;
        }
        if (!strcasecmp(text, "0") || !strcasecmp(text, "no") || !strcasecmp(text, "off") ||
            !strcasecmp(text, "false")) {
            val_p->i = 0;
            return 0;
        }
        return -1;
    case TDM_PTYPE_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end)
            return -1;
        val_p->i = v;
        return 0;
    }
    case TDM_PTYPE_SIZE: {
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        if (errno || end == text || text[0] == '-')
            return -1;
        unsigned long long mul = 1;
        switch (*end) {
        case 'k':
        case 'K':
            mul = 1ull << 10;
            end++;
            break;
        case 'm':
        case 'M':
            mul = 1ull << 20;
            end++;
            break;
        case 'g':
        case 'G':
            mul = 1ull << 30;
            end++;
            break;
        default:
            break;
        }
        if (*end == 'b' || *end == 'B')
            end++;
        if (*end || v > (unsigned long long)INT64_MAX / mul)
            return -1;
        val_p->i = (long long)(v * mul);
        return 0;
    }
    case TDM_PTYPE_STRING:
        val_p->s = text;
        return 0;
    }
    return -1;
}

static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    size_t row[128];
    if (lb >= sizeof(row) / sizeof(row[0]))
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = (a[i - 1] == b[j - 1]) ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *tdm_params_suggest(const char *name) {
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        size_t d = edit_distance(name, tdm_param_descs[i].name);
        if (d < best_d) {
            best_d = d;
            best = tdm_param_descs[i].name;
        }
    }
    /* only suggest when the name is plausibly a typo */
    if (best && best_d <= 1 + strlen(name) / 4)
        return best;
    return NULL;
}

void tdm_params_init(void) {
    static int done;
    if (done)
        return;
    done = 1;
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        const tdm_param_desc_t *d = &tdm_param_descs[i];
        char var[128];
        snprintf(var, sizeof(var), "TANDEM_%s", d->name);
        tdm_param_parse(d->type, d->defval, &tdm_param_vals[i]);
        tdm_param_srcs[i] = TDM_PSRC_DEFAULT;
        const char *env = getenv(var);
        if (!env)
            continue;
        tdm_param_val_t v;
        if (tdm_param_parse(d->type, env, &v) != 0) {
            tdm_warn(BASE, "%s='%s' is not a valid %s; using the default '%s'", var, env,
                     tdm_param_type_name(d->type), d->defval);
            continue;
        }
        tdm_param_vals[i] = v;
        tdm_param_srcs[i] = TDM_PSRC_ENV;
    }
    tdm_log_configure(TDM_PARAM_S(LOG));
    /* report misspelt variables once, on the first local rank only */
    if (TDM_PARAM_I(LOCAL_RANK) > 0)
        return;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TANDEM_", 7) != 0)
            continue;
        char name[128];
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) - 7 : strlen(*e) - 7;
        if (n >= sizeof(name))
            n = sizeof(name) - 1;
        memcpy(name, *e + 7, n);
        name[n] = '\0';
        int known = 0;
        for (int i = 0; i < TDM_PARAM_COUNT && !known; i++)
            known = !strcmp(name, tdm_param_descs[i].name);
        /* TANDEM_TEST_* belong to the test suite, not to the library */
        if (known || !strncmp(name, "TEST_", 5))
            continue;
        const char *s = tdm_params_suggest(name);
        if (s)
            tdm_warn(BASE, "unknown variable TANDEM_%s is ignored; did you mean TANDEM_%s?", name,
                     s);
        else
            tdm_warn(BASE, "unknown variable TANDEM_%s is ignored (tandem_info lists them all)",
                     name);
    }
}

void tdm_param_format(tdm_param_id_t id, char *buf, int len) {
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    if (d->type == TDM_PTYPE_STRING)
        snprintf(buf, (size_t)len, "%s", tdm_param_vals[id].s ? tdm_param_vals[id].s : "");
    else
        snprintf(buf, (size_t)len, "%lld", tdm_param_vals[id].i);
}

const char *tdm_param_type_name(tdm_ptype_t type) {
    static const char *const names[] = {"bool", "int", "size", "string"};
    return names[type];
}
const char *tdm_param_scope_name(tdm_pscope_t scope) {
    static const char *const names[] = {"local", "job", "launcher"};
    return names[scope];
}
const char *tdm_param_src_name(tdm_psrc_t src) {
    static const char *const names[] = {"default", "environment", "MPI_T"};
    return names[src];
}
