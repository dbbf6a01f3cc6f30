/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/macro.h"
#include "fingerprint.h"
#include "../util/banned.h"

static const struct {
	const char *key, *label;
	enum fp_weight w;
} fields[FP_NFIELDS] = {
	[FP_HOST] = { "host", "host", FP_NOTED },
	[FP_CPU_MODEL] = { "cpu_model", "cpu model", FP_MATTERS },
	[FP_CPUS] = { "cpus", "cpu count", FP_MATTERS },
	[FP_MICROCODE] = { "microcode", "microcode", FP_NOTED },
	[FP_HOST_KERNEL] = { "host_kernel", "host kernel", FP_NOTED },
	[FP_QEMU] = { "qemu", "qemu version", FP_MATTERS },
	[FP_LIBVIRT] = { "libvirt", "libvirt version", FP_NOTED },
	[FP_ACCEL] = { "accel", "accel", FP_MATTERS },
	[FP_TIMING] = { "timing", "timing", FP_MATTERS },
	[FP_TOPOLOGY] = { "topology", "topology", FP_NOTED },
	[FP_TOPOLOGY_DIGEST] = { "topology_digest", "topology digest", FP_MATTERS },
	[FP_PINNING] = { "pinning", "pinning", FP_MATTERS },
	[FP_KERNEL_CONFIG] = { "kernel_config", "kernel config digest", FP_MATTERS_SAME_VARIANT },
	[FP_IMAGE] = { "image", "image digest", FP_MATTERS },
	[FP_LAB] = { "lab", "lab version", FP_NOTED },
	[FP_KERNEL_COMMIT] = { "kernel_commit", "kernel commit", FP_MATTERS_SAME_VARIANT },
};

const char *fp_field_key(enum fp_field f)
{
	return fields[f].key;
}

const char *fp_field_label(enum fp_field f)
{
	return fields[f].label;
}

enum fp_weight fp_field_weight(enum fp_field f)
{
	return fields[f].w;
}

void fingerprint_release(struct fingerprint *fp)
{
	if (!fp)
		return;
	for (size_t i = 0; i < FP_NFIELDS; i++) {
		free(fp->f[i]);
		fp->f[i] = NULL;
	}
}

void fingerprint_copy(struct fingerprint *dst, const struct fingerprint *src)
{
	for (size_t i = 0; i < FP_NFIELDS; i++)
		dst->f[i] = src->f[i] ? xstrdup(src->f[i]) : NULL;
}

void fingerprint_set(struct fingerprint *fp, enum fp_field f, const char *v)
{
	free(fp->f[f]);
	fp->f[f] = NULL;
	if (!v || !*v)
		return;
	fp->f[f] = xstrndup(v, FP_MAX_VALUE);
	for (char *c = fp->f[f]; *c; c++)
		if (*c == '\n' || *c == '\r' || *c == '\t')
			*c = ' ';
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && streq(a, b));
}

bool fingerprint_equal(const struct fingerprint *a, const struct fingerprint *b)
{
	for (size_t i = 0; i < FP_NFIELDS; i++)
		if (!same(a->f[i], b->f[i]))
			return false;
	return true;
}

bool fingerprint_empty(const struct fingerprint *fp)
{
	for (size_t i = 0; i < FP_NFIELDS; i++)
		if (fp->f[i])
			return false;
	return true;
}

void fingerprint_write_json(const struct fingerprint *fp, struct json *j)
{
	json_object_begin(j);
	for (size_t i = 0; i < FP_NFIELDS; i++)
		json_kv_string(j, fields[i].key, fp->f[i]);
	json_object_end(j);
}

void fingerprint_format_json(const struct fingerprint *fp, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	fingerprint_write_json(fp, &j);
	json_finish(&j);
}

int fingerprint_read_json(const struct json_doc *v, struct fingerprint *ret, char **ret_err)
{
	static const char *known[FP_NFIELDS + 1];
	struct fingerprint fp = { 0 };
	const char *k;

	for (size_t i = 0; i < FP_NFIELDS; i++)
		known[i] = fields[i].key;
	if (json_doc_type(v) != JSON_DOC_OBJECT) {
		*ret_err = xasprintf("%s, not an object", json_doc_type_name(v));
		return -EINVAL;
	}
	if ((k = json_doc_unknown_key(v, known))) {
		*ret_err = xasprintf("unknown member '%.64s'", k);
		return -EINVAL;
	}
	for (size_t i = 0; i < FP_NFIELDS; i++) {
		const struct json_doc *m = json_doc_get(v, fields[i].key);
		const char *s;

		if (!m || json_doc_type(m) == JSON_DOC_NULL)
			continue;
		if (!(s = json_doc_string_value(m))) {
			*ret_err = xasprintf("'%s' is %s, not a string or null", fields[i].key, json_doc_type_name(m));
			fingerprint_release(&fp);
			return -EINVAL;
		}
		if (strlen(s) > FP_MAX_VALUE || strpbrk(s, "\n\r\t")) {
			*ret_err = xasprintf("'%s' is not one line of at most %d bytes", fields[i].key, FP_MAX_VALUE);
			fingerprint_release(&fp);
			return -EINVAL;
		}
		fingerprint_set(&fp, (enum fp_field)i, s);
	}
	*ret = fp;
	return 0;
}

