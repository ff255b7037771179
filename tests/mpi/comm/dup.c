/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_dup, dup_with_info, idup: same group, new context (messages on the
 * duplicate never match receives on the parent), names not copied, error
 * handler inherited, communicators of the same group congruent. */
#include "tutil.h"

/* Messages sent on a and b with the same tag, received on b first: each must
 * arrive on its own communicator. */
static void check_isolation(MPI_Comm a, MPI_Comm b, const char *what) {
    int rank, size;
    MPI_Comm_rank(a, &rank);
    MPI_Comm_size(a, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int va = 1000 + rank, vb = 2000 + rank, ra = -1, rb = -1;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Send(&va, 1, MPI_INT, to, 5, a);
    MPI_Send(&vb, 1, MPI_INT, to, 5, b);
    MPI_Irecv(&rb, 1, MPI_INT, from, 5, b, &rq[0]);
    MPI_Irecv(&ra, 1, MPI_INT, from, 5, a, &rq[1]);
    MPI_Waitall(2, rq, st);
    T_CHECK(ra == 1000 + from && rb == 2000 + from, "%s: got %d on a and %d on b (expected %d, %d)",
            what, ra, rb, 1000 + from, 2000 + from);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    wrank = t_rank;

    MPI_Comm d1, d2, d3;
    T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
    int r, s, res;
    MPI_Comm_rank(d1, &r);
    MPI_Comm_size(d1, &s);
    T_CHECK(r == wrank && s == wsize, "dup of world: rank %d size %d", r, s);
    MPI_Comm_compare(MPI_COMM_WORLD, d1, &res);
    T_CHECK(res == MPI_CONGRUENT, "compare(world, dup) = %d", res);
    MPI_Comm_compare(d1, d1, &res);
    T_CHECK(res == MPI_IDENT, "compare(dup, dup) = %d", res);
    check_isolation(MPI_COMM_WORLD, d1, "world/dup");

    /* a dup of a dup, and the two dups between themselves */
    T_OK(MPI_Comm_dup(d1, &d2));
    check_isolation(d1, d2, "dup/dup2");
    check_isolation(MPI_COMM_WORLD, d2, "world/dup2");

    /* names: world has its name, a dup has none (names are not copied) */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    T_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
    MPI_Comm_get_name(d1, name, &len);
    T_CHECK(len == 0 && name[0] == 0, "dup name '%s'", name);

    /* error handler inherited */
    MPI_Comm_set_errhandler(d1, MPI_ERRORS_RETURN);
    T_OK(MPI_Comm_dup(d1, &d3));
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(d3, &eh);
    T_CHECK(eh == MPI_ERRORS_RETURN, "errhandler of a dup %#x", (unsigned)eh);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&d3);

    /* dup_with_info: the new hints, not the parent's */
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tandem_test_hint", "42");
    T_OK(MPI_Comm_set_info(d1, info));
    T_OK(MPI_Comm_dup(d1, &d3));
    MPI_Comm_get_info(d3, &used);
    char v[64];
    int flag;
    MPI_Info_get(used, "tandem_test_hint", 63, v, &flag);
    T_CHECK(flag && strcmp(v, "42") == 0, "dup keeps the parent's hints (flag %d)", flag);
    MPI_Info_free(&used);
    MPI_Comm_free(&d3);
    MPI_Info_set(info, "tandem_test_hint", "43");
    T_OK(MPI_Comm_dup_with_info(d1, info, &d3));
    MPI_Comm_get_info(d3, &used);
    MPI_Info_get(used, "tandem_test_hint", 63, v, &flag);
    T_CHECK(flag && strcmp(v, "43") == 0, "dup_with_info hints (flag %d, '%s')", flag, v);
    MPI_Info_free(&used);
    check_isolation(d1, d3, "dup/dup_with_info");
    MPI_Comm_free(&d3);
    T_OK(MPI_Comm_dup_with_info(d1, MPI_INFO_NULL, &d3));
    MPI_Comm_get_info(d3, &used);
    MPI_Info_get(used, "tandem_test_hint", 63, v, &flag);
    T_CHECK(!flag, "dup_with_info(MPI_INFO_NULL) has no hints");
    MPI_Info_free(&used);
    MPI_Comm_free(&d3);
    MPI_Info_free(&info);

    /* idup: usable after completion */
    MPI_Request req;
    T_OK(MPI_Comm_idup(d2, &d3, &req));
    T_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    T_CHECK(req == MPI_REQUEST_NULL, "request not freed by wait");
    MPI_Comm_compare(d2, d3, &res);
    T_CHECK(res == MPI_CONGRUENT, "compare(dup, idup) = %d", res);
    check_isolation(d2, d3, "dup/idup");
    MPI_Comm_free(&d3);

    /* dups of MPI_COMM_SELF */
    MPI_Comm s1, s2;
    T_OK(MPI_Comm_dup(MPI_COMM_SELF, &s1));
    T_OK(MPI_Comm_dup(s1, &s2));
    MPI_Comm_size(s2, &s);
    MPI_Comm_rank(s2, &r);
    T_CHECK(s == 1 && r == 0, "dup of self: rank %d size %d", r, s);
    MPI_Comm_compare(MPI_COMM_SELF, s2, &res);
    T_CHECK(res == MPI_CONGRUENT, "compare(self, dup of self) = %d", res);
    check_isolation(s1, s2, "self dups");
    check_isolation(MPI_COMM_SELF, s1, "self/self dup");
    MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res);
    T_CHECK(res == (wsize == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(self, world) = %d", res);
    MPI_Comm_free(&s2);
    MPI_Comm_free(&s1);
    T_CHECK(s1 == MPI_COMM_NULL, "freed handle not MPI_COMM_NULL");

    int inter;
    MPI_Comm_test_inter(d1, &inter);
    T_CHECK(!inter, "test_inter on an intracommunicator");

    MPI_Comm_free(&d2);
    MPI_Comm_free(&d1);
    return t_finish();
}
