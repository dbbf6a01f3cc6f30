/* SPDX-License-Identifier: MIT */
/*
 * The swept series a run compares, recorded with it (result_series): for
 * each swept kernel whose steps are among the run's variants, the chain
 * its attribution judges (the kernel's `from` when compared, then the
 * steps in sweep order; nothing when that leaves fewer than two) and its
 * patches' subject lines up to the last step compared. A patch that
 * cannot be read has no subject (its build says why). Reads the patch
 * files; never prints.
 */
#pragma once

#include "../result/result.h"
#include "../spec/spec.h"

void run_series_record(struct result_set *rs, const struct spec *s);
