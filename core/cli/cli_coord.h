/* cli_coord.h — the work queue of a job of several processes, kept by
 * rank 0 (cli_mpi.c): inputs in order, each handed out whole; a file with
 * more selected spectra than a batch may be cut into parts, which go to
 * the front of the queue; when every part of a file is reported, a MERGE
 * (or, after a failure, a DISCARD) unit goes to the front.  It writes the
 * status file (cli_jobstat).  Functions named "with the lock" expect coord_lock held;
 * the *_local ones are rvfit_source callbacks for rank 0's own run. */
#ifndef CLI_COORD_H
#define CLI_COORD_H

#include <stddef.h>

#include "rvfit/host.h"
#include "rvfit/run.h"

typedef struct co_unit {
    int kind, part, nparts;
    size_t input;
} co_unit;

typedef struct coord coord;

/* The queue of the inputs the skip scan left (cli_jobstat_open: with
 * [output] skip_existing, inputs whose rvtab exists are done), and the
 * status file ([output] status) written with them. */
int coord_new(coord **co, char **files, size_t n, int nranks,
              const rvfit_config *cfg, const rvfit_host *host,
              const volatile int *cancel, rvfit_err *err);
void coord_lock(coord *co);
void coord_unlock(coord *co);
/* With the lock: 1 and *u (its input is then running on `rank`), 0 when
 * all inputs are settled or the job stopped, -1 when there is nothing to
 * hand out now but inputs are still running. */
int coord_take(coord *co, co_unit *u, int rank);
/* With the lock: parts to cut input i into (1 = none). */
int coord_split(coord *co, size_t input, size_t nselect);
/* With the lock: the outcome of a unit, from rank `from`. */
void coord_report(coord *co, const rvfit_unit_report *r, int from);
int coord_next_local(void *ctx, rvfit_unit *u, int may_wait);
int coord_split_local(void *ctx, const rvfit_unit *u, size_t nselect);
void coord_report_local(void *ctx, const rvfit_unit_report *r);
/* The job stops (rank 0 was signalled): nothing more is handed out,
 * running inputs are marked interrupted and pending ones skipped, at once
 * (a rank killed outright never reports); later reports of the ranks
 * still update the file.  From any thread, with or without the lock (the
 * signal thread calls it while another may hold the lock in an MPI call
 * that never returns); idempotent. */
void coord_stop(coord *co, const char *why);
/* Rank 0's own run stopped (it asks no more). */
void coord_rank_gone(coord *co);
/* Settle what is left, close the status file, free; returns the number
 * of inputs that failed or were never fitted. */
size_t coord_finish(coord *co);

#endif
