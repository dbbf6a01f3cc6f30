/* SPDX-License-Identifier: MIT */
/* A source's work tree carrying one patch series at a time (see worktree.c). */
#pragma once

#include "../util/diag.h"
#include "../util/strbuf.h"
#include "patch.h"

/* Create <work>/src as a hard-link copy of `pristine` unless it is complete. */
int worktree_ensure(const char *work, const char *pristine, struct strbuf *log, struct diags *d,
		    const struct pos *pos);
/*
 * Bring <work>/src to exactly `patches` applied in order. A failing patch
 * is reported with its hunk and lines; the patches before it stay applied
 * and recorded.
 */
int worktree_switch(const char *work, const char *pristine, struct patch *const *patches, size_t npatches,
		    struct strbuf *log, struct diags *d);
