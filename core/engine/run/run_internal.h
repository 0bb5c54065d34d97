/* run_internal.h — the pieces of a streaming run (core-internal):
 *
 *   reader (run_reader.c)  units from the source -> merged batches
 *   batch  (run_batch.c)   assembly of spectra of several files into one
 *                          batch layout, with padding
 *   memory (run_mem.c)     batches' large arrays kept for the next batch
 *   fit    (run.c)         the calling thread fits batch after batch
 *   writer (run_writer.c)  rows to each unit's outputs, commit, report
 *
 * Batches travel reader -> fit -> writer through bounded queues
 * (run_queue.c); at most RUN_NBUF are alive.  A unit (an input file or a
 * part of one) belongs to the reader until its last segment has been put
 * in a batch; that batch carries it in `ends`, and the writer finishes it
 * after writing that batch, so all its rows are written by then.
 */
#ifndef RVFIT_RUN_INTERNAL_H
#define RVFIT_RUN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "output/output_internal.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/joint.h"
#include "rvfit/output.h"
#include "rvfit/prep.h"
#include "rvfit/run.h"

#define RUN_MAX_TABLES 16
/* Batches alive: being read, fitted (one per fit stream), written; the
 * queues hold up to RUN_NBUF, a run uses streams + 2 of them. */
#define RUN_MAX_STREAMS 4
#define RUN_NBUF (RUN_MAX_STREAMS + 2)
#define RUN_PATH OUT_PATH
#define RUN_READ_CHUNK 64 /* spectra staged per read before joining a batch */

/* Results of a whole input for its summary figure (run_plot.c). */
typedef struct run_sum {
    size_t n, cap;
    double *sn, *vrad, *verr, *param; /* param: [cap * nparam]         */
    uint32_t *warn;
} run_sum;
/* TARGETIDs written to a unit's output (run_notes.c): open addressing,
 * row[i] == 0 for an empty slot, else the 1-based row of key[i]. */
typedef struct run_ids {
    int ready;                 /* looked up                                */
    int table, col;            /* the TARGETID column; table -1: none      */
    int64_t *key;
    size_t *row, cap;          /* cap 0: not tracked (no memory)           */
} run_ids;

typedef struct run_unit {
    rvfit_unit u;              /* as handed out; u.path is `path`          */
    char *path;
    void *h;                   /* instrument handle while reading          */
    rvfit_file_info info;      /* arms and tables (valid while h is open)  */
    size_t first, count, next; /* selected spectra [first, first+count),
                                  next: how many were read                 */
    rvfit_output *out;
    char tab[RUN_PATH];        /* where the rvtab lands (or its part file) */
    /* set by the reader (rwhy before rfailed), read by the writer */
    atomic_int rfailed;
    char rwhy[RVFIT_ERR_LEN];
    atomic_int stopped;        /* failed only because the run stopped      */
    /* writer only */
    int wfailed;
    char wwhy[RVFIT_ERR_LEN];
    size_t written;
    uint64_t points;
    run_sum *sum;              /* [output] plot_dir, whole files only      */
    run_ids ids;
    size_t ndup, nivar, noutside; /* rows noted (run_notes.c)              */
} run_unit;

/* Rows off .. off+n-1 of a batch belong to rows row0.. of a unit. */
typedef struct run_seg {
    run_unit *unit;
    size_t row0, off, n;
    rvfit_table_rows rows[RUN_MAX_TABLES];
} run_seg;

/* Spectra of a batch to draw (run_plot.c): chosen and copied before the
 * batch goes to the backend (which frees flux), models and continua added
 * after the fit, drawn by the writer. */
typedef struct run_plot {
    size_t n;
    size_t *spec;              /* [n] index in the batch                   */
    int64_t *tid;              /* [n] TARGETID (index in the file if none) */
    run_unit **unit;           /* [n] the input it came from               */
    float *flux[RVFIT_MAX_ARMS], *ivar[RVFIT_MAX_ARMS];   /* [n*npix]      */
    float *model[RVFIT_MAX_ARMS], *cont[RVFIT_MAX_ARMS];  /* [n*npix]      */
    int have_models;
} run_plot;

/* A joint batch's objects (run_jread.c): whole objects, their spectra
 * consecutive rows. */