int fingerprint_parse(const char *text, size_t len, struct fingerprint *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;

	if (json_doc_parse(text, len, &doc, ret_err) < 0)
		return -EINVAL;
	return fingerprint_read_json(doc, ret, ret_err);
}

size_t fingerprint_diff(const struct fingerprint *a, const struct fingerprint *b, bool same_variant,
			struct fp_diff ret[FP_NFIELDS], size_t *ret_matters)
{
	size_t n = 0, m = 0;

	/* two passes: what matters first, then what is noted, each in field order */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < FP_NFIELDS; i++) {
			const char *x = a->f[i], *y = b->f[i];
			bool matters;

			/* another variant's config is what makes it another variant */
			if (same(x, y) || (fields[i].w == FP_MATTERS_SAME_VARIANT && !same_variant))
				continue;
			matters = x && y && fields[i].w != FP_NOTED;
			if (matters != (pass == 0))
				continue;
			ret[n++] = (struct fp_diff){ .field = (enum fp_field)i, .matters = matters, .a = x, .b = y };
			m += matters;
		}
	if (ret_matters)
		*ret_matters = m;
	return n;
}

void fp_diffs_describe(const struct fp_diff *d, size_t n, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s%s '%s' / '%s'%s", i ? "; " : "", fields[d[i].field].label,
			    d[i].a ? d[i].a : "unknown", d[i].b ? d[i].b : "unknown", d[i].matters ? "" : " (noted)");
}

void fp_diffs_write_json(const struct fp_diff *d, size_t n, struct json *j)
{
	json_array_begin(j);
	for (size_t k = 0; k < n; k++) {
		json_object_begin(j);
		json_kv_string(j, "field", fields[d[k].field].key);
		json_kv_string(j, "a", d[k].a);
		json_kv_string(j, "b", d[k].b);
		json_key(j, "matters");
		json_bool(j, d[k].matters);
		json_object_end(j);
	}
	json_array_end(j);
}

void fp_diff_why(const struct fp_diff *d, size_t n, struct strbuf *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (d[i].matters)
			strbuf_addf(out, "%s%s", k++ ? ", " : "", fields[d[i].field].label);
	if (k)
		strbuf_addstr(out, k == 1 ? " differs" : " differ");
}

/* The value of a "key : value" line of /proc/cpuinfo at line, or NULL. */
static char *cpuinfo_value(const char *line, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *c, *end = line + len;

	if (len < kl || strncmp(line, key, kl) != 0)
		return NULL;
	c = line + kl;
	while (c < end && (*c == ' ' || *c == '\t'))
		c++;
	if (c >= end || *c != ':')
		return NULL;
	c++;
	while (c < end && (*c == ' ' || *c == '\t'))
		c++;
	while (end > c && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return xstrndup(c, (size_t)(end - c));
}

void fingerprint_from_cpuinfo(struct fingerprint *fp, const char *cpuinfo)
{
	unsigned long cpus = 0;

	for (const char *l = cpuinfo; l && *l;) {
		size_t len = strcspn(l, "\n");
		char *v;

		if ((v = cpuinfo_value(l, len, "processor"))) {
			cpus++;
			free(v);
		} else if (!fp->f[FP_CPU_MODEL] &&
			   ((v = cpuinfo_value(l, len, "model name")) || (v = cpuinfo_value(l, len, "cpu model")))) {
			fingerprint_set(fp, FP_CPU_MODEL, v);
			free(v);
		} else if (!fp->f[FP_MICROCODE] && (v = cpuinfo_value(l, len, "microcode"))) {
			fingerprint_set(fp, FP_MICROCODE, v);
			free(v);
		}
		l += len;
		if (*l)
			l++;
	}
	if (cpus) {
		_cleanup_free_ char *n = xasprintf("%lu", cpus);

		fingerprint_set(fp, FP_CPUS, n);
	}
}

/* The first line of text, its words split at blanks. */
static char *first_line_word(const char *text, const char *after)
{
	size_t len;
	const char *p;

	if (!text)
		return NULL;
	len = strcspn(text, "\n");
	if (after) {
		const char *a = strstr(text, after);

		if (!a || (size_t)(a - text) >= len)
			return NULL;
		p = a + strlen(after);
		while (*p == ' ')
			p++;
		return p < text + len && *p != '\n' ? xstrndup(p, strcspn(p, " \n")) : NULL;
	}
	/* the last word */
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\r'))
		len--;
	p = text + len;
	while (p > text && p[-1] != ' ')
		p--;
	return p < text + len ? xstrndup(p, (size_t)(text + len - p)) : NULL;
}

char *fingerprint_qemu_version(const char *text)
{
	return first_line_word(text, "version");
}

char *fingerprint_libvirt_version(const char *text)
{
	return first_line_word(text, NULL);
}
