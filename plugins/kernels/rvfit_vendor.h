/* rvfit_vendor.h — the only vendor-specific part of the device code.
 *
 * rvfit_kernels.c is written once in a C subset that is valid OpenCL C 1.2
 * and valid CUDA C++; everything that differs between the two dialects
 * (address-space qualifiers, thread indices, barriers, 64-bit integer
 * names, the fp64 switch) is a macro defined here, one branch per vendor
 * (the Hashcat approach).  Rules for the shared source:
 *   - no vector types, no OpenCL-only builtins outside these macros;
 *   - no C++-only features (the file is also plain C for OpenCL);
 *   - local (shared) arrays are declared at kernel scope with LOCAL_DECL and
 *     passed to helpers as LOCAL_PTR pointers;
 *   - no "??" sequences (trigraphs in the host compiler's string copy).
 *
 * RVK_FP64 (defined by the host when the device has double precision)
 * selects real == double; without it real == float and the reductions use
 * compensated (Kahan) sums.
 */
#ifndef RVFIT_VENDOR_H
#define RVFIT_VENDOR_H

#if defined(__OPENCL_VERSION__) || defined(__OPENCL_C_VERSION__)

#ifdef RVK_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL_DECL __local
#define LOCAL_PTR __local
#define CONSTANT __constant
#define DEVFN static inline
#define RESTRICT restrict
#define LOCAL_ID() ((int)get_local_id(0))
#define LOCAL_SIZE() ((int)get_local_size(0))
#define GROUP_ID() ((int)get_group_id(0))
#define NUM_GROUPS() ((int)get_num_groups(0))
/* Work-items of a group share global scratch too, so fence both spaces. */
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define RVK_LIKE_BOUNDS
typedef long rvk_long;
typedef uint rvk_uint;
typedef uchar rvk_uchar;

#elif defined(__CUDACC__)

#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_DECL __shared__
#define LOCAL_PTR
#define CONSTANT __constant__
#define DEVFN static __device__ inline
#define RESTRICT __restrict__
#define LOCAL_ID() ((int)threadIdx.x)
#define LOCAL_SIZE() ((int)blockDim.x)
#define GROUP_ID() ((int)blockIdx.x)
#define NUM_GROUPS() ((int)gridDim.x)
/* __syncthreads orders global and shared memory within a block. */
#define BARRIER() __syncthreads()
/* rvk_like is latency-bound: with RVK_MINBLOCKS (CMake's
 * RVFIT_CUDA_MINBLOCKS) > 0 the compiler keeps its registers low enough
 * for that many blocks of RVK_WG_MAX threads per multiprocessor. */
#if defined(RVK_MINBLOCKS) && RVK_MINBLOCKS > 0
#define RVK_LIKE_BOUNDS __launch_bounds__(RVK_WG_MAX, RVK_MINBLOCKS)
#else
#define RVK_LIKE_BOUNDS
#endif
typedef long long rvk_long;
typedef unsigned int rvk_uint;
typedef unsigned char rvk_uchar;

#else
#error "rvfit_vendor.h: compile with an OpenCL C or CUDA compiler"
#endif

#ifdef RVK_FP64
typedef double real;
#define RVK_ISFINITE(x) ((x) - (x) == 0.0)
#else
typedef float real;
#define RVK_ISFINITE(x) ((x) - (x) == 0.0f)
#endif

#endif
