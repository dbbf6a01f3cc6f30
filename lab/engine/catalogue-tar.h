/* SPDX-License-Identifier: MIT */
/*
 * The workload catalogue as the tar a guest unpacks (guest-run.h's
 * catalogue_tar): every file under the catalogue folder, named ./<path>,
 * symbolic links followed (entries may link to folders elsewhere: the
 * guest gets their contents), __pycache__ left out. Never prints.
 */
#pragma once

#include "../util/diag.h"

int catalogue_archive(const char *from, const char *to, struct diags *d);
