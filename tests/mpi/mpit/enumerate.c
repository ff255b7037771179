/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Everything MPI_T lists, before MPI_Init and while MPI runs: every control
 * variable, performance variable, category, enumeration, event and source,
 * each info call's fields checked (classes and their datatypes, scopes,
 * verbosity, bindings, flags), names found again by get_index, the string
 * convention of MPI-4.1 16.3.3 (length in: the buffer; out: the string's length
 * plus one; 0 or NULL: only the length), every variable and event in exactly
 * one category, and the variables the tools need by name.
 */
#include "mtest.h"

static int is_verbosity(int v) {
    return v >= MPI_T_VERBOSITY_USER_BASIC && v <= MPI_T_VERBOSITY_MPIDEV_ALL;
}

/* The string convention on one getter: full, truncated, length only. */
typedef int (*getname_fn)(int i, char *name, int *len);

static int cvar_name(int i, char *name, int *len) {
    return MPI_T_cvar_get_info(i, name, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
static int pvar_name(int i, char *name, int *len) {
    int v, c, b, r, co, a;
    MPI_Datatype t;
    return MPI_T_pvar_get_info(i, name, len, &v, &c, &t, NULL, NULL, NULL, &b, &r, &co, &a);
}
static int cat_name(int i, char *name, int *len) {
    return MPI_T_category_get_info(i, name, len, NULL, NULL, NULL, NULL, NULL);
}
static int event_name(int i, char *name, int *len) {
    int v, n = 0, b;
    return MPI_T_event_get_info(i, name, len, &v, NULL, NULL, &n, NULL, NULL, NULL, NULL, &b);
}

static void check_strings(const char *what, int i, getname_fn get) {
    char full[256], small[5] = "!!!!";
    int len = sizeof(full);
    M_OK(get(i, full, &len));
    int n = (int)strlen(full);
    M_CHECK(len == n + 1, "%s %d: name_len %d for '%s'", what, i, len, full);
    len = sizeof(small);
    M_OK(get(i, small, &len));
    M_CHECK(len == n + 1, "%s %d: name_len %d after truncation (want %d)", what, i, len, n + 1);
    M_CHECK(strlen(small) == (size_t)(n < 4 ? n : 4) && !strncmp(small, full, strlen(small)),
            "%s %d: truncated '%s' of '%s'", what, i, small, full);
    char untouched[8] = "xyz";
    len = 0;
    M_OK(get(i, untouched, &len));
    M_CHECK(len == n + 1 && !strcmp(untouched, "xyz"), "%s %d: length 0 wrote '%s', len %d", what,
            i, untouched, len);
    len = 3;
    M_OK(get(i, NULL, &len));
    M_CHECK(len == n + 1, "%s %d: NULL buffer: len %d", what, i, len);
    M_OK(get(i, full, NULL));
}

static void check_enum(MPI_T_enum e, const char *owner) {
    int num = -1, len = 128;
    char name[128];
    M_OK(MPI_T_enum_get_info(e, &num, name, &len));
    M_CHECK(num > 0 && len == (int)strlen(name) + 1, "%s: enum '%s' num %d len %d", owner, name,
            num, len);
    for (int k = 0; k < num; k++) {
        int value = -1;
        char item[128];
        int ilen = sizeof(item);
        M_OK(MPI_T_enum_get_item(e, k, &value, item, &ilen));
        M_CHECK(ilen == (int)strlen(item) + 1 && item[0], "%s: item %d '%s' len %d", owner, k, item,
                ilen);
    }
    int value;
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_item(e, num, &value, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_item(e, -1, &value, NULL, NULL));
}

static int ncvars, npvars, ncats, nevents;

static void check_cvars(void) {
    M_OK(MPI_T_cvar_get_num(&ncvars));
    M_CHECK(ncvars > 40, "only %d control variables", ncvars);
    for (int i = 0; i < ncvars; i++) {
        char name[128], desc[1024];
        int nlen = sizeof(name), dlen = sizeof(desc), verb = 0, bind = 0, scope = 0;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        M_OK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &e, desc, &dlen, &bind, &scope));
        /* mpivars gives descriptions 1024 bytes: each must fit */
        M_CHECK(dlen == (int)strlen(desc) + 1 && dlen < 1024, "cvar %s: desc_len %d", name, dlen);
        M_CHECK(!strncmp(name, "TANDEM_", 7), "cvar %d named '%s'", i, name);
        M_CHECK(is_verbosity(verb), "cvar %s: verbosity %d", name, verb);
        M_CHECK(dt == MPI_INT || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_COUNT || dt == MPI_CHAR,
                "cvar %s: datatype %#x", name, (unsigned)dt);
        M_CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s: bind %d", name, bind);
        M_CHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ, "cvar %s: scope %d",
                name, scope);
        if (e != MPI_T_ENUM_NULL) {
            M_CHECK(dt == MPI_INT, "cvar %s: an enumeration on datatype %#x", name, (unsigned)dt);
            check_enum(e, name);
        }
        int back = -1;
        M_OK(MPI_T_cvar_get_index(name, &back));
        M_CHECK(back == i, "cvar %s: get_index gave %d, not %d", name, back, i);
        check_strings("cvar", i, cvar_name);
        MPI_T_cvar_handle h;
        int count = 0;
        M_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        M_CHECK(count == (dt == MPI_CHAR ? 256 : 1), "cvar %s: count %d", name, count);
        char buf[256];
        M_OK(MPI_T_cvar_read(h, buf));
        M_OK(MPI_T_cvar_handle_free(&h));
        M_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar %s: freed handle not set to NULL", name);
    }
}