typedef struct run_jbatch {
    size_t nobj;               /* objects in the batch                     */
    size_t o0, e0;             /* its first object and exposure, counted
                                  in the part's outputs                    */
    size_t *obj_off;           /* [nobj + 1] batch rows of each object     */
    rvfit_joint_result *jres;  /* [nobj] after the fit                     */
    rvfit_joint_id *id;        /* [nspec] what names each exposure         */
    rvfit_sb2 *sb2;            /* [nspec] with [fit] sb2, else NULL        */
} run_jbatch;

typedef struct run_batch {
    rvfit_batch b;             /* merged layout, b.nspec spectra          */
    int have_b;
    run_seg *seg;
    size_t nseg, segcap;
    run_unit **ends;           /* units whose last rows are in this batch */
    size_t nend, endcap;
    rvfit_result *res;         /* [b.nspec] after the fit                  */
    float *models[RVFIT_MAX_ARMS];
    run_plot plot;
    int fitted;                /* results valid                            */
    int last;                  /* end of the stream                        */
    size_t seq;                /* the reader's order: the writer's too     */
    rvfit_backend *be;         /* the fit stream's backend that holds it   */
    run_jbatch j;              /* joint mode only                          */
} run_batch;

/* Large arrays of batches given back, for the reader's next batch
 * (run_mem.c). */
#define RUN_MEM_SLOTS (4 * RVFIT_MAX_ARMS)
typedef struct run_mem {
    pthread_mutex_t mu;
    int closed;                /* the reader is done: put frees           */
    size_t n;
    void *p[RUN_MEM_SLOTS];
    size_t size[RUN_MEM_SLOTS];
} run_mem;

typedef struct run_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void *item[RUN_NBUF];
    size_t head, n;
} run_queue;

typedef struct run_joint run_joint;
typedef struct run_ctx run_ctx;

/* A fit stream ([run] streams): a thread that fits batches with its own
 * backend instance, and what it accumulates, added to the run's at the
 * end. */
typedef struct run_stream {
    run_ctx *c;
    rvfit_backend *be;
    rvfit_profile prof;
    double busy, loading, driver;
} run_stream;

struct run_ctx {
    rvfit_run *r;
    const rvfit_source *src;
    int threaded;
    size_t cap;                /* spectra per batch                        */
    size_t nfilled;            /* batches the reader has filled (reader's) */
    run_queue free, ready, done;
    run_batch buf[RUN_NBUF];
    run_unit *cur;             /* the unit the reader is reading           */
    run_mem mem;               /* arrays for the reader's next batches     */
    double *grid[RVFIT_MAX_ARMS]; /* reader: a file's grids as read       */
    size_t grid_n[RVFIT_MAX_ARMS];
    rvfit_kv *kv;              /* [instrument.NAME] options                */
    int nkv;
    char *cfgtext;             /* effective INI for the output headers     */
    atomic_int stop;           /* fatal error or cancel: wind down         */
    pthread_mutex_t mu;        /* fatal_*, reports and run counters        */
    int fatal_rc;
    rvfit_err fatal_err;
    double t_read, t_write;    /* reader- and writer-owned                 */
    size_t spectra_done;       /* writer-owned                             */
    double t0;
    run_joint *J;              /* joint mode ([fit] epochs): run_joint.c  */
    size_t nseq;               /* batches the reader has handed on        */
    int nstream;               /* fit streams                             */
    run_stream stream[RUN_MAX_STREAMS];
};

/* run.c: a run's context (the source is used by the units' reader and
 * writer only), released with run_ctx_free; run_loop reads, fits and
 * writes batches until the reader's last, on three threads with
 * [run] readahead, else on this one. */
int run_ctx_init(run_ctx *c, rvfit_run *r, const rvfit_source *src,
                 rvfit_err *err);
void run_ctx_free(run_ctx *c);
void run_loop(run_ctx *c);

/* run_queue.c: a bounded blocking FIFO of pointers (capacity RUN_NBUF). */
void rq_init(run_queue *q);
void rq_destroy(run_queue *q);
void rq_push(run_queue *q, void *p);
void *rq_pop(run_queue *q);
/* The batch of reader order seq, when it is in q (the writer's order
 * with several fit streams). */
run_batch *rq_pop_seq(run_queue *q, size_t seq);

/* run_mem.c: an array of at least `bytes` that waited (take: NULL when
 * none; get: malloc then); put takes an array and a lower bound of its
 * size (or frees it).  Any thread. */
