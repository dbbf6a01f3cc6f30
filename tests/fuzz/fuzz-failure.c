/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for result/failure.c: what it classifies is a guest's
 * console and a build's output, text a kernel under test or a compiler
 * wrote. Any bytes, at every stage: never a crash or a leak; the kind has
 * a name that parses back to it; the evidence is one printable line of at
 * most 300 bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "result/failure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (int stage = FAILURE_AT_BUILD; stage <= FAILURE_AT_RUN; stage++) {
		struct failure f;
		enum failure_kind k;

		failure_classify((enum failure_stage)stage, text, &f);
		if (failure_kind_parse(failure_kind_name(f.kind), &k) < 0 || k != f.kind)
			abort();
		if (f.evidence) {
			if (strlen(f.evidence) > 300)
				abort();
			for (const char *p = f.evidence; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					abort();
		}
		failure_release(&f);
	}
	free(text);
	return 0;
}