static void check_pvars(void) {
    M_OK(MPI_T_pvar_get_num(&npvars));
    M_CHECK(npvars > 60, "only %d performance variables", npvars);
    for (int i = 0; i < npvars; i++) {
        char name[128], desc[1024];
        int nlen = sizeof(name), dlen = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum e;
        M_OK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &e, desc, &dlen, &bind, &ro,
                                 &cont, &atomic));
        M_CHECK(dlen == (int)strlen(desc) + 1 && dlen < 1024, "pvar %s: desc_len %d", name, dlen);
        M_CHECK(!strncmp(name, "tandem_", 7), "pvar %d named '%s'", i, name);
        M_CHECK(is_verbosity(verb), "pvar %s: verbosity %d", name, verb);
        M_CHECK(bind == MPI_T_BIND_NO_OBJECT || bind == MPI_T_BIND_MPI_COMM, "pvar %s: bind %d",
                name, bind);
        int arith = dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG || dt == MPI_UNSIGNED_LONG_LONG ||
                    dt == MPI_DOUBLE;
        switch (cls) {
        case MPI_T_PVAR_CLASS_STATE:
            M_CHECK(dt == MPI_INT && e != MPI_T_ENUM_NULL, "pvar %s: a state of %#x", name,
                    (unsigned)dt);
            break;
        case MPI_T_PVAR_CLASS_PERCENTAGE:
            M_CHECK(dt == MPI_DOUBLE, "pvar %s: a percentage of %#x", name, (unsigned)dt);
            break;
        case MPI_T_PVAR_CLASS_COUNTER:
            M_CHECK(arith && dt != MPI_DOUBLE, "pvar %s: a counter of %#x", name, (unsigned)dt);
            break;
        case MPI_T_PVAR_CLASS_LEVEL:
        case MPI_T_PVAR_CLASS_SIZE:
        case MPI_T_PVAR_CLASS_HIGHWATERMARK:
        case MPI_T_PVAR_CLASS_LOWWATERMARK:
        case MPI_T_PVAR_CLASS_AGGREGATE:
        case MPI_T_PVAR_CLASS_TIMER:
            M_CHECK(arith, "pvar %s: class %d of %#x", name, cls, (unsigned)dt);
            break;
        case MPI_T_PVAR_CLASS_GENERIC:
            break;
        default:
            M_CHECK(0, "pvar %s: class %d", name, cls);
        }
        M_CHECK(!cont || ro, "pvar %s: continuous but writable", name);
        if (e != MPI_T_ENUM_NULL)
            check_enum(e, name);
        int back = -1;
        M_OK(MPI_T_pvar_get_index(name, cls, &back));
        M_CHECK(back == i, "pvar %s: get_index gave %d, not %d", name, back, i);
        int other = cls == MPI_T_PVAR_CLASS_GENERIC ? MPI_T_PVAR_CLASS_STATE : cls + 1;
        M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_pvar_get_index(name, other, &back));
        check_strings("pvar", i, pvar_name);
    }
}

