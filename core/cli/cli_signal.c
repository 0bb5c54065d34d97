/* cli_signal.c — SIGINT, SIGTERM and SIGHUP during `rvfit fit`.
 *
 * The signals are blocked in every thread (threads inherit the mask, so
 * this comes before MPI, the backends and the run start theirs) and a
 * dedicated thread takes them with sigwait: no async-signal handler runs,
 * so the run may stop the ordinary way.  The first signal sets the run's
 * cancel flag; the run then fits nothing more, removes the temporaries of
 * every unfinished output and keeps the outputs already committed.  A
 * second signal means "now": the process exits at once (temporaries are
 * then removed when the same inputs are fitted again, rvfit/run.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char *cli_signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
    }
}

static void *wait_main(void *arg)
{
    cli_signals *s = arg;
    for (;;) {
        int sig = 0;
        if (sigwait(&s->set, &sig) != 0)
            continue;
        if (s->caught) {
            fprintf(stderr, "\nrvfit: %s again: quitting at once\n",
                    cli_signal_name(sig));
            _exit(128 + sig);
        }
        /* The only writer; the run polls it between batches. */
        s->caught = sig;
        fprintf(stderr, "\nrvfit: %s: stopping, removing unfinished "
                        "outputs (again to quit at once)\n",
                cli_signal_name(sig));
        pthread_mutex_lock(&s->hook_mu);
        if (s->hook)
            s->hook(s->hook_ctx, sig);
        pthread_mutex_unlock(&s->hook_mu);
    }
    return NULL;
}

void cli_signals_hook(cli_signals *s, void (*fn)(void *ctx, int sig),
                      void *ctx)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->hook_mu);
    s->hook = fn;
    s->hook_ctx = ctx;
    if (fn && s->caught)
        fn(ctx, s->caught);
    pthread_mutex_unlock(&s->hook_mu);
}

int cli_signals_start(cli_signals *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->hook_mu, NULL);
    sigemptyset(&s->set);
    sigaddset(&s->set, SIGINT);
    sigaddset(&s->set, SIGTERM);
    sigaddset(&s->set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &s->set, &s->old) != 0)
        return -1;
    if (pthread_create(&s->th, NULL, wait_main, s) != 0) {
        pthread_sigmask(SIG_SETMASK, &s->old, NULL);
        return -1; /* the default actions stay: no cleanup, but no hang */
    }
    s->started = 1;
    return 0;
}

void cli_signals_stop(cli_signals *s)
{
    if (!s->started)
        return;
    pthread_cancel(s->th); /* sigwait is a cancellation point */
    pthread_join(s->th, NULL);
    s->started = 0;
    pthread_sigmask(SIG_SETMASK, &s->old, NULL);
}
