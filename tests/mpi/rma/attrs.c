/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a window says about itself, for every window kind: the predefined
 * attributes (MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR, MODEL = MPI_WIN_UNIFIED),
 * Win_get_group (the communicator's group), names (empty by default, set and read
 * back), info (Win_get_info at creation and after Win_set_info; on Tandem the
 * accumulate_ordering, accumulate_ops and alloc_shared_noncontig hints it honours
 * must be reported back), user attributes (a keyval's delete function runs on
 * Win_delete_attr, on replacement and at Win_free), error handlers (a handler made
 * by Win_create_errhandler gets the window and the error of a bad call on it, not
 * the communicator's handler; Win_get_errhandler, Win_call_errhandler), and the
 * large-count (_c) forms of creation, shared_query and every operation (MPI 4 only:
 * Open MPI 4.1 has none).
 */
#include "rmatest.h"

static int win_handler_calls, win_handler_class, comm_handler_calls;
static MPI_Win win_handler_win;

static void win_handler(MPI_Win *w, int *code, ...) {
    win_handler_calls++;
    win_handler_win = *w;
    MPI_Error_class(*code, &win_handler_class);
}

static void comm_handler(MPI_Comm *c, int *code, ...) {
    (void)c;
    (void)code;
    comm_handler_calls++;
}

static int deletes;
static int count_delete(MPI_Win w, int keyval, void *val, void *extra) {
    (void)w;
    (void)keyval;
    (void)val;
    (*(int *)extra)++;
    return MPI_SUCCESS;
}

static void info_expect(MPI_Info info, const char *key, const char *want) {
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && !strcmp(val, want), "info %s: %s '%s', expected '%s'", key,
          flag ? "is" : "missing", val, want);
}

