/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tandem_info: what this Tandem MPI is and how it is tuned. Lists every
 * tunable of src/base/params.def with its default, range, current value and where
 * the value came from; --mpit lists what the MPI tool information interface
 * shows (control and performance variables, categories, events), read through
 * MPI_T as a tool would; --tunables-md writes docs/tunables.md from the same
 * declarations (the test suite checks the checked-in copy is current).
 */
#include "base/event.h"
#include "base/params.h"
#include "mpi.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f, "usage: tandem_info [--all] [--mpit] [--tunables-md] [--version]\n"
               "  (no option)    version and every user/tuner tunable with its current value\n"
               "  --all          also the developer and launcher variables\n"
               "  --mpit         every control variable, performance variable, category and\n"
               "                 event, listed through MPI_T (as MPICH's mpivars does)\n"
               "  --tunables-md  the reference in markdown (docs/tunables.md)\n");
}

/* ---- through MPI_T ---- */

static const char *type_name(MPI_Datatype t) {
    return t == MPI_INT                  ? "int"
           : t == MPI_UNSIGNED_LONG_LONG ? "unsigned long long"
           : t == MPI_COUNT              ? "count"
           : t == MPI_CHAR               ? "char"
           : t == MPI_DOUBLE             ? "double"
                                         : "?";
}

static const char *class_name(int c) {
    static const char *const names[] = {"state",         "level",        "size",    "percentage",
                                        "highwatermark", "lowwatermark", "counter", "aggregate",
                                        "timer",         "generic"};
    int i = c - MPI_T_PVAR_CLASS_STATE;
    return i >= 0 && i < 10 ? names[i] : "?";
}

static const char *scope_name(int s) {
    static const char *const names[] = {"constant", "readonly", "local", "group",
                                        "group_eq", "all",      "all_eq"};
    int i = s - MPI_T_SCOPE_CONSTANT;
    return i >= 0 && i < 7 ? names[i] : "?";
}

static const char *verbosity_name(int v) {
    static const char *const names[] = {"user", "tuner", "developer"};
    int i = (v - MPI_T_VERBOSITY_USER_BASIC) / 3;
    return i >= 0 && i < 3 ? names[i] : "?";
}

/* "a(0), b(1)" */
static void enum_text(MPI_T_enum e, char *buf, size_t len) {
    int num = 0;
    buf[0] = '\0';
    if (e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &num, NULL, NULL) != MPI_SUCCESS)
        return;
    size_t off = 0;
    for (int i = 0; i < num && off < len; i++) {
        char item[64];
        int value = 0, ilen = sizeof(item);
        MPI_T_enum_get_item(e, i, &value, item, &ilen);
        off += (size_t)snprintf(buf + off, len - off, "%s%s(%d)", i ? ", " : "", item, value);
    }
}

/* A control variable's value as text (bound to no object: all of Tandem's are). */
static void cvar_value(int i, MPI_Datatype t, char *buf, size_t len) {
    MPI_T_cvar_handle h;
    int count;
    union {
        int i;
        unsigned long long u;
        long long c;
        char s[256];
    } v;
    snprintf(buf, len, "?");
    if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
        return;
    if (MPI_T_cvar_read(h, &v) == MPI_SUCCESS) {
        if (t == MPI_INT)
            snprintf(buf, len, "%d", v.i);
        else if (t == MPI_UNSIGNED_LONG_LONG)
            snprintf(buf, len, "%llu", v.u);
        else if (t == MPI_COUNT)
            snprintf(buf, len, "%lld", v.c);
        else if (t == MPI_CHAR)
            snprintf(buf, len, "%s", v.s);
    }
    MPI_T_cvar_handle_free(&h);
}