/* Each variable and event is in exactly one category; the root holds the others. */
static void check_categories(void) {
    M_OK(MPI_T_category_get_num(&ncats));
    M_CHECK(ncats >= 5, "only %d categories", ncats);
    int *cseen = calloc((size_t)ncvars, sizeof(int)), *pseen = calloc((size_t)npvars, sizeof(int));
    int *eseen = calloc((size_t)nevents, sizeof(int)), subs = 0;
    for (int c = 0; c < ncats; c++) {
        char name[128], desc[1024];
        int nlen = sizeof(name), dlen = sizeof(desc), nc = -1, np = -1, ns = -1, ne = -1;
        M_OK(MPI_T_category_get_info(c, name, &nlen, desc, &dlen, &nc, &np, &ns));
        M_OK(MPI_T_category_get_num_events(c, &ne));
        M_CHECK(dlen == (int)strlen(desc) + 1, "category %s: desc_len %d", name, dlen);
        int back = -1;
        M_OK(MPI_T_category_get_index(name, &back));
        M_CHECK(back == c, "category %s: get_index %d, not %d", name, back, c);
        check_strings("category", c, cat_name);
        int idx[256];
        M_OK(MPI_T_category_get_cvars(c, 256, idx));
        for (int k = 0; k < nc && k < 256; k++)
            if (idx[k] >= 0 && idx[k] < ncvars)
                cseen[idx[k]]++;
        M_OK(MPI_T_category_get_pvars(c, 256, idx));
        for (int k = 0; k < np && k < 256; k++)
            if (idx[k] >= 0 && idx[k] < npvars)
                pseen[idx[k]]++;
        M_OK(MPI_T_category_get_events(c, 256, idx));
        for (int k = 0; k < ne && k < 256; k++)
            if (idx[k] >= 0 && idx[k] < nevents)
                eseen[idx[k]]++;
        M_OK(MPI_T_category_get_categories(c, 256, idx));
        for (int k = 0; k < ns && k < 256; k++)
            M_CHECK(idx[k] > 0 && idx[k] < ncats && idx[k] != c, "category %s: subcategory %d",
                    name, idx[k]);
        subs += ns;
        /* len smaller than the count: only len indices written */
        if (nc > 1) {
            int two[2] = {-7, -7};
            M_OK(MPI_T_category_get_cvars(c, 1, two));
            M_CHECK(two[0] >= 0 && two[1] == -7, "category %s: len 1 wrote %d %d", name, two[0],
                    two[1]);
        }
    }
    M_CHECK(subs == ncats - 1, "%d subcategories among %d categories", subs, ncats);
    for (int i = 0; i < ncvars; i++)
        M_CHECK(cseen[i] == 1, "cvar %d is in %d categories", i, cseen[i]);
    for (int i = 0; i < npvars; i++)
        M_CHECK(pseen[i] == 1, "pvar %d is in %d categories", i, pseen[i]);
    for (int i = 0; i < nevents; i++)
        M_CHECK(eseen[i] == 1, "event %d is in %d categories", i, eseen[i]);
    free(cseen);
    free(pseen);
    free(eseen);
    int a = -1, b = -2, c = -1;
    M_OK(MPI_T_category_changed(&a));
    M_OK(MPI_T_category_changed(&b));
    M_CHECK(a == b, "categories changed from %d to %d with nothing done", a, b);
    M_OK(MPI_T_category_get_index("tandem_p2p", &c));
    M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("tandem_nothing", &c));
}