void run_mem_init(run_mem *m);
void run_mem_destroy(run_mem *m);
/* No more batches: free what waits, and what comes from now on. */
void run_mem_close(run_mem *m);
/* Whether run_mem_close was called: put now frees. */
int run_mem_closed(run_mem *m);
void *run_mem_take(run_mem *m, size_t bytes);
void *run_mem_get(run_mem *m, size_t bytes);
void run_mem_put(run_mem *m, void *p, size_t bytes);
/* The same for rvfit_prep_batch_mem. */
rvfit_prep_mem run_mem_prep(run_mem *m);

/* run_batch.c */
/* Can spectra of a file with `info` join batch rb (same arms, in the same
 * order, same resolution kind and band width)?  An empty batch takes any. */
int rb_compatible(const run_batch *rb, const rvfit_file_info *info);
/* Read the k selected spectra from `first` of the open file h (described
 * by info) into rb at rb->b.nspec, rb allocated for c->cap spectra on the
 * first call: straight into the batch when the file's arms have the
 * batch's lengths, else through a copy laid out for the file, whose rows
 * shorter than the batch are padded and longer ones widen it (see
 * rvfit_arm_batch npix_own).  path names the file in errors. */
int rb_read(run_ctx *c, run_batch *rb, void *h, const rvfit_file_info *info,
            size_t first, size_t k, const char *path, rvfit_err *err);
/* The most spectra one rb_read of that file should take: all for a
 * direct read, RUN_READ_CHUNK through the copy (which then stays
 * small). */
size_t rb_read_max(const run_batch *rb, const rvfit_file_info *info);
/* Room for one more segment / end; 0 or RVFIT_ERR_NOMEM. */
int rb_add_seg(run_batch *rb, run_seg **seg, rvfit_err *err);
int rb_add_end(run_batch *rb, run_unit *u, rvfit_err *err);
/* *p (of *cap elements of esz bytes) grown by doubling to hold need;
 * 0, or -1 when out of memory (*p untouched). */
int run_grow(void **p, size_t *cap, size_t need, size_t esz);
/* Results and model buffers for the fit (models from c->mem, given back
 * by rb_clear). */
int rb_alloc_results(run_ctx *c, run_batch *rb, int models, rvfit_err *err);
/* Give the band matrices, the flux (unless keep_flux) and ivar (if
 * ivar_too) of b to c->mem. */
void rb_drop_spectra(run_ctx *c, rvfit_batch *b, int ivar_too,
                     int keep_flux);
/* Append the sb->nspec spectra of sb (laid out for its own file) to rb,
 * allocated for cap spectra on the first call (arrays from c->mem where
 * they fit); rows shorter than the batch are padded, rows longer widen
 * it (see rvfit_arm_batch npix_own). */
int rb_append(run_ctx *c, run_batch *rb, const rvfit_batch *sb, size_t cap,
              rvfit_err *err);
/* Release everything (large arrays to c->mem), keep the struct
 * reusable. */
void rb_clear(run_ctx *c, run_batch *rb);

/* run_reader.c: the next batch to fit (last = 1 at the end of the
 * stream); blocks for a free buffer.  Never NULL. */
run_batch *reader_batch(run_ctx *c);

/* run_ctx.c */
/* Record a fatal error (the first one wins) and stop the run. */
void run_fatal(run_ctx *c, int rc, const rvfit_err *err);
/* Stop the run (RVFIT_ERR_CANCELLED) when rvfit_run.cancel is set. */
void run_poll_cancel(run_ctx *c);
/* Report a unit's outcome to the source (serialised) and count it. */
void run_report(run_ctx *c, const rvfit_unit *u, int state,
                const char *detail, size_t nspec, uint64_t points);
/* Close the instrument handle and free the unit (output already gone). */
void run_unit_free(run_ctx *c, run_unit *u);

/* run_plot.c ([output] plot_dir) */
/* Choose the spectra of rb to draw and copy their flux and ivar; call
 * before the backend loads the batch.  Nothing when plots are off. */
int plot_select(run_ctx *c, run_batch *rb, rvfit_err *err);
/* Best-fit model and continuum of the chosen spectra, after the fit while
 * the backend still holds the batch. */
int plot_models(run_ctx *c, run_batch *rb, rvfit_err *err);
/* Draw the chosen spectra (writer); a figure that fails is logged. */
void plot_draw_batch(run_ctx *c, run_batch *rb);
void plot_clear(run_plot *p);
/* Summary figure of a whole input, <plot_dir>/<stem>_summary.png: the
 * writer adds each segment's results, then draws it once the outputs are
 * committed.  Nothing for parts of a file or when plots are off. */
