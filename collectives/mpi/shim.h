// Package mpi's C side: getters for the MPI constants, which are macros
// (pointers to library globals in Open MPI, integers in MPICH and Cray
// MPICH) that cgo cannot always take as they are, and thin wrappers for the
// calls that need MPI_IN_PLACE or MPI_STATUS_IGNORE (sentinel pointers that
// must never be held by Go) or that must not see a NULL buffer.

#ifndef SCALEGNN_MPI_SHIM_H
#define SCALEGNN_MPI_SHIM_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

static inline MPI_Comm sg_comm_world(void) { return MPI_COMM_WORLD; }
static inline MPI_Comm sg_comm_null(void) { return MPI_COMM_NULL; }
static inline MPI_Errhandler sg_errors_return(void) { return MPI_ERRORS_RETURN; }

static inline MPI_Datatype sg_float(void) { return MPI_FLOAT; }
static inline MPI_Datatype sg_double(void) { return MPI_DOUBLE; }
static inline MPI_Datatype sg_int64(void) { return MPI_INT64_T; }
static inline MPI_Datatype sg_byte(void) { return MPI_BYTE; }

static inline MPI_Op sg_sum(void) { return MPI_SUM; }
static inline MPI_Op sg_max(void) { return MPI_MAX; }
static inline MPI_Op sg_min(void) { return MPI_MIN; }

static inline MPI_Datatype sg_uint16(void) { return MPI_UINT16_T; }

// bfloat16 sum: the float32 sum of two bfloat16 values rounded to the
// nearest bfloat16, ties to even — bit for bit collectives.AddBF16.
static inline float sg_bf16_to_f32(uint16_t h) {
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint16_t sg_f32_to_bf16(float f) {
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7fffffffu) > 0x7f800000u) {
		return (uint16_t)(u >> 16) | 0x40;
	}
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static void sg_bf16_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type) {
	const uint16_t *a = (const uint16_t *)in;
	uint16_t *b = (uint16_t *)inout;
	(void)type;
	for (int i = 0; i < *len; i++) {
		b[i] = sg_f32_to_bf16(sg_bf16_to_f32(a[i]) + sg_bf16_to_f32(b[i]));
	}
}

static inline int sg_bf16_sum_op(MPI_Op *op) { return MPI_Op_create(sg_bf16_sum_fn, 1, op); }

static inline int sg_success(void) { return MPI_SUCCESS; }
static inline int sg_undefined(void) { return MPI_UNDEFINED; }
static inline int sg_comm_type_shared(void) { return MPI_COMM_TYPE_SHARED; }
static inline MPI_Info sg_info_null(void) { return MPI_INFO_NULL; }
static inline int sg_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
static inline int sg_thread_multiple(void) { return MPI_THREAD_MULTIPLE; }
static inline int sg_max_error_string(void) { return MPI_MAX_ERROR_STRING; }

// sg_sbuf and sg_rbuf return p, or a valid dummy address when p is NULL:
// Go passes NULL for an empty slice (it never takes &s[0] of one), and some
// MPI implementations reject a NULL buffer even with a zero count. Send and
// receive get different dummies, so that they never look aliased.
static inline void *sg_sbuf(void *p) {
	static char dummy[16];
	return p != NULL ? p : (void *)dummy;
}

static inline void *sg_rbuf(void *p) {
	static char dummy[16];
	return p != NULL ? p : (void *)dummy;
}

static inline int sg_init_thread(int required, int *provided) {
	return MPI_Init_thread(NULL, NULL, required, provided);
}

static inline int sg_allreduce_in_place(void *buf, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
	return MPI_Allreduce(MPI_IN_PLACE, sg_rbuf(buf), n, t, op, c);
}

static inline int sg_iallreduce_in_place(void *buf, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r) {
	return MPI_Iallreduce(MPI_IN_PLACE, sg_rbuf(buf), n, t, op, c, r);
}

static inline int sg_wait(MPI_Request *r) {
	return MPI_Wait(r, MPI_STATUS_IGNORE);
}

static inline int sg_test(MPI_Request *r, int *flag) {
	return MPI_Test(r, flag, MPI_STATUS_IGNORE);
}

static inline int sg_allgather(void *src, int n, void *dst, MPI_Datatype t, MPI_Comm c) {
	return MPI_Allgather(sg_sbuf(src), n, t, sg_rbuf(dst), n, t, c);
}

static inline int sg_allgatherv(void *src, int n, void *dst, int *counts, int *displs, MPI_Datatype t, MPI_Comm c) {
	return MPI_Allgatherv(sg_sbuf(src), n, t, sg_rbuf(dst), counts, displs, t, c);
}

// sg_allgatherv_inplace: each rank's block is already in its place in dst.
static inline int sg_allgatherv_inplace(void *dst, int *counts, int *displs, MPI_Datatype t, MPI_Comm c) {
	return MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sg_rbuf(dst), counts, displs, t, c);
}

static inline int sg_reduce_scatter_block(void *src, void *dst, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
	return MPI_Reduce_scatter_block(sg_sbuf(src), sg_rbuf(dst), n, t, op, c);
}

static inline int sg_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c) {
	return MPI_Bcast(sg_rbuf(buf), n, t, root, c);
}

static inline int sg_alltoallv(void *send, int *scounts, int *sdispls, void *recv, int *rcounts, int *rdispls,
                               MPI_Datatype t, MPI_Comm c) {
	return MPI_Alltoallv(sg_sbuf(send), scounts, sdispls, t, sg_rbuf(recv), rcounts, rdispls, t, c);
}

#endif