static void check_events(void) {
    M_OK(MPI_T_event_get_num(&nevents));
    M_CHECK(nevents >= 5, "only %d events", nevents);
    for (int i = 0; i < nevents; i++) {
        char name[128], desc[1024];
        int nlen = sizeof(name), dlen = sizeof(desc), verb, bind, n = 0;
        MPI_T_enum e;
        MPI_Info info;
        M_OK(MPI_T_event_get_info(i, name, &nlen, &verb, NULL, NULL, &n, &e, &info, desc, &dlen,
                                  &bind));
        M_CHECK(n > 0 && n <= 8, "event %s: %d elements", name, n);
        MPI_Datatype types[8];
        MPI_Aint displs[8];
        int m = 8;
        M_OK(MPI_T_event_get_info(i, NULL, NULL, &verb, types, displs, &m, NULL, NULL, NULL, NULL,
                                  &bind));
        M_CHECK(m == n, "event %s: %d elements, then %d", name, n, m);
        for (int k = 0; k < m && k < 8; k++) {
            M_CHECK(types[k] == MPI_INT || types[k] == MPI_UNSIGNED_LONG_LONG,
                    "event %s: element %d of %#x", name, k, (unsigned)types[k]);
            int size = types[k] == MPI_INT ? 4 : 8;
            M_CHECK(displs[k] % size == 0 && (k == 0 || displs[k] >= displs[k - 1] + 4),
                    "event %s: element %d at %ld", name, k, (long)displs[k]);
        }
        M_CHECK(!strncmp(name, "tandem_", 7) && is_verbosity(verb) && bind == MPI_T_BIND_NO_OBJECT,
                "event %d: '%s' verbosity %d bind %d", i, name, verb, bind);
        M_CHECK(dlen == (int)strlen(desc) + 1 && dlen < 1024, "event %s: desc_len %d", name, dlen);
        if (e != MPI_T_ENUM_NULL)
            check_enum(e, name);
        int back = -1;
        M_OK(MPI_T_event_get_index(name, &back));
        M_CHECK(back == i, "event %s: get_index %d", name, back);
        check_strings("event", i, event_name);
    }
    int idx;
    M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index("tandem_nothing", &idx));
    int nsrc = 0;
    M_OK(MPI_T_source_get_num(&nsrc));
    M_CHECK(nsrc == 1, "%d sources", nsrc);
    char sname[64];
    int slen = sizeof(sname);
    MPI_T_source_order order;
    MPI_Count tps = 0, maxt = 0, t1 = 0, t2 = 0;
    MPI_Info info;
    M_OK(MPI_T_source_get_info(0, sname, &slen, NULL, NULL, &order, &tps, &maxt, &info));
    M_CHECK(!strcmp(sname, "tandem_clock") && order == MPI_T_SOURCE_ORDERED && tps == 1000000000 &&
                maxt > 0,
            "source '%s' order %d ticks %lld max %lld", sname, (int)order, (long long)tps,
            (long long)maxt);
    M_OK(MPI_T_source_get_timestamp(0, &t1));
    M_OK(MPI_T_source_get_timestamp(0, &t2));
    M_CHECK(t1 > 0 && t2 >= t1, "timestamps %lld then %lld", (long long)t1, (long long)t2);
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_source_get_timestamp(1, &t1));
}

