/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduction operation bindings: user ops and MPI_Reduce_local. */
#include "bind.h"

#include "../coll/coll.h"

static int op_create(void *fn, int commute, MPI_Op *op, int large, const char *name) {
    TDM_CHECK_INIT(name);
    if (!fn)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, name, "user function is NULL");
    if (!op)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, name, "op argument is NULL");
    tdm_op_t *o = tdm_op_create(fn, commute, large);
    if (!o)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, name, "out of memory for a new op");
    *op = (MPI_Op)o->handle;
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    return op_create((void *)user_fn, commute, op, 0, "MPI_Op_create");
}
TDM_WEAK(MPI_Op_create)

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op) {
    return op_create((void *)user_fn, commute, op, 1, "MPI_Op_create_c");
}
TDM_WEAK(MPI_Op_create_c)

int PMPI_Op_free(MPI_Op *op) {
    TDM_CHECK_INIT("MPI_Op_free");
    if (!op)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Op_free", "op argument is NULL");
    tdm_op_t *o = tdm_op_get(*op);
    if (!o)
        return tdm_mpi_err(NULL, MPI_ERR_OP, "MPI_Op_free", "invalid op (handle %#x)",
                           (unsigned)*op);
    if (o->predefined)
        return tdm_mpi_err(NULL, MPI_ERR_OP, "MPI_Op_free", "cannot free predefined op %s",
                           tdm_op_name(o));
    tdm_op_free(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute) {
    TDM_CHECK_INIT("MPI_Op_commutative");
    tdm_op_t *o = tdm_op_get(op);
    if (!o)
        return tdm_mpi_err(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid op (handle %#x)",
                           (unsigned)op);
    if (!commute)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Op_commutative", "commute argument is NULL");
    *commute = o->commute;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Op_commutative)

static int reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op, const char *fn) {
    TDM_CHECK_INIT(fn);
    if (count < 0)
        return tdm_mpi_err(NULL, MPI_ERR_COUNT, fn, "invalid count argument: count=%lld",
                           (long long)count);
    tdm_dtype_t *dt;
    TDM_GET_DTYPE(fn, NULL, datatype, dt);
    tdm_op_t *o = tdm_op_get(op);
    if (!o)
        return tdm_mpi_err(NULL, MPI_ERR_OP, fn, "invalid op (handle %#x)", (unsigned)op);
    if (!tdm_op_valid_for(o, dt))
        return tdm_mpi_err(NULL, MPI_ERR_OP, fn, "op %s is not defined on datatype %s",
                           tdm_op_name(o), tdm_dtype_name(dt));
    if (count > 0 && dt->size > 0 && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE))
        return tdm_mpi_err(NULL, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
    TDM_CHECK_BUF(fn, NULL, inbuf, count, dt);
    TDM_CHECK_BUF(fn, NULL, inoutbuf, count, dt);
    tdm_op_apply(o, inbuf, inoutbuf, (size_t)count, dt);
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}
TDM_WEAK(MPI_Reduce_local)

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op) {
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
TDM_WEAK(MPI_Reduce_local_c)
