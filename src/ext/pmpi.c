/* pmpi.c -- libspanscope_pmpi: MPI calls recorded as regions, through the
 * standard PMPI profiling interface (opt-in; docs/mpi.md).
 *
 * Link it before the MPI library (-lspanscope_pmpi -lspanscope), or
 * LD_PRELOAD=libspanscope_pmpi.so.  Each wrapped call becomes a region named
 * after the call ("MPI_Send", "MPI_Allreduce", ...) and is counted, with
 * the bytes it moved, by sps_mpi_count: the collective finalize writes the
 * counts as the file's /communication table.  Without an active session a
 * wrapper costs one branch and the call itself.
 *
 * Bytes, per call and rank: sends count*type size; receives the bytes of
 * the message received (MPI_Recv, MPI_Sendrecv; MPI_Get_count in MPI_BYTE,
 * so a message that is not a whole number of elements still counts) or,
 * for MPI_Irecv, of the posted buffer; a send to or receive from
 * MPI_PROC_NULL 0 (nothing moves); MPI_Bcast, MPI_Reduce, MPI_Allreduce,
 * MPI_Scan and MPI_Reduce_scatter_block count*type size (the message each
 * rank holds); MPI_Gather / MPI_Allgather the rank's send block;
 * MPI_Scatter the rank's receive block; MPI_Alltoall the rank's send
 * blocks (sendcount * size of the communicator, of the remote group on an
 * intercommunicator); waits and MPI_Barrier 0. */
#include <mpi.h>

#include "spanscope_mpi.h"

static sps_region_t rid(sps_region_t *slot, const char *name) {
    sps_region_t r = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (__builtin_expect(r == 0, 0)) {
        r = sps_region(name);
        __atomic_store_n(slot, r, __ATOMIC_RELAXED);
    }
    return r;
}

static uint64_t tbytes(long long count, MPI_Datatype t) {
    int s = 0;
    if (count <= 0 || t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &s) != MPI_SUCCESS)
        return 0;
    return (uint64_t)count * (uint64_t)(s > 0 ? s : 0);
}

/* Bytes received, counted in MPI_BYTE: counted in the receive type, a size
 * that is not a whole number of elements would be MPI_UNDEFINED. */
static uint64_t status_bytes(const MPI_Status *st) {
    int n = 0;
    if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return 0;
    return (uint64_t)n;
}

/* count*type size, or 0 with MPI_PROC_NULL as the peer (nothing moves). */
static uint64_t pbytes(int peer, long long count, MPI_Datatype t) {
    return peer == MPI_PROC_NULL ? 0 : tbytes(count, t);
}

/* BEGIN(name): the region of this wrapper, entered. END(bytes): left and
 * counted.  Both do nothing without a session (sps_begin's own check). */
#define BEGIN(name)                                                            \
    static sps_region_t slot_;                                                 \
    int on_ = __atomic_load_n(&sps__active, __ATOMIC_RELAXED) != 0;          \
    sps_region_t r_ = on_ ? rid(&slot_, name) : 0;                             \
    if (on_) sps_begin(r_)
#define END(bytes)                                                             \
    do {                                                                       \
        if (on_) {                                                             \
            sps_end(r_);                                                       \
            sps_mpi_count(r_, (bytes));                                        \
        }                                                                      \
    } while (0)

/* ---- point to point ---------------------------------------------------- */

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
             MPI_Comm comm) {
    BEGIN("MPI_Send");
    int rc = PMPI_Send(buf, count, dt, dest, tag, comm);
    END(pbytes(dest, count, dt));
    return rc;
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
              MPI_Comm comm) {
    BEGIN("MPI_Ssend");
    int rc = PMPI_Ssend(buf, count, dt, dest, tag, comm);
    END(pbytes(dest, count, dt));
    return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag,
             MPI_Comm comm, MPI_Status *status) {
    BEGIN("MPI_Recv");
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Recv(buf, count, dt, src, tag, comm, st);
    END(rc == MPI_SUCCESS && src != MPI_PROC_NULL ? status_bytes(st) : 0);
    return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
              MPI_Comm comm, MPI_Request *req) {
    BEGIN("MPI_Isend");
    int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, req);
    END(pbytes(dest, count, dt));
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag,
              MPI_Comm comm, MPI_Request *req) {
    BEGIN("MPI_Irecv");
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, req);
    END(pbytes(src, count, dt));
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
                 int stag, void *rbuf, int rcount, MPI_Datatype rtype, int src,
                 int rtag, MPI_Comm comm, MPI_Status *status) {
    BEGIN("MPI_Sendrecv");
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype,
                           src, rtag, comm, st);
    END(pbytes(dest, scount, stype) +
        (rc == MPI_SUCCESS && src != MPI_PROC_NULL ? status_bytes(st) : 0));
    return rc;
}

/* ---- waits ----------------------------------------------------------------- */

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    BEGIN("MPI_Wait");
    int rc = PMPI_Wait(req, status);
    END(0);
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    BEGIN("MPI_Waitall");
    int rc = PMPI_Waitall(n, reqs, statuses);
    END(0);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    BEGIN("MPI_Waitany");
    int rc = PMPI_Waitany(n, reqs, index, status);
    END(0);
    return rc;
}

/* ---- collectives ------------------------------------------------------------ */

int MPI_Barrier(MPI_Comm comm) {
    BEGIN("MPI_Barrier");
    int rc = PMPI_Barrier(comm);
    END(0);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    BEGIN("MPI_Bcast");
    int rc = PMPI_Bcast(buf, count, dt, root, comm);
    END(tbytes(count, dt));
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
               MPI_Op op, int root, MPI_Comm comm) {
    BEGIN("MPI_Reduce");
    int rc = PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm);
    END(tbytes(count, dt));
    return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                  MPI_Op op, MPI_Comm comm) {
    BEGIN("MPI_Allreduce");
    int rc = PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
    END(tbytes(count, dt));
    return rc;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
             MPI_Op op, MPI_Comm comm) {
    BEGIN("MPI_Scan");
    int rc = PMPI_Scan(sbuf, rbuf, count, dt, op, comm);
    END(tbytes(count, dt));
    return rc;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int count,
                             MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    BEGIN("MPI_Reduce_scatter_block");
    int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, count, dt, op, comm);
    END(tbytes(count, dt));
    return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
               int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    BEGIN("MPI_Gather");
    int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    END(sbuf == MPI_IN_PLACE ? tbytes(rcount, rtype) : tbytes(scount, stype));
    return rc;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                  int rcount, MPI_Datatype rtype, MPI_Comm comm) {
    BEGIN("MPI_Allgather");
    int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    END(sbuf == MPI_IN_PLACE ? tbytes(rcount, rtype) : tbytes(scount, stype));
    return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    BEGIN("MPI_Scatter");
    int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    END(rbuf == MPI_IN_PLACE ? tbytes(scount, stype) : tbytes(rcount, rtype));
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 int rcount, MPI_Datatype rtype, MPI_Comm comm) {
    BEGIN("MPI_Alltoall");
    int size = 1, inter = 0;
    /* on an intercommunicator the blocks go to the remote group */
    if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
        PMPI_Comm_remote_size(comm, &size);
    else
        PMPI_Comm_size(comm, &size);
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    END(sbuf == MPI_IN_PLACE ? tbytes((long long)rcount * size, rtype)
                             : tbytes((long long)scount * size, stype));
    return rc;
}
