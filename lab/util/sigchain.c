/* SPDX-License-Identifier: MIT */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include "macro.h"
#include "sigchain.h"
#include "banned.h"

/* More than lab's modules that clean up at a signal (command.c, tempdir.c) */
#define SIGCHAIN_MAX 8

static sigchain_fn fns[SIGCHAIN_MAX];
static volatile sig_atomic_t nfns;
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_fatal_signal(int sig)
{
	for (sig_atomic_t i = nfns; i-- > 0;)
		fns[i]();
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns */
}

void sigchain_push(sigchain_fn fn)
{
	static bool installed;
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	for (sig_atomic_t i = 0; i < nfns; i++)
		if (fns[i] == fn)
			return;
	if (nfns >= SIGCHAIN_MAX)
		abort(); /* a module more than SIGCHAIN_MAX: raise it */
	fns[nfns] = fn;
	atomic_signal_fence(memory_order_seq_cst); /* the handler sees fns[i] only once it is set */
	nfns = nfns + 1;
	if (installed)
		return;
	installed = true;
	/* a second signal waits until the first one's cleanup is done */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ELEMENTSOF(fatal_signals); i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	for (size_t i = 0; i < ELEMENTSOF(fatal_signals); i++) {
		struct sigaction old;

		if (sigaction(fatal_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(fatal_signals[i], &sa, NULL);
	}
}