static int print_mpit(void) {
    int provided, ncvars, npvars, ncats, nevents;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "tandem_info: MPI_T_init_thread failed\n");
        return 1;
    }
    MPI_T_cvar_get_num(&ncvars);
    MPI_T_pvar_get_num(&npvars);
    MPI_T_category_get_num(&ncats);
    MPI_T_event_get_num(&nevents);
    char name[128], desc[1024], val[256], en[512];
    printf("%d control variables\n", ncvars);
    for (int i = 0; i < ncvars; i++) {
        int nl = sizeof(name), dl = sizeof(desc), verb, bind, scope;
        MPI_Datatype t;
        MPI_T_enum e;
        MPI_T_cvar_get_info(i, name, &nl, &verb, &t, &e, desc, &dl, &bind, &scope);
        cvar_value(i, t, val, sizeof(val));
        enum_text(e, en, sizeof(en));
        printf("  %s = %s  [%s, scope %s, %s]%s%s%s\n", name, val, type_name(t), scope_name(scope),
               verbosity_name(verb), en[0] ? " {" : "", en, en[0] ? "}" : "");
    }
    printf("%d performance variables\n", npvars);
    for (int i = 0; i < npvars; i++) {
        int nl = sizeof(name), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype t;
        MPI_T_enum e;
        MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &t, &e, desc, &dl, &bind, &ro, &cont,
                            &atomic);
        printf("  %s  [%s, %s, %s%s%s]\n", name, class_name(cls), type_name(t),
               bind == MPI_T_BIND_MPI_COMM ? "bound to a communicator, " : "",
               cont ? "continuous" : "started and stopped", ro ? ", read-only" : "");
    }
    printf("%d categories\n", ncats);
    for (int c = 0; c < ncats; c++) {
        int nl = sizeof(name), dl = sizeof(desc), nc, np, ns, ne;
        MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &ns);
        MPI_T_category_get_num_events(c, &ne);
        printf("  %s: %d control variables, %d performance variables, %d events, "
               "%d subcategories\n",
               name, nc, np, ne, ns);
    }
    printf("%d events\n", nevents);
    for (int i = 0; i < nevents; i++) {
        int nl = sizeof(name), n = 8, verb, bind;
        MPI_Datatype types[8];
        MPI_Aint displs[8];
        MPI_T_event_get_info(i, name, &nl, &verb, types, displs, &n, NULL, NULL, NULL, NULL, &bind);
        printf("  %s (", name);
        for (int k = 0; k < n && k < 8; k++)
            printf("%s%s", k ? ", " : "", type_name(types[k]));
        printf(")\n");
    }
    MPI_T_finalize();
    return 0;
}

/* A RANGE as the reference shows it: words as a list, bounds in code style. */
static void md_range(tdm_param_id_t id, char *buf, size_t len) {
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    int n = tdm_param_nchoices(id);
    if (n > 0) {
        size_t off = 0;
        for (int c = 0; c < n && off < len; c++) {
            char w[64];
            tdm_param_choice_name(id, c, w, sizeof(w));
            off += (size_t)snprintf(buf + off, len - off, "%s`%s`", c ? ", " : "", w);
        }
    } else if (d->type == TDM_PTYPE_BOOL) {
        snprintf(buf, len, "0, 1");
    } else if (d->range[0]) {
        const char *sp = strchr(d->range, ' ');
        if (sp)
            snprintf(buf, len, "`%.*s`, %s", (int)(sp - d->range), d->range,
                     !strcmp(sp, " pow2") ? "a power of two" : "a multiple of 64");
        else
            snprintf(buf, len, "`%s`", d->range);
    } else {
        snprintf(buf, len, "any text");
    }
}

/* The performance variables and events of the reference, read through MPI_T. */
static void print_md_mpit(void) {
    int provided, npvars, nevents, ncats;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    MPI_T_pvar_get_num(&npvars);
    MPI_T_event_get_num(&nevents);
    MPI_T_category_get_num(&ncats);
    char name[128], desc[1024], cat[128];
    printf("\n## Performance variables\n\n"
           "Read through MPI_T (`MPI_T_pvar_*`; `tandem_info --mpit` and MPICH's `mpivars` list\n"
           "them). Counts are this process's since `MPI_Init` (a session's handle counts while it\n"
           "is started); declared in `src/p2p/pvars.def`, `src/coll/pvars.def` and\n"
           "`src/comm/pvars.def`, where the engine keeps them. Levels, sizes, states, percentages\n"
           "and generic ones are continuous and read-only; the others are started and stopped,\n"
           "written and reset per handle. `TANDEM_PROTO_STATS=1` and `TANDEM_COLL_STATS=1` print\n"
           "the same counters at `MPI_Finalize`.\n\n"
           "| variable | class | datatype | bound to | level | category | description |\n"
           "| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < npvars; i++) {
        int nl = sizeof(name), dl = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype t;
        MPI_T_enum e;
        MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &t, &e, desc, &dl, &bind, &ro, &cont,
                            &atomic);
        snprintf(cat, sizeof(cat), "?");
        for (int c = 0; c < ncats; c++) {
            int idx[256], np = 0, cl = sizeof(cat);
            MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, NULL, &np, NULL);
            MPI_T_category_get_pvars(c, 256, idx);
            for (int k = 0; k < np && k < 256; k++)
                if (idx[k] == i)
                    MPI_T_category_get_info(c, cat, &cl, NULL, NULL, NULL, NULL, NULL);
        }
        char en[512];
        enum_text(e, en, sizeof(en));
        printf("| `%s` | %s | %s | %s | %s | %s | %s%s%s%s |\n", name, class_name(cls),
               type_name(t), bind == MPI_T_BIND_MPI_COMM ? "communicator" : "-",
               verbosity_name(verb), cat, desc, en[0] ? " (" : "", en, en[0] ? ")" : "");
    }
    printf("\n## Events\n\n"
           "Delivered through MPI_T (`MPI_T_event_*`, MPI-4.1 16.3.8) to callbacks registered for\n"
           "`MPI_T_CB_REQUIRE_MPI_RESTRICTED` or a stronger level (they run inside the library,\n"
           "where no MPI call may be made); timestamps in nanoseconds from the one source,\n"
           "`tandem_clock` (CLOCK_MONOTONIC). Declared in `src/base/events.def`. While no\n"
           "callback is registered for an event, raising it costs one predictable branch.\n\n"
           "| event | elements | level | description |\n"
           "| --- | --- | --- | --- |\n");
    for (int i = 0; i < nevents; i++) {
        int nl = sizeof(name), dl = sizeof(desc), n = 8, verb, bind;
        MPI_Datatype types[8];
        MPI_Aint displs[8];
        MPI_T_enum e;
        MPI_T_event_get_info(i, name, &nl, &verb, types, displs, &n, &e, NULL, desc, &dl, &bind);
        printf("| `%s` | %s | %s | %s |\n", name, tdm_event_descs[i].elements, verbosity_name(verb),
               desc);
    }
    printf("\n## Categories\n\n| category | control | performance | events | description |\n"
           "| --- | --- | --- | --- | --- |\n");
    for (int c = 0; c < ncats; c++) {
        int nl = sizeof(name), dl = sizeof(desc), nc, np, ns, ne;
        MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &ns);
        MPI_T_category_get_num_events(c, &ne);
        printf("| `%s` | %d | %d | %d | %s%s |\n", name, nc, np, ne, desc,
               ns ? " (the parent of the others)" : "");
    }
    MPI_T_finalize();
}

