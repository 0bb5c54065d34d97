/* emu/cuda_emu_rt.c — TEST DOUBLE: a CPU implementation of the CUDA
 * runtime subset in emu/cuda_runtime_api.h, linked only into the emulated
 * build of the cuda backend.  It is strict where the real runtime is
 * silent or asynchronous, so that host-code mistakes show up as wrong
 * numbers or errors in tests:
 *   - stream work (copies, kernels) runs only at cudaStreamSynchronize
 *     (or cudaFree), so reading results or refilling a staging buffer
 *     before the sync is caught;
 *   - asynchronous copies need pinned host memory and device ranges that
 *     lie inside one allocation of the stream's device; launches need the
 *     stream's device to be current;
 *   - each device has RVFIT_CUDA_EMU_MEM_MB of memory (default 512), so
 *     cudaErrorMemoryAllocation can be provoked (RVFIT_CUDA_EMU_MEMINFO_X
 *     = k makes cudaMemGetInfo report k times the free memory); RVFIT_CUDA_EMU_DEVICES
 *     devices (default 1; 0 = cudaErrorNoDevice);
 *   - at unload, leaked device or pinned memory aborts the process.
 * The process-wide state mirrors the real runtime's; it is not thread-safe
 * (the backend drives its devices from one thread). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "cuda_emu.h"
#include "rvfit_klayout.h" /* RVK_WG_MAX */

#define EMU_MAX_DEV 16
#define EMU_MAX_ALLOC 4096
/* A fiber's stack, above one inaccessible guard page so that an overflow
 * faults instead of corrupting memory.  AddressSanitizer clears the
 * shadow of the whole stack at every swapcontext (two memsets of 1/8 of
 * it per barrier and work-item): there the stack is smaller, which the
 * guard page makes safe to find out. */
#if defined(__SANITIZE_ADDRESS__)
#define EMU_STACK (64 * 1024)
#else
#define EMU_STACK (256 * 1024)
#endif
#define EMU_GUARD 4096
#define EMU_MAX_WG RVK_WG_MAX /* threads (fibers) per block */

typedef struct emu_alloc {
    char *p;
    size_t n;
    int dev; /* -1: pinned host */
} emu_alloc;

typedef struct emu_op {
    void (*fn)(void *);
    void *ctx;
} emu_op;

struct CUstream_st {
    int dev;
    emu_op *op;
    size_t nop, cap;
};

typedef struct emu_fiber {
    ucontext_t uc;
    char *stack;
    emu_idx tid, bid;
} emu_fiber;

static struct {
    int init, ndev, cur;
    size_t mem, used[EMU_MAX_DEV];
    size_t lie; /* cudaMemGetInfo reports lie x the free memory */
    cudaError_t last;
    emu_alloc al[EMU_MAX_ALLOC];
    int nal;
    cudaStream_t streams[64];
    /* fibers of the running launch */
    ucontext_t main;
    emu_fiber fib[EMU_MAX_WG];
    unsigned nfib, fcur, groups;
    void (*body)(void *);
    void *ctx;
    emu_idx bdim, gdim;
} E;

/* Configuration from the environment, re-read by cudaGetDeviceCount (the
 * backend's first call on open) while nothing is allocated. */
static void emu_config(void)
{
    E.init = 1;
    const char *s = getenv("RVFIT_CUDA_EMU_DEVICES");
    E.ndev = s ? atoi(s) : 1;
    if (E.ndev > EMU_MAX_DEV)
        E.ndev = EMU_MAX_DEV;
    s = getenv("RVFIT_CUDA_EMU_MEM_MB");
    E.mem = (size_t)(s ? atol(s) : 512) << 20;
    s = getenv("RVFIT_CUDA_EMU_MEMINFO_X");
    E.lie = s ? (size_t)atol(s) : 1;
}

static void emu_init(void)
{
    if (!E.init)
        emu_config();
}

