/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input to MPI_T gets the MPI_T_ERR_* class MPI-4.1 names, never a crash
 * and never an error handler (the default one is fatal): calls before
 * MPI_T_init_thread and after the last MPI_T_finalize, invalid indices and
 * names, handles that are stale, bogus or of another session, writes to
 * constant, read-at-init and read-only variables, values outside a variable's
 * range or enumeration, a bound variable without its object.
 */
#include "mtest.h"

static int dummy;

static void not_initialized(void) {
    int n;
    MPI_T_pvar_session s;
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_get_num(&n));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_session_create(&s));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_get_num(&n));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_event_get_num(&n));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_source_get_num(&n));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_index("TANDEM_LOG", &n));
    M_RC(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
}

static void indices_and_names(void) {
    int ncv, npv, ncat, nev, i;
    M_OK(MPI_T_cvar_get_num(&ncv));
    M_OK(MPI_T_pvar_get_num(&npv));
    M_OK(MPI_T_category_get_num(&ncat));
    M_OK(MPI_T_event_get_num(&nev));
    char name[64];
    int len = sizeof(name);
    M_RC(MPI_T_ERR_INVALID_INDEX,
         MPI_T_cvar_get_info(ncv, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_INDEX,
         MPI_T_cvar_get_info(-1, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_pvar_get_info(npv, name, &len, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, NULL, NULL, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_INDEX,
         MPI_T_category_get_info(ncat, name, &len, NULL, NULL, NULL, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_num_events(-1, &i));
    int idx[4];
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_cvars(ncat, 4, idx));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_pvars(-3, 4, idx));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_events(ncat, 4, idx));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_categories(ncat, 4, idx));
    M_RC(MPI_T_ERR_INVALID, MPI_T_category_get_cvars(0, -1, idx));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_event_get_info(nev, name, &len, NULL, NULL, NULL, NULL,
                                                       NULL, NULL, NULL, NULL, NULL));
    MPI_T_source_order o;
    MPI_Count t;
    M_RC(MPI_T_ERR_INVALID_INDEX,
         MPI_T_source_get_info(1, name, &len, NULL, NULL, &o, &t, &t, NULL));
    M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("TANDEM_NO_SUCH", &i));
    M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("EAGER_LIMIT", &i));
    M_RC(MPI_T_ERR_INVALID_NAME,
         MPI_T_pvar_get_index("tandem_no_such", MPI_T_PVAR_CLASS_COUNTER, &i));
    M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("no_such", &i));
    M_RC(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index("no_such", &i));
    M_RC(MPI_T_ERR_INVALID, MPI_T_cvar_get_num(NULL));
    M_RC(MPI_T_ERR_INVALID, MPI_T_cvar_get_index(NULL, &i));
    /* enumerations: a bogus one, an item out of range */
    int n, v;
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_info((MPI_T_enum)&dummy, &n, name, &len));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &v, name, &len));
}

static void cvars(int before_init) {
    MPI_T_cvar_handle h, stale;
    int count, v;
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_handle_alloc(-1, NULL, &h, &count));
    M_OK(MPI_T_cvar_handle_alloc(m_cvar("TANDEM_LOG"), NULL, &stale, &count));
    h = stale;
    M_OK(MPI_T_cvar_handle_free(&h));
    char buf[256];
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(stale, buf));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_write(stale, "warn"));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read((MPI_T_cvar_handle)&dummy, buf));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_handle_free(&stale));
    /* set by mpirun: never */
    m_cvar_write_int("TANDEM_RANK", 0, MPI_T_ERR_CVAR_SET_NEVER);
    m_cvar_write_int("TANDEM_OVERSUBSCRIBED", 0, MPI_T_ERR_CVAR_SET_NEVER);
    /* read at MPI_Init: before it only; a value outside its range never */
    if (before_init) {
        m_cvar_write_int("TANDEM_SHM_CELLS", 48, MPI_T_ERR_INVALID);
        m_cvar_write_int("TANDEM_SHM_CELLS", 64, MPI_SUCCESS); /* every rank alike */
    } else {
        m_cvar_write_int("TANDEM_SHM_CELLS", 64, MPI_T_ERR_CVAR_SET_NOT_NOW);
        m_cvar_write_int("TANDEM_RNDV_PROTOCOL", 1, MPI_T_ERR_CVAR_SET_NOT_NOW);
    }
    /* run-time ones: their range and words hold; a refused value leaves the old one */
    unsigned long long old = m_cvar_read_ull("TANDEM_EAGER_LIMIT");
    m_cvar_write_ull("TANDEM_EAGER_LIMIT", 524289ull, MPI_T_ERR_INVALID);
    m_cvar_write_ull("TANDEM_EAGER_LIMIT", ~0ull, MPI_T_ERR_INVALID);
    M_CHECK(m_cvar_read_ull("TANDEM_EAGER_LIMIT") == old, "eager limit %llu after refusals",
            m_cvar_read_ull("TANDEM_EAGER_LIMIT"));
    m_cvar_write_int("TANDEM_BCAST_ALGORITHM", 4, MPI_T_ERR_INVALID);
    m_cvar_write_int("TANDEM_BCAST_ALGORITHM", -1, MPI_T_ERR_INVALID);
    M_CHECK(m_cvar_read_int("TANDEM_BCAST_ALGORITHM") == 0, "bcast algorithm %d",
            m_cvar_read_int("TANDEM_BCAST_ALGORITHM"));
    m_cvar_write_int("TANDEM_PROTO_STATS", 2, MPI_T_ERR_INVALID);
    m_cvar_write_int("TANDEM_COOP_LOAD_MARGIN", 0, MPI_T_ERR_INVALID);
    MPI_T_cvar_handle lh;
    M_OK(MPI_T_cvar_handle_alloc(m_cvar("TANDEM_LOG"), NULL, &lh, &count));
    M_RC(MPI_T_ERR_INVALID, MPI_T_cvar_write(lh, NULL));
    M_RC(MPI_T_ERR_INVALID, MPI_T_cvar_read(lh, NULL));
    M_OK(MPI_T_cvar_handle_free(&lh));
    (void)v;
}