static void print_md(void) {
    printf("# Tandem MPI tunables, performance variables and events\n\n"
           "Generated by `tandem_info --tunables-md` from `src/base/params.def`, the performance\n"
           "variables' declarations and `src/base/events.def`; do not edit.\n\n"
           "## Control variables\n\n"
           "Each tunable is read from the environment variable `TANDEM_<NAME>` at `MPI_Init`,\n"
           "and is the MPI_T control variable of that name (`MPI_T_cvar_*`). Sizes accept the\n"
           "suffixes k, m and g (powers of 1024). A value outside its range (bounds included; a\n"
           "product of names means those variables' values) is refused: the first rank of each\n"
           "node says so once, and the default is used. Through MPI_T a bool or an int is an\n"
           "`MPI_INT`, a size an `MPI_UNSIGNED_LONG_LONG`, a string with words an `MPI_INT`\n"
           "naming a word of its enumeration (in the range's order), other strings `MPI_CHAR`.\n"
           "Scope: `local` and `job` (every rank alike: `MPI_T_SCOPE_ALL_EQ`) are read at\n"
           "`MPI_Init`, and MPI_T may write them before it only (`MPI_T_ERR_CVAR_SET_NOT_NOW`\n"
           "after); `..., run time` ones take a write at once, for what starts after it (a `job`\n"
           "one written by every rank, between phases); `launcher` and `mpicc` ones are constant\n"
           "(`MPI_T_ERR_CVAR_SET_NEVER`).\n\n"
           "| variable | type | default | range | scope | level | description |\n"
           "| --- | --- | --- | --- | --- | --- | --- |\n");
    static const char *const verb[] = {"user", "tuner", "developer"};
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        const tdm_param_desc_t *d = &tdm_param_descs[i];
        char range[256];
        md_range((tdm_param_id_t)i, range, sizeof(range));
        printf("| `TANDEM_%s` | %s | `%s` | %s | %s | %s | %s |\n", d->name,
               tdm_param_type_name(d->type), d->defval[0] ? d->defval : "(empty)", range,
               tdm_param_scope_name(d->scope), verb[d->verbosity], d->desc);
    }
    print_md_mpit();
}

int main(int argc, char **argv) {
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all")) {
            all = 1;
        } else if (!strcmp(argv[i], "--mpit")) {
            return print_mpit();
        } else if (!strcmp(argv[i], "--tunables-md")) {
            print_md();
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("Tandem MPI %s (MPI %d.%d, MPICH ABI libmpi.so.12)\n", TANDEM_VERSION_STRING,
                   MPI_VERSION, MPI_SUBVERSION);
            return 0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tandem_info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    tdm_params_init();
    printf("Tandem MPI %s (MPI %d.%d, MPICH ABI libmpi.so.12)\n\n", TANDEM_VERSION_STRING,
           MPI_VERSION, MPI_SUBVERSION);
    printf("%-28s %-7s %-12s %-12s %-11s %s\n", "variable", "type", "default", "value", "from",
           "range: description");
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        const tdm_param_desc_t *d = &tdm_param_descs[i];
        if (!all && (d->verbosity == TDM_PVERB_DEV || d->scope == TDM_PSCOPE_LAUNCHER))
            continue;
        char name[64], val[64];
        snprintf(name, sizeof(name), "TANDEM_%s", d->name);
        tdm_param_format((tdm_param_id_t)i, val, sizeof(val));
        printf("%-28s %-7s %-12s %-12s %-11s %s%s%s\n", name, tdm_param_type_name(d->type),
               d->defval, val, tdm_param_src_name(tdm_param_srcs[i]), d->range,
               d->range[0] ? ": " : "", d->desc);
    }
    return 0;
}
