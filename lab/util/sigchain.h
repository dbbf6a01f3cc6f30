/* SPDX-License-Identifier: MIT */
/*
 * What lab undoes when it dies of SIGINT, SIGTERM or SIGHUP (git's
 * sigchain.c and tempfile.c): each function pushed runs, the newest first,
 * then the signal's default action ends lab as it would have (a shell sees
 * 128 + the signal). Only the signals still at their default action when
 * the first function is pushed get the handler, so a command with
 * handlers of its own (lab run stops its workers first) keeps them, and a
 * signal ignored (nohup) stays ignored. The functions run inside a signal
 * handler: async-signal-safe calls only, nothing allocated, no lock taken;
 * whatever they need must be ready before the signal comes.
 */
#pragma once

typedef void (*sigchain_fn)(void);

/* Run fn when lab dies of one of those signals; once however often it is pushed. */
void sigchain_push(sigchain_fn fn);