static void pvars(int initialized) {
    MPI_T_pvar_session s1, s2, gone;
    MPI_T_pvar_handle h1, level, stale;
    int count;
    unsigned long long buf[16];
    M_OK(MPI_T_pvar_session_create(&s1));
    M_OK(MPI_T_pvar_session_create(&s2));
    M_OK(MPI_T_pvar_session_create(&gone));
    MPI_T_pvar_session g = gone;
    M_OK(MPI_T_pvar_session_free(&g));
    M_CHECK(g == MPI_T_PVAR_SESSION_NULL, "freed session not set to NULL");
    int counter = m_pvar("tandem_eager_msgs", MPI_T_PVAR_CLASS_COUNTER);
    int lvl = m_pvar("tandem_unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL);
    M_RC(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_handle_alloc(gone, counter, NULL, &h1, &count));
    M_RC(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&gone));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_pvar_handle_alloc(s1, -1, NULL, &h1, &count));
    M_OK(MPI_T_pvar_handle_alloc(s1, counter, NULL, &h1, &count));
    M_OK(MPI_T_pvar_handle_alloc(s1, lvl, NULL, &level, &count));
    /* a handle belongs to its session */
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_start(s2, h1));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s2, h1, buf));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_free(s2, &h1));
    M_RC(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_start(gone, h1));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s1, (MPI_T_pvar_handle)&dummy, buf));
    /* continuous and read-only: no start, stop, reset or write */
    M_RC(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s1, level));
    M_RC(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_stop(s1, level));
    M_RC(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_reset(s1, level));
    M_RC(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_readreset(s1, level, buf));
    M_RC(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s1, level, buf));
    /* every handle: start and stop leave the continuous ones out; reads name one */
    M_OK(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES));
    M_OK(MPI_T_pvar_stop(s1, MPI_T_PVAR_ALL_HANDLES));
    M_OK(MPI_T_pvar_reset(s1, MPI_T_PVAR_ALL_HANDLES));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, buf));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_write(s1, MPI_T_PVAR_ALL_HANDLES, buf));
    M_RC(MPI_T_ERR_INVALID, MPI_T_pvar_read(s1, h1, NULL));
    stale = h1;
    M_OK(MPI_T_pvar_handle_free(s1, &h1));
    M_CHECK(h1 == MPI_T_PVAR_HANDLE_NULL, "freed pvar handle not set to NULL");
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s1, stale, buf));
    /* bound to a communicator: needs one, and a valid one */
    int bound = m_pvar("tandem_comm_p2p_sent_msgs", MPI_T_PVAR_CLASS_COUNTER);
    MPI_Comm null = MPI_COMM_NULL, world = MPI_COMM_WORLD;
    MPI_T_pvar_handle hb;
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_alloc(s1, bound, NULL, &hb, &count));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_alloc(s1, bound, &null, &hb, &count));
    M_RC(initialized ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE,
         MPI_T_pvar_handle_alloc(s1, bound, &world, &hb, &count));
    M_OK(MPI_T_pvar_session_free(&s1));
    M_OK(MPI_T_pvar_session_free(&s2));
}

static void events(void) {
    MPI_T_event_registration r, stale;
    int nev;
    M_OK(MPI_T_event_get_num(&nev));
    M_RC(MPI_T_ERR_INVALID_INDEX, MPI_T_event_handle_alloc(nev, NULL, MPI_INFO_NULL, &r));
    M_RC(MPI_T_ERR_INVALID, MPI_T_event_handle_alloc(0, NULL, (MPI_Info)0x12345, &r));
    M_OK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &r));
    M_RC(MPI_T_ERR_INVALID,
         MPI_T_event_register_callback(r, (MPI_T_cb_safety)7, MPI_INFO_NULL, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID,
         MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL));
    MPI_Info used = MPI_INFO_NULL;
    M_OK(MPI_T_event_handle_get_info(r, &used));
    int nkeys = -1;
    M_OK(MPI_Info_get_nkeys(used, &nkeys));
    M_CHECK(nkeys == 0, "event handle info has %d keys", nkeys);
    M_OK(MPI_Info_free(&used));
    M_OK(MPI_T_event_handle_set_info(r, MPI_INFO_NULL));
    stale = r;
    M_OK(MPI_T_event_handle_free(r, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_free(stale, NULL, NULL));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_set_dropped_handler(stale, NULL));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_get_info(stale, &used));
    int elem;
    MPI_Count ts;
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_read((MPI_T_event_instance)&dummy, 0, &elem));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_get_timestamp((MPI_T_event_instance)&dummy, &ts));
    M_RC(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_get_source((MPI_T_event_instance)&dummy, &elem));
}

int main(int argc, char **argv) {
    int provided;
    not_initialized();
    M_RC(MPI_T_ERR_INVALID, MPI_T_init_thread(MPI_THREAD_SINGLE, NULL));
    M_RC(MPI_T_ERR_INVALID, MPI_T_init_thread(99, &provided));
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    indices_and_names();
    cvars(1);
    pvars(0);
    events();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    cvars(0);
    pvars(1);
    int errs = m_finish();
    MPI_Finalize();
    M_OK(MPI_T_finalize());
    not_initialized();
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
