/* SPDX-License-Identifier: BSD-3-Clause */
#include "params.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

const tdm_param_desc_t tdm_param_descs[TDM_PARAM_COUNT] = {
#define TDM_PARAM(_name, _type, _def, _range, _scope, _verb, _desc)                                \
    [TDM_PARAM_##_name] = {                                                                        \
        #_name, TDM_PTYPE_##_type, _def, _range, TDM_PSCOPE_##_scope, TDM_PVERB_##_verb, _desc},
#include "params.def"
#undef TDM_PARAM
};

tdm_param_val_t tdm_param_vals[TDM_PARAM_COUNT];
tdm_psrc_t tdm_param_srcs[TDM_PARAM_COUNT];

const tdm_param_cat_desc_t tdm_param_cats[TDM_PCAT_COUNT] = {
#define TDM_PARAM(...)
#define TDM_PARAM_CATEGORY(_id, _desc) [TDM_PCAT_##_id] = {"tandem_" #_id, _desc},
#include "params.def"
#undef TDM_PARAM_CATEGORY
#undef TDM_PARAM
};

tdm_param_cat_t tdm_param_category(tdm_param_id_t id) {
    /* params.def's lines in order: a category, or a parameter under the last one */
    static const struct {
        int16_t param, cat;
    } lines[] = {
#define TDM_PARAM(_name, ...) {TDM_PARAM_##_name, -1},
#define TDM_PARAM_CATEGORY(_id, _desc) {-1, TDM_PCAT_##_id},
#include "params.def"
#undef TDM_PARAM_CATEGORY
#undef TDM_PARAM
    };
    int cat = 0;
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        if (lines[i].cat >= 0)
            cat = lines[i].cat;
        else if (lines[i].param == (int)id)
            break;
    }
    return (tdm_param_cat_t)cat;
}

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

static int param_find(const char *name, size_t len) {
    for (int i = 0; i < TDM_PARAM_COUNT; i++)
        if (strlen(tdm_param_descs[i].name) == len && !strncmp(tdm_param_descs[i].name, name, len))
            return i;
    return -1;
}

/* One bound of a RANGE: a number, or a product of numbers and of INT or SIZE
 * parameters declared before `id` (their values are final by then). */
static int range_bound(tdm_param_id_t id, const char *s, size_t n, long long *out) {
    long long v = 1;
    while (n > 0) {
        const char *star = memchr(s, '*', n);
        size_t k = star ? (size_t)(star - s) : n;
        char term[64];
        long long t;
        if (k == 0 || k >= sizeof(term))
            return -1;
        memcpy(term, s, k);
        term[k] = '\0';
        if (term[0] == '-' || isdigit((unsigned char)term[0])) {
            tdm_param_val_t pv;
            if (tdm_param_parse(term[0] == '-' ? TDM_PTYPE_INT : TDM_PTYPE_SIZE, term, &pv))
                return -1;
            t = pv.i;
        } else {
            int j = param_find(term, k);
            if (j < 0 || j >= (int)id ||
                (tdm_param_descs[j].type != TDM_PTYPE_INT &&
                 tdm_param_descs[j].type != TDM_PTYPE_SIZE))
                return -1;
            t = tdm_param_vals[j].i;
        }
        if (__builtin_mul_overflow(v, t, &v))
            return -1;
        s += k;
        n -= k;
        if (star && --n == 0)
            return -1; /* a trailing '*' */
        if (star)
            s++;
    }
    *out = v;
    return 0;
}

enum { RANGE_POW2 = 1, RANGE_X64 = 2 };

/* "LO..HI[ pow2| x64]": the bounds, the flags, and the length of "LO..HI". */
static int range_parse(tdm_param_id_t id, long long *lo, long long *hi, unsigned *flags,
                       size_t *blen) {
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    const char *r = d->range;
    const char *dots = strstr(r, "..");
    if ((d->type != TDM_PTYPE_INT && d->type != TDM_PTYPE_SIZE) || !dots)
        return -1;
    const char *hs = dots + 2;
    const char *sp = strchr(hs, ' ');
    size_t hn = sp ? (size_t)(sp - hs) : strlen(hs);
    *flags = 0;
    if (sp && !strcmp(sp, " pow2"))
        *flags = RANGE_POW2;
    else if (sp && !strcmp(sp, " x64"))
        *flags = RANGE_X64;
    else if (sp)
        return -1;
    *blen = (size_t)(hs + hn - r);
    if (range_bound(id, r, (size_t)(dots - r), lo) || range_bound(id, hs, hn, hi) || *lo > *hi)
        return -1;
    return 0;
}

int tdm_param_bounds(tdm_param_id_t id, long long *lo_p, long long *hi_p) {
    unsigned flags;
    size_t blen;
    long long lo, hi;
    if (range_parse(id, &lo, &hi, &flags, &blen))
        return -1;
    *lo_p = lo;
    *hi_p = hi;
    return 0;
}

int tdm_param_nchoices(tdm_param_id_t id) {
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    if (d->type != TDM_PTYPE_STRING || !d->range[0])
        return 0;
    int n = 1;
    for (const char *c = d->range; *c; c++)
        n += *c == '|';
    return n;
}