static cudaError_t emu_err(cudaError_t e)
{
    if (e != cudaSuccess)
        E.last = e;
    return e;
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    default: return "emulated CUDA error";
    }
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = E.last;
    E.last = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int *n)
{
    if (E.nal == 0)
        emu_config();
    *n = E.ndev;
    return emu_err(E.ndev > 0 ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
    emu_init();
    if (dev < 0 || dev >= E.ndev)
        return emu_err(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "Emulated GPU %d", dev);
    p->totalGlobalMem = E.mem;
    p->major = 8;
    p->multiProcessorCount = 1; /* few blocks: items loop over groups */
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev)
{
    *v = a == cudaDevAttrSingleToDoublePrecisionPerfRatio ? 2 : 0;
    return dev >= 0 && dev < E.ndev ? cudaSuccess
                                    : emu_err(cudaErrorInvalidDevice);
}

cudaError_t cudaSetDevice(int dev)
{
    emu_init();
    if (dev < 0 || dev >= E.ndev)
        return emu_err(cudaErrorInvalidDevice);
    E.cur = dev;
    return cudaSuccess;
}

static cudaError_t emu_alloc_add(void **p, size_t n, int dev)
{
    *p = NULL;
    if (E.nal >= EMU_MAX_ALLOC)
        return emu_err(cudaErrorMemoryAllocation);
    if (dev >= 0 && E.used[dev] + n > E.mem)
        return emu_err(cudaErrorMemoryAllocation);
    char *m = malloc(n ? n : 1);
    if (!m)
        return emu_err(cudaErrorMemoryAllocation);
    memset(m, 0xA5, n); /* garbage, as fresh device memory */
    E.al[E.nal++] = (emu_alloc){m, n, dev};
    if (dev >= 0)
        E.used[dev] += n;
    *p = m;
    return cudaSuccess;
}

static void emu_drain(cudaStream_t s)
{
    for (size_t i = 0; i < s->nop; i++) {
        s->op[i].fn(s->op[i].ctx);
        free(s->op[i].ctx);
    }
    s->nop = 0;
}

/* Freeing memory waits for all work, as cudaFree does. */
static void emu_drain_all(void)
{
    for (size_t i = 0; i < sizeof E.streams / sizeof E.streams[0]; i++)
        if (E.streams[i])
            emu_drain(E.streams[i]);
}

static cudaError_t emu_alloc_del(void *p, int host)
{
    if (!p)
        return cudaSuccess;
    emu_drain_all();
    for (int i = 0; i < E.nal; i++)
        if (E.al[i].p == p && (E.al[i].dev < 0) == host) {
            if (E.al[i].dev >= 0)
                E.used[E.al[i].dev] -= E.al[i].n;
            free(p);
            E.al[i] = E.al[--E.nal];
            return cudaSuccess;
        }
    return emu_err(cudaErrorInvalidValue);
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    emu_init();
    return emu_alloc_add(p, bytes, E.cur);
}

cudaError_t cudaFree(void *p)
{
    return emu_alloc_del(p, 0);
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    return emu_alloc_add(p, bytes, -1);
}

cudaError_t cudaFreeHost(void *p)
{
    return emu_alloc_del(p, 1);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    emu_init();
    *total_bytes = E.mem;
    *free_bytes = (E.mem - E.used[E.cur]) * (E.lie ? E.lie : 1);
    return cudaSuccess;
}

/* [p, p+n) inside one allocation of dev (-1: pinned host)? */
static int emu_in(int dev, const void *p, size_t n)
{
    const char *c = p;
    for (int i = 0; i < E.nal; i++)
        if (E.al[i].dev == dev && c >= E.al[i].p &&
            c + n <= E.al[i].p + E.al[i].n && c < E.al[i].p + E.al[i].n + 1)
            return 1;
    return 0;
}

int emu_check_ptr(int dev, const void *p)
{
    return p && emu_in(dev, p, 1);
}

int emu_current_device(void)
{
    return E.cur;
}

int emu_stream_device(cudaStream_t s)
{
    for (size_t i = 0; i < sizeof E.streams / sizeof E.streams[0]; i++)
        if (s && E.streams[i] == s)
            return s->dev;
    return -1;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n,
                       enum cudaMemcpyKind k)
{
    if ((k == cudaMemcpyHostToDevice && !emu_in(E.cur, dst, n)) ||
        (k == cudaMemcpyDeviceToHost && !emu_in(E.cur, src, n)))
        return emu_err(cudaErrorInvalidValue);
    memcpy(dst, src, n);
    return cudaSuccess;
}

typedef struct emu_copy {
    void *dst;
    const void *src;
    size_t n;
} emu_copy;

static void emu_do_copy(void *ctx)
{
    emu_copy *c = ctx;
    memcpy(c->dst, c->src, c->n);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
                            enum cudaMemcpyKind k, cudaStream_t s)
{
    int dev = emu_stream_device(s);
    int ok = dev >= 0 &&
             ((k == cudaMemcpyHostToDevice && emu_in(dev, dst, n) &&
               emu_in(-1, src, n)) ||
              (k == cudaMemcpyDeviceToHost && emu_in(dev, src, n) &&
               emu_in(-1, dst, n)));
    if (!ok)
        return emu_err(cudaErrorInvalidValue);
    emu_copy *c = malloc(sizeof *c);
    if (!c)
        return emu_err(cudaErrorMemoryAllocation);
    *c = (emu_copy){dst, src, n};
    return emu_enqueue(s, emu_do_copy, c);
}

cudaError_t emu_enqueue(cudaStream_t s, void (*fn)(void *), void *ctx)
{
    if (emu_stream_device(s) < 0) {
        free(ctx);
        return emu_err(cudaErrorInvalidResourceHandle);
    }
    if (s->nop == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        emu_op *op = realloc(s->op, cap * sizeof *op);
        if (!op) {
            free(ctx);
            return emu_err(cudaErrorMemoryAllocation);
        }
        s->op = op;
        s->cap = cap;
    }
    s->op[s->nop++] = (emu_op){fn, ctx};
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    for (size_t i = 0; i < sizeof E.streams / sizeof E.streams[0]; i++)
        if (!E.streams[i]) {
            E.streams[i] = calloc(1, sizeof **s);
            if (!E.streams[i])
                return emu_err(cudaErrorMemoryAllocation);
            E.streams[i]->dev = E.cur;
            *s = E.streams[i];
            return cudaSuccess;
        }
    return emu_err(cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    for (size_t i = 0; i < sizeof E.streams / sizeof E.streams[0]; i++)
        if (s && E.streams[i] == s) {
            emu_drain(s);
            free(s->op);
            free(s);
            E.streams[i] = NULL;
            return cudaSuccess;
        }
    return emu_err(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (emu_stream_device(s) < 0)
        return emu_err(cudaErrorInvalidResourceHandle);
    emu_drain(s);
    return cudaSuccess;
}

/* ---- blocks as cooperative fibers ---------------------------------------
 * Every thread of a block is a fiber; emu_sync() passes control to the
 * next fiber, round robin, so all fibers reach barrier k before any passes
 * it.  Blocks run one after another (static "shared" arrays are reused). */

static void emu_fiber_main(void)
{
    unsigned i = E.fcur;
    for (unsigned b = 0; b < E.groups; b++) {
        E.fib[i].bid.x = b;
        E.body(E.ctx);
        emu_sync();
    }
    if (i + 1 == E.nfib) {
        setcontext(&E.main);
    } else {
        E.fcur = i + 1;
        swapcontext(&E.fib[i].uc, &E.fib[i + 1].uc);
    }
}

void emu_sync(void)
{
    unsigned i = E.fcur, j = (i + 1) % E.nfib;
    if (j == i)
        return;
    E.fcur = j;
    swapcontext(&E.fib[i].uc, &E.fib[j].uc);
}

/* Its own function: getcontext() "returns twice", and a loop counter
 * live across it may be clobbered (-Wclobbered at -O2). */
static void emu_fiber_init(emu_fiber *f, unsigned i)
{
    if (!f->stack) {
        void *m = mmap(NULL, EMU_GUARD + EMU_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || mprotect(m, EMU_GUARD, PROT_NONE))
            abort();
        f->stack = m;
    }
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack + EMU_GUARD;
    f->uc.uc_stack.ss_size = EMU_STACK;
    f->uc.uc_link = &E.main;
    f->tid.x = i;
    makecontext(&f->uc, emu_fiber_main, 0);
}

void emu_run_blocks(unsigned groups, unsigned wg, void (*body)(void *),
                    void *ctx)
{
    if (wg > EMU_MAX_WG || wg == 0 || groups == 0)
        return;
    E.nfib = wg;
    E.groups = groups;
    E.body = body;
    E.ctx = ctx;
    E.bdim.x = wg;
    E.gdim.x = groups;
    for (unsigned i = 0; i < wg; i++)
        emu_fiber_init(&E.fib[i], i);
    E.fcur = 0;
    swapcontext(&E.main, &E.fib[0].uc);
}

emu_idx *emu_thread_idx(void)
{
    return &E.fib[E.fcur].tid;
}

emu_idx *emu_block_idx(void)
{
    return &E.fib[E.fcur].bid;
}

emu_idx *emu_block_dim(void)
{
    return &E.bdim;
}

emu_idx *emu_grid_dim(void)
{
    return &E.gdim;
}

__attribute__((destructor)) static void emu_fini(void)
{
    for (unsigned i = 0; i < EMU_MAX_WG; i++)
        if (E.fib[i].stack)
            munmap(E.fib[i].stack, EMU_GUARD + EMU_STACK);
    if (E.nal) {
        fprintf(stderr, "cuda emulator: %d allocations leaked at unload\n",
                E.nal);
        abort();
    }
}
