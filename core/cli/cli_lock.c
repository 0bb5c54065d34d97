/* cli_lock.c — one run per output directory.
 *
 * Two runs writing into the same directory would replace each other's
 * outputs (each checks "output exists" before the other commits).  A run
 * therefore holds an advisory write lock (fcntl, which NFS supports too)
 * on DIR/.rvfit.lock for its whole length; the file names its holder so
 * that a second run can say whom it waits for.  The kernel drops the lock
 * when its process dies, so a stale file after a crash blocks nothing.
 * Under MPI only rank 0 takes it, for the whole job (cli_run.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define LOCK_NAME ".rvfit.lock"

/* The holder's own description (PID, host, start) from the file. */
static void holder(int fd, char *who, size_t n)
{
    ssize_t got = pread(fd, who, n - 1, 0);
    who[got > 0 ? got : 0] = '\0';
    who[strcspn(who, "\n")] = '\0';
    if (!who[0])
        snprintf(who, n, "its PID is not recorded yet");
}

static void describe_self(int fd)
{
    char host[256] = "?", date[32] = "?", line[400];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    time_t t = time(NULL);
    struct tm tmv;
    if (gmtime_r(&t, &tmv))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    int len = snprintf(line, sizeof line, "PID %ld on host %s, started %s\n",
                       (long)getpid(), host, date);
    /* Best effort: the lock itself is what excludes the other run. */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)len, 0) < 0)
        return;
}

/* 1 when fd is still the file at path (its previous holder may have
 * removed it between our open and our lock). */
static int same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int cli_dirlock_take(cli_dirlock *l, const char *dir, const rvfit_host *h,
                     rvfit_err *err)
{
    l->fd = -1;
    int n = snprintf(l->path, sizeof l->path, "%s/" LOCK_NAME, dir);
    if (n < 0 || (size_t)n >= sizeof l->path)
        return rvfit_err_set(err, RVFIT_ERR_IO, "output directory %.200s...: "
                             "%s", dir, strerror(ENAMETOOLONG));
    for (int attempt = 0; attempt < 16; attempt++) {
        int fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return rvfit_err_set(err, RVFIT_ERR_IO, "output directory %s: "
                                 "cannot create the lock file %s: %s", dir,
                                 LOCK_NAME, strerror(errno));
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd, F_SETLK, &fl) != 0) {
            int e = errno;
            if (e == EACCES || e == EAGAIN) {
                char who[400];
                holder(fd, who, sizeof who);
                close(fd);
                return rvfit_err_set(err, RVFIT_ERR_IO, "output directory "
                                     "%s is in use by another rvfit run "
                                     "(%s; lock file %s): wait for it to "
                                     "end or choose another --output-dir",
                                     dir, who, l->path);
            }
            /* No locking on this file system (ENOLCK, ENOSYS): go on. */
            close(fd);
            unlink(l->path);
            rvfit_log(h, RVFIT_LOG_WARN, "rvfit", "output directory %s "
                      "cannot be locked (%s): another run writing into it "
                      "would not be noticed", dir, strerror(e));
            return RVFIT_OK;
        }
        if (same_file(fd, l->path)) {
            describe_self(fd);
            l->fd = fd;
            return RVFIT_OK;
        }
        close(fd);
    }
    return rvfit_err_set(err, RVFIT_ERR_IO, "output directory %s: the lock "
                         "file %s keeps being replaced", dir, l->path);
}

void cli_dirlock_release(cli_dirlock *l)
{
    if (l->fd < 0)
        return;
    /* Remove it while still holding the lock: a run waiting on the old
     * file notices (same_file) and takes a fresh one. */
    unlink(l->path);
    close(l->fd);
    l->fd = -1;
}

/* ---- two inputs, one output -------------------------------------------- */

typedef struct named {
    const char *tab; /* output name      */
    int input;       /* position in files */
} named;

static int by_tab(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->tab, y->tab);
    return c ? c : (x->input > y->input) - (x->input < y->input);
}

int cli_check_output_names(char **files, int nfiles, const char *dir,
                           rvfit_err *err)
{
    if (nfiles < 2)
        return RVFIT_OK;
    size_t len = strlen(dir) + 4200;
    named *v = calloc((size_t)nfiles, sizeof *v);
    char *tab = malloc(len), *mod = malloc(len);
    int rc = v && tab && mod ? RVFIT_OK : RVFIT_ERR_NOMEM;
    for (int i = 0; i < nfiles && !rc; i++) {
        rvfit_output_names(dir, files[i], tab, mod, len);
        v[i] = (named){strdup(tab), i};
        if (!v[i].tab)
            rc = RVFIT_ERR_NOMEM;
    }
    if (rc) {
        rvfit_err_set(err, rc, "out of memory");
    } else {
        qsort(v, (size_t)nfiles, sizeof *v, by_tab);
        for (int i = 1; i < nfiles && !rc; i++)
            if (!strcmp(v[i - 1].tab, v[i].tab))
                rc = rvfit_err_set(err, RVFIT_ERR_CONFIG, "inputs %d (%s) "
                                   "and %d (%s) would both be written to "
                                   "%s: give each input once, and inputs of "
                                   "the same file name different output "
                                   "directories", v[i - 1].input + 1,
                                   files[v[i - 1].input], v[i].input + 1,
                                   files[v[i].input], v[i].tab);
    }
    for (int i = 0; v && i < nfiles; i++)
        free((char *)v[i].tab);
    free(v), free(tab), free(mod);
    return rc;
}