/* The i-th word of a STRING parameter's choices: its start and length. */
static const char *choice_at(tdm_param_id_t id, int i, size_t *len) {
    const char *w = tdm_param_descs[id].range;
    for (int k = 0; k < i && w; k++) {
        w = strchr(w, '|');
        w = w ? w + 1 : NULL;
    }
    if (!w || i < 0)
        return NULL;
    const char *bar = strchr(w, '|');
    *len = bar ? (size_t)(bar - w) : strlen(w);
    return w;
}

int tdm_param_choice_index(tdm_param_id_t id, const char *text) {
    int n = tdm_param_nchoices(id);
    for (int i = 0; i < n; i++) {
        size_t len;
        const char *w = choice_at(id, i, &len);
        if (strlen(text) == len && !strncmp(w, text, len))
            return i;
    }
    return -1;
}

int tdm_param_choice_name(tdm_param_id_t id, int i, char *buf, size_t len) {
    size_t n;
    const char *w = i < tdm_param_nchoices(id) ? choice_at(id, i, &n) : NULL;
    if (!w)
        return -1;
    snprintf(buf, len, "%.*s", (int)n, w);
    return 0;
}

int tdm_param_check(tdm_param_id_t id, const tdm_param_val_t *val, char *why, size_t len) {
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    if (d->type == TDM_PTYPE_STRING) {
        int n = tdm_param_nchoices(id);
        if (n == 0 || tdm_param_choice_index(id, val->s ? val->s : "") >= 0)
            return 0;
        int off = snprintf(why, len, "is not one of ");
        for (int i = 0; i < n && off >= 0 && (size_t)off < len; i++) {
            char w[64];
            tdm_param_choice_name(id, i, w, sizeof(w));
            off += snprintf(why + off, len - (size_t)off, "%s%s", i ? ", " : "", w);
        }
        return -1;
    }
    if (d->type == TDM_PTYPE_BOOL || !d->range[0])
        return 0;
    long long lo, hi;
    unsigned flags;
    size_t blen;
    if (range_parse(id, &lo, &hi, &flags, &blen)) {
        snprintf(why, len, "cannot be checked: its range '%s' in params.def is malformed",
                 d->range);
        return -1;
    }
    long long v = val->i;
    const char *bad = NULL;
    if (v < lo || v > hi)
        bad = "is outside its range";
    else if ((flags & RANGE_POW2) && (v <= 0 || (v & (v - 1)) != 0))
        bad = "is not a power of two in";
    else if ((flags & RANGE_X64) && v % 64 != 0)
        bad = "is not a multiple of 64 in";
    if (!bad)
        return 0;
    char nums[64];
    snprintf(nums, sizeof(nums), "%lld..%lld", lo, hi);
    if (strlen(nums) == blen && !strncmp(nums, d->range, blen))
        snprintf(why, len, "%s %s", bad, nums);
    else
        snprintf(why, len, "%s %s (%.*s)", bad, nums, (int)blen, d->range);
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
    /* refusals are told after the loop, once LOG and LOCAL_RANK are known */
    static char refused[TDM_PARAM_COUNT][640];
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        const tdm_param_desc_t *d = &tdm_param_descs[i];
        char var[128], why[256];
        snprintf(var, sizeof(var), "TANDEM_%s", d->name);
        tdm_param_parse(d->type, d->defval, &tdm_param_vals[i]);
        tdm_param_srcs[i] = TDM_PSRC_DEFAULT;
        refused[i][0] = '\0';
        const char *env = getenv(var);
        if (!env)
            continue;
        tdm_param_val_t v;
        if (tdm_param_parse(d->type, env, &v) != 0) {
            snprintf(refused[i], sizeof(refused[i]),
                     "%s='%.100s' is not a valid %s; using the default '%.60s'", var, env,
                     tdm_param_type_name(d->type), d->defval);
            continue;
        }
        if (tdm_param_check((tdm_param_id_t)i, &v, why, sizeof(why)) != 0) {
            snprintf(refused[i], sizeof(refused[i]), "%s=%.100s %s; using the default %.60s", var,
                     env, why, d->defval[0] ? d->defval : "(empty)");
            continue;
        }
        tdm_param_vals[i] = v;
        tdm_param_srcs[i] = TDM_PSRC_ENV;
    }
    tdm_log_configure(TDM_PARAM_S(LOG));
    /* every rank has refused the same values: the first local rank alone says so,
     * and reports misspelt variables */
    if (TDM_PARAM_I(LOCAL_RANK) > 0)
        return;
    for (int i = 0; i < TDM_PARAM_COUNT; i++)
        if (refused[i][0])
            tdm_warn(BASE, "%s", refused[i]);
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
    static const char *const names[] = {"local",           "job",           "launcher",
                                        "local, run time", "job, run time", "mpicc"};
    return names[scope];
}

int tdm_param_set(tdm_param_id_t id, const tdm_param_val_t *val, char *why, size_t len) {
    /* strings written here live as long as the process: a tool may hold the old value */
    if (tdm_param_check(id, val, why, len) != 0)
        return -1;
    tdm_param_val_t v = *val;
    if (tdm_param_descs[id].type == TDM_PTYPE_STRING) {
        v.s = strdup(val->s ? val->s : "");
        if (!v.s) {
            snprintf(why, len, "cannot be stored: out of memory");
            return -1;
        }
    }
    tdm_param_vals[id] = v;
    tdm_param_srcs[id] = TDM_PSRC_API;
    return 0;
}
const char *tdm_param_src_name(tdm_psrc_t src) {
    static const char *const names[] = {"default", "environment", "MPI_T"};
    return names[src];
}
