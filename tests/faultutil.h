/* tests/faultutil.h — helpers of the fault tests (test_e2e_faults_*):
 * starting rvfit in the background with the default signal actions,
 * reading a log, counting files.  Header-only (static inline) so that the
 * shared test library stays as it is. */
#ifndef RVFIT_FAULTUTIL_H
#define RVFIT_FAULTUTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static inline void fu_nap(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Entries of dir whose names contain s. */
static inline int fu_count_files(const char *dir, const char *s)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, s) != NULL;
    if (d)
        closedir(d);
    return n;
}

/* The first MiB of a file as a string (malloc'ed), NULL if unreadable. */
static inline char *fu_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf && fread(buf, 1, (1 << 20) - 1, f) == 0)
        buf[0] = '\0';
    fclose(f);
    return buf;
}

/* Start argv[0] with SIGINT/SIGTERM at their default actions (a shell's
 * background job would ignore SIGINT), stdout and stderr into logpath.
 * The pid, or -1. */
static inline pid_t fu_spawn(char **argv, const char *logpath)
{
    posix_spawnattr_t at;
    posix_spawn_file_actions_t fa;
    sigset_t def, none;
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigemptyset(&none);
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logpath,
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc == 0 ? pid : -1;
}

#endif
