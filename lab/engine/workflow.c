/* SPDX-License-Identifier: MIT */
/* What the workflows (bisect-run.c, track-run.c) share: their log. */
#include <stdarg.h>
#include <time.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "workflow.h"
#include <string.h>
#include "../result/failure.h"
#include "../store/store.h"
#include "../util/diag.h"
#include "../util/banned.h"

void workflow_log(const struct workflow *w, const char *dir, const char *file, const char *fmt, ...)
{
	_cleanup_free_ char *path = path_join(dir, file), *msg = NULL;
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT, esc = STRBUF_INIT;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	term_escape(&esc, msg);
	strbuf_addf(&line, "%s %s\n", stamp, esc.buf);
	fs_append(path, line.buf, line.len);
	if (w->say)
		w->say(w->userdata, msg);
}

int workflow_save(const char *dir, const char *file, const struct strbuf *text, struct diags *d)
{
	_cleanup_free_ char *path = path_join(dir, file);
	int r = fs_write_atomic(path, text->buf, text->len, 0644);

	if (r < 0 && d)
		diags_add(d, NULL, "cannot write %s: %s", path, strerror(-r));
	return r;
}

int workflow_open(const char *root, const char *id, const char *noun, const char *file, size_t max, char **ret_dir,
		  char **ret_path, struct strbuf *text, struct diags *d)
{
	int r;

	if (!(*ret_dir = store_find(root, id))) {
		diags_add(d, NULL, "%s: no stored %s '%s' under %s", noun, noun, id, root);
		return -1;
	}
	*ret_path = path_join(*ret_dir, file);
	if ((r = strbuf_read_file(text, *ret_path, max)) < 0) {
		diags_add(d, NULL, "%s: %s is not a %s: cannot read %s: %s", noun, id, noun, *ret_path, strerror(-r));
		return -1;
	}
	return 0;
}

int workflow_build_kernel(const struct workflow *w, const struct spec *s, const char *noun, const char *name,
			  char **ret_why, struct diags *d)
{
	_cleanup_free_ char *log = NULL;
	struct failure f;
	size_t n;
	int r;

	if (!w->build)
		return 0;
	if ((r = w->build(w->userdata, s, name, &log)) <= 0)
		return r;
	failure_classify(FAILURE_AT_BUILD, log, &f);
	/* skipped on the compiler's word only */
	r = failure_is_kernels(f.kind) && f.evidence ? 1 : -1;
	n = strlen(log);
	if (r > 0)
		*ret_why = xasprintf("the kernel's failure (%s): %s", failure_kind_name(f.kind), f.evidence);
	else
		diags_add(d, NULL, "%s: %s did not build, and not on the compiler's word (%s): %s", noun, name,
			  failure_kind_name(f.kind), n > 2000 ? log + n - 2000 : log);
	failure_release(&f);
	return r;
}
