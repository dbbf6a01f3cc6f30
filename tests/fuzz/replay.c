/* SPDX-License-Identifier: MIT */
/*
 * Replays fuzz inputs through the fuzz target without libFuzzer (gcc,
 * ASan+UBSan), as systemd's fuzz-main does: `fuzz-replay-NAME FILE|DIR...`,
 * or with no argument tests/fuzz/corpus-NAME (how make test runs it).
 * Prints TAP: one test per input.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "util/alloc.h"
#include "util/strbuf.h"
#include "util/strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	struct strv files = STRV_INIT;
	char *dflt = NULL, *dargv[3];

	/* no argument: fuzz-replay-NAME replays tests/fuzz/corpus-NAME (make test runs it from the top) */
	if (argc == 1) {
		const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

		if (strncmp(base, "fuzz-replay-", 12) != 0) {
			fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
			return 2;
		}
		dflt = xasprintf("tests/fuzz/corpus-%s", base + 12);
		dargv[0] = argv[0];
		dargv[1] = dflt;
		dargv[2] = NULL;
		argv = dargv;
		argc = 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) && (d = opendir(argv[i]))) {
			while ((de = readdir(d)))
				if (de->d_name[0] != '.')
					strv_push_take(&files, xasprintf("%s/%s", argv[i], de->d_name));
			closedir(d);
		} else {
			strv_push(&files, argv[i]);
		}
	}
	if (files.n)
		qsort(files.v, files.n, sizeof(char *), cmp);
	printf("1..%zu\n", files.n);
	for (size_t i = 0; i < files.n; i++) {
		struct strbuf sb = STRBUF_INIT;

		if (strbuf_read_file(&sb, files.v[i], 1 << 20) < 0) {
			printf("not ok %zu - %s (unreadable)\n", i + 1, files.v[i]);
			continue;
		}
		fflush(stdout);
		LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len);
		/* a crash or sanitizer report ends the process before this line */
		printf("ok %zu - %s\n", i + 1, files.v[i]);
		strbuf_release(&sb);
	}
	strv_release(&files);
	free(dflt);
	return 0;
}