void plot_sum_add(run_ctx *c, run_unit *U, const rvfit_result *res,
                  size_t n);
void plot_sum_draw(run_ctx *c, run_unit *U);
void plot_sum_free(run_sum *s);


/* run_writer.c */
/* Write a fitted batch's rows and finish the units that end in it. */
void writer_batch(run_ctx *c, run_batch *rb);

/* run_notes.c (writer only) */
/* Before seg's rows are written: flag TARGETIDs already written to the
 * unit (res: the segment's results) and log the per-star problems. */
void notes_segment(run_ctx *c, run_unit *U, const rvfit_batch *b,
                   const run_seg *seg, rvfit_result *res);
/* Counts of what was not listed; at the end of the unit. */
void notes_finish(run_ctx *c, const run_unit *U);
void notes_free(run_unit *U);


/* ---- joint mode: every spectrum of an object in one fit ---------------
 *
 *   index (run_jindex.c)  every input's epochs, grouped into objects
 *   read  (run_jread.c)   batches of whole objects, from any inputs
 *   write (run_jwrite.c)  RVTAB/RVEPOCH rows, the one output pair
 *
 * The index reads the epochs of the selected spectra of all inputs before
 * any fit (the 'epochs' instrument extension), sorts them by object key,
 * epoch, exposure, input path and row, and orders the objects by the
 * input path and row of their first epoch: all independent of the order
 * the inputs were given in.  A part (of an MPI job) fits a contiguous
 * range of objects. */

#define RUN_JOPEN 16    /* instrument handles kept open while reading */
#define RUN_JREASONS 8  /* distinct skip reasons counted by name      */

/* One selected spectrum that belongs to an object. */
typedef struct run_jexp {
    rvfit_epoch ep;
    uint32_t input;    /* index into the inputs                        */
    uint32_t prank;    /* rank of its input's path among the inputs'   */
    size_t sel;        /* index among that input's selected spectra    */
} run_jexp;

typedef struct run_jindex {
    char *const *inputs;
    size_t ninput;
    char **base;               /* [ninput] file names, no directory       */
    int *usable;               /* [ninput] read and compatible            */
    size_t nusable, base_len;  /* longest base name                       */
    int narm;                  /* the arms every usable input has         */
    rvfit_arm_info arm[RVFIT_MAX_ARMS]; /* npix: the widest input's       */
    run_jexp *exp;             /* objects consecutive, in output order    */
    size_t nexp;
    size_t *obj, nobj;         /* object o: exp[obj[o] .. obj[o+1]-1]     */
    size_t maxobj;             /* most exposures of one object            */
    size_t nskip;              /* spectra of no object, duplicates        */
    struct { char why[40]; size_t n; } reason[RUN_JREASONS];
} run_jindex;

/* An instrument handle kept open by the joint reader. */
typedef struct run_jopen {
    size_t input;
    void *h;                   /* NULL: free slot                          */
    rvfit_file_info info;
    uint64_t used;             /* last use, for eviction                   */
} run_jopen;

struct run_joint {
    run_jindex ix;
    const rvfit_instrument_epochs_ops *ep;
    size_t o0, o1, e0;         /* this part's objects, its first exposure */
    size_t next;               /* next object to read                     */
    run_jopen open[RUN_JOPEN];
    uint64_t tick;
    rvfit_output *out;         /* the part's rvtab (and rvmod)            */
    char tab[RUN_PATH], mod[RUN_PATH];
    int wfailed;               /* writer: a write failed (wwhy)           */
    char wwhy[RVFIT_ERR_LEN];
    size_t written;            /* exposures written                       */
    uint64_t points;
};

/* run_jindex.c: the index of all inputs (logged; an input that cannot be
 * read or whose arms differ from the others is reported FAILED and left
 * out); RVFIT_OK or a fatal error (memory). */
int jindex_build(run_ctx *c, char *const *inputs, size_t n, rvfit_err *err);
void jindex_free(run_jindex *ix);

/* run_jread.c: the next batch of whole objects (last = 1 at the end). */
run_batch *jreader_batch(run_ctx *c);
/* Close the handles the reader kept open. */
void jreader_close(run_ctx *c);

/* run_jwrite.c: open the part's outputs; write a fitted batch's rows;
 * commit (or remove) at the end. */
int jwriter_open(run_ctx *c, int part, int nparts, rvfit_err *err);
void jwriter_batch(run_ctx *c, run_batch *rb);
int jwriter_finish(run_ctx *c, rvfit_err *err);

#endif