/* What tools rely on finding, by name. */
static void check_names(void) {
    static const char *const cvars[] = {"TANDEM_EAGER_LIMIT", "TANDEM_RNDV_PROTOCOL",
                                        "TANDEM_BCAST_ALGORITHM", "TANDEM_LOG"};
    for (size_t i = 0; i < sizeof(cvars) / sizeof(cvars[0]); i++)
        m_cvar(cvars[i]);
    static const struct {
        const char *name;
        int cls;
    } pvars[] = {
        {"tandem_eager_short_msgs", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_eager_long_bytes", MPI_T_PVAR_CLASS_AGGREGATE},
        {"tandem_rndv_pipeline_msgs", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_rndv_rget_msgs", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_rndv_rput_bytes", MPI_T_PVAR_CLASS_AGGREGATE},
        {"tandem_rndv_coop_msgs", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_rndv_rtr_msgs", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_cma_fallbacks", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_adapt_exchange_looks", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_adapt_oneway_pipeline", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_posted_recvq_length", MPI_T_PVAR_CLASS_LEVEL},
        {"tandem_posted_recvq_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK},
        {"tandem_unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL},
        {"tandem_unexpected_recvq_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK},
        {"tandem_unexpected_recvq_lwm", MPI_T_PVAR_CLASS_LOWWATERMARK},
        {"tandem_unexpected_recvq_bytes", MPI_T_PVAR_CLASS_LEVEL},
        {"tandem_match_time", MPI_T_PVAR_CLASS_TIMER},
        {"tandem_ring_full_stalls", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_ring_bytes", MPI_T_PVAR_CLASS_SIZE},
        {"tandem_coll_bcast_binomial", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_coll_allreduce_ring_bytes", MPI_T_PVAR_CLASS_AGGREGATE},
        {"tandem_coll_tmp_cache_use", MPI_T_PVAR_CLASS_PERCENTAGE},
        {"tandem_comm_p2p_sent_msgs", MPI_T_PVAR_CLASS_COUNTER},
        {"tandem_library_state", MPI_T_PVAR_CLASS_STATE},
        {"tandem_clock_ns", MPI_T_PVAR_CLASS_GENERIC},
    };
    for (size_t i = 0; i < sizeof(pvars) / sizeof(pvars[0]); i++)
        m_pvar(pvars[i].name, pvars[i].cls);
    static const char *const events[] = {"tandem_unexp_enqueued", "tandem_unexp_dequeued",
                                         "tandem_rndv_protocol", "tandem_adapt_changed",
                                         "tandem_cma_off"};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        int e = -1;
        M_OK(MPI_T_event_get_index(events[i], &e));
    }
}

static int library_state(void) {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count, state = -1;
    M_OK(MPI_T_pvar_session_create(&s));
    M_OK(MPI_T_pvar_handle_alloc(s, m_pvar("tandem_library_state", MPI_T_PVAR_CLASS_STATE), NULL,
                                 &h, &count));
    M_OK(MPI_T_pvar_read(s, h, &state));
    M_OK(MPI_T_pvar_session_free(&s));
    return state;
}

int main(int argc, char **argv) {
    int provided = -1;
    /* before MPI_Init: everything is there already */
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    M_CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    M_CHECK(library_state() == 0, "library state %d before MPI_Init", library_state());
    check_cvars();
    check_pvars();
    check_events();
    check_categories();
    check_names();

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    M_CHECK(library_state() == 1, "library state %d after MPI_Init", library_state());
    int again = 0;
    M_OK(MPI_T_cvar_get_num(&again));
    M_CHECK(again == ncvars, "%d control variables, then %d", ncvars, again);
    M_OK(MPI_T_pvar_get_num(&again));
    M_CHECK(again == npvars, "%d performance variables, then %d", npvars, again);
    check_categories();

    /* nested: the interface stays until the last MPI_T_finalize */
    M_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    M_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d",
            provided);
    M_OK(MPI_T_finalize());
    M_OK(MPI_T_cvar_get_num(&again));
    int errs = m_finish();
    MPI_Finalize();
    M_CHECK(library_state() == 2, "library state %d after MPI_Finalize", library_state());
    M_OK(MPI_T_finalize());
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&again));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