static void one_kind(int kind) {
    static const int flavors[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                  MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_SHARED,
                                  MPI_WIN_FLAVOR_DYNAMIC};
    const MPI_Aint bytes = 96 + 8 * rank; /* differs per rank */
    rt_win_t W;
    rt_win_make(kind, bytes, 4, MPI_COMM_WORLD, &W);
    const char *kname = rt_kind_names[kind];

    /* ---- predefined attributes ---- */
    void *base = NULL;
    MPI_Aint *psize = NULL;
    int *pdisp = NULL, *pflavor = NULL, *pmodel = NULL, flag = 0;
    OK(MPI_Win_get_attr(W.win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag, "%s: MPI_WIN_BASE not set", kname);
    if (kind == K_DYNAMIC)
        CHECK(base == MPI_BOTTOM, "%s: MPI_WIN_BASE %p, expected MPI_BOTTOM", kname, base);
    else
        CHECK(base == W.base, "%s: MPI_WIN_BASE %p, expected %p", kname, base, (void *)W.base);
    OK(MPI_Win_get_attr(W.win, MPI_WIN_SIZE, &psize, &flag));
    CHECK(flag && psize && *psize == (kind == K_DYNAMIC ? 0 : bytes),
          "%s: MPI_WIN_SIZE %ld, expected %ld", kname, psize ? (long)*psize : -1L,
          kind == K_DYNAMIC ? 0L : (long)bytes);
    OK(MPI_Win_get_attr(W.win, MPI_WIN_DISP_UNIT, &pdisp, &flag));
    CHECK(flag && pdisp && *pdisp == (kind == K_DYNAMIC ? 1 : 4), "%s: MPI_WIN_DISP_UNIT %d", kname,
          pdisp ? *pdisp : -1);
    OK(MPI_Win_get_attr(W.win, MPI_WIN_CREATE_FLAVOR, &pflavor, &flag));
    CHECK(flag && pflavor && *pflavor == flavors[kind], "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d",
          kname, pflavor ? *pflavor : -1, flavors[kind]);
    OK(MPI_Win_get_attr(W.win, MPI_WIN_MODEL, &pmodel, &flag));
    CHECK(flag && pmodel && *pmodel == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL %d, expected unified",
          kname, pmodel ? *pmodel : -1);

    /* ---- group ---- */
    MPI_Group wg, cg;
    int cmp = -1;
    OK(MPI_Win_get_group(W.win, &wg));
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    CHECK(cmp == MPI_IDENT, "%s: the window's group compares %d to the communicator's", kname, cmp);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    /* ---- names ---- */
    char name[MPI_MAX_OBJECT_NAME], want[MPI_MAX_OBJECT_NAME];
    int len = -1;
    OK(MPI_Win_get_name(W.win, name, &len));
    CHECK(len == 0 && name[0] == 0, "%s: a new window is named '%s'", kname, name);
    snprintf(want, sizeof(want), "rma window %s on rank %d", kname, rank);
    OK(MPI_Win_set_name(W.win, want));
    OK(MPI_Win_get_name(W.win, name, &len));
    CHECK(!strcmp(name, want) && len == (int)strlen(want), "%s: name '%s' (%d)", kname, name, len);
    memset(want, 'n', sizeof(want));
    want[MPI_MAX_OBJECT_NAME - 1] = 0;
    OK(MPI_Win_set_name(W.win, want));
    OK(MPI_Win_get_name(W.win, name, &len));
    CHECK(!strcmp(name, want), "%s: the longest name did not come back", kname);

    /* ---- info ---- */
    MPI_Info info = MPI_INFO_NULL, set;
    OK(MPI_Win_get_info(W.win, &info));
    CHECK(info != MPI_INFO_NULL, "%s: MPI_Win_get_info gave MPI_INFO_NULL", kname);
    if (info != MPI_INFO_NULL) {
        if (on_tandem && kind == K_SHARED_NONCONTIG)
            info_expect(info, "alloc_shared_noncontig", "true");
        MPI_Info_free(&info);
    }
    MPI_Info_create(&set);
    MPI_Info_set(set, "accumulate_ordering", "none");
    MPI_Info_set(set, "accumulate_ops", "same_op");
    OK(MPI_Win_set_info(W.win, set));
    MPI_Info_free(&set);
    OK(MPI_Win_get_info(W.win, &info));
    if (info != MPI_INFO_NULL) {
        if (on_tandem) {
            info_expect(info, "accumulate_ordering", "none");
            info_expect(info, "accumulate_ops", "same_op");
        }
        MPI_Info_free(&info);
    }

    /* ---- user attributes ---- */
    int key = MPI_KEYVAL_INVALID, payload = 42, *got = NULL;
    deletes = 0;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &deletes));
    OK(MPI_Win_get_attr(W.win, key, &got, &flag));
    CHECK(!flag, "%s: an attribute never set was found", kname);
    OK(MPI_Win_set_attr(W.win, key, &payload));
    OK(MPI_Win_get_attr(W.win, key, &got, &flag));
    CHECK(flag && got == &payload, "%s: attribute %p, expected %p", kname, (void *)got,
          (void *)&payload);
    OK(MPI_Win_delete_attr(W.win, key));
    CHECK(deletes == 1, "%s: %d delete calls after MPI_Win_delete_attr", kname, deletes);
    OK(MPI_Win_set_attr(W.win, key, &payload));
    OK(MPI_Win_set_attr(W.win, key, &payload)); /* replaces: deletes the old value */
    CHECK(deletes == 2, "%s: %d delete calls after a replacement", kname, deletes);

    /* ---- error handlers ---- */
    MPI_Errhandler eh, ch, got_eh;
    OK(MPI_Win_create_errhandler(win_handler, &eh));
    OK(MPI_Win_set_errhandler(W.win, eh));
    OK(MPI_Comm_create_errhandler(comm_handler, &ch));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, ch));
    OK(MPI_Win_get_errhandler(W.win, &got_eh));
    CHECK(got_eh == eh, "%s: MPI_Win_get_errhandler gave another handler", kname);
    MPI_Errhandler_free(&got_eh);
    win_handler_calls = comm_handler_calls = 0;
    win_handler_class = -1;
    long long x = 1;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, W.win));
    int rc = MPI_Put(&x, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, W.win); /* bad rank */
    OK(MPI_Win_unlock(rank, W.win));
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "%s: a Put to rank %d returned class %d", kname, size, cls);
    CHECK(win_handler_calls == 1 && win_handler_win == W.win && win_handler_class == MPI_ERR_RANK,
          "%s: the window's handler ran %d times (class %d)", kname, win_handler_calls,
          win_handler_class);
    OK(MPI_Win_call_errhandler(W.win, MPI_ERR_OTHER));
    CHECK(win_handler_calls == 2 && win_handler_class == MPI_ERR_OTHER,
          "%s: MPI_Win_call_errhandler: %d calls, class %d", kname, win_handler_calls,
          win_handler_class);
    CHECK(comm_handler_calls == 0, "%s: the communicator's handler ran for a window error", kname);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&ch);
    MPI_Win_set_errhandler(W.win, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    MPI_Barrier(MPI_COMM_WORLD);
    rt_win_free(&W);
    CHECK(deletes == 3, "%s: %d delete calls after MPI_Win_free", kname, deletes);
    OK(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");
}

#if MPI_VERSION >= 4
/* The _c forms: MPI_Aint displacement units, MPI_Count counts. */
static void large_count_forms(void) {
    int peer = (rank + 1) % size, src = (rank + size - 1) % size;
    long long *base = NULL, *sbase = NULL;
    MPI_Win w, sw;
    OK(MPI_Win_allocate_c(64 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w));
    OK(MPI_Win_allocate_shared_c(16 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &sbase, &sw));
    MPI_Aint qsize = -1, qdisp = -1;
    long long *qbase = NULL;
    OK(MPI_Win_shared_query_c(sw, peer, &qsize, &qdisp, &qbase));
    CHECK(qsize == 16 * 8 && qdisp == 8 && qbase != NULL, "MPI_Win_shared_query_c: %ld %ld %p",
          (long)qsize, (long)qdisp, (void *)qbase);
    OK(MPI_Win_free(&sw));
    long long cbuf[8];
    MPI_Win cw;
    OK(MPI_Win_create_c(cbuf, sizeof(cbuf), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &cw));
    OK(MPI_Win_free(&cw));

    for (int i = 0; i < 64; i++)
        base[i] = 0;
    long long out[8], got[8] = {0}, fetched[8] = {0}, rg[8] = {0}, rf[8] = {0}, ones[8];
    for (int i = 0; i < 8; i++)
        out[i] = rank * 10 + i, ones[i] = 1;
    MPI_Request rq[4];
    OK(MPI_Win_fence(0, w));
    OK(MPI_Put_c(out, 8, MPI_LONG_LONG, peer, 0, 8, MPI_LONG_LONG, w));
    OK(MPI_Accumulate_c(ones, 8, MPI_LONG_LONG, peer, 8, 8, MPI_LONG_LONG, MPI_SUM, w));
    OK(MPI_Win_fence(0, w));
    OK(MPI_Get_c(got, 8, MPI_LONG_LONG, peer, 0, 8, MPI_LONG_LONG, w));
    OK(MPI_Get_accumulate_c(ones, 8, MPI_LONG_LONG, fetched, 8, MPI_LONG_LONG, peer, 8, 8,
                            MPI_LONG_LONG, MPI_SUM, w));
    OK(MPI_Win_fence(0, w));
    OK(MPI_Win_lock_all(0, w));
    OK(MPI_Rput_c(out, 8, MPI_LONG_LONG, peer, 16, 8, MPI_LONG_LONG, w, &rq[0]));
    OK(MPI_Raccumulate_c(ones, 8, MPI_LONG_LONG, peer, 24, 8, MPI_LONG_LONG, MPI_SUM, w, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    OK(MPI_Win_flush_all(w));
    OK(MPI_Rget_c(rg, 8, MPI_LONG_LONG, peer, 16, 8, MPI_LONG_LONG, w, &rq[2]));
    OK(MPI_Rget_accumulate_c(ones, 8, MPI_LONG_LONG, rf, 8, MPI_LONG_LONG, peer, 24, 8,
                             MPI_LONG_LONG, MPI_SUM, w, &rq[3]));
    OK(MPI_Waitall(2, rq + 2, MPI_STATUSES_IGNORE));
    OK(MPI_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w));
    for (int i = 0; i < 8; i++) {
        CHECK(got[i] == rank * 10 + i, "MPI_Get_c: %lld", got[i]);
        CHECK(fetched[i] == 1, "MPI_Get_accumulate_c fetched %lld", fetched[i]);
        CHECK(rg[i] == rank * 10 + i, "MPI_Rget_c: %lld", rg[i]);
        CHECK(rf[i] == 1, "MPI_Rget_accumulate_c fetched %lld", rf[i]);
        CHECK(base[i] == src * 10 + i && base[16 + i] == src * 10 + i,
              "MPI_Put_c / MPI_Rput_c: %lld %lld", base[i], base[16 + i]);
        CHECK(base[8 + i] == 2 && base[24 + i] == 2,
              "MPI_Accumulate_c / MPI_Raccumulate_c: %lld %lld", base[8 + i], base[24 + i]);
    }
    OK(MPI_Win_unlock(rank, w));
    OK(MPI_Win_free(&w));
}
#endif

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    for (int k = 0; k < K_NKINDS; k++)
        one_kind(k);
#if MPI_VERSION >= 4
    large_count_forms();
#endif
    return rt_finish();
}
