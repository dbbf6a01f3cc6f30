/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "wire.h"
#include "../util/banned.h"

static const char *const type_names[] = {
	[WIRE_STEP] = "step", [WIRE_BOOT] = "boot", [WIRE_DONE] = "done",
	[WIRE_NEXT] = "next", [WIRE_RUN] = "run",   [WIRE_STOP] = "stop",
};

void wire_format(const struct wire_msg *m, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, false);
	json_object_begin(&j);
	json_kv_string(&j, "type", type_names[m->type]);
	switch (m->type) {
	case WIRE_STEP:
		json_kv_string(&j, "run", m->run);
		json_kv_string(&j, "what", m->what);
		break;
	case WIRE_BOOT:
		json_kv_string(&j, "guest", m->guest);
		json_kv_string(&j, "variant", m->variant);
		break;
	case WIRE_DONE:
		json_kv_string(&j, "run", m->run);
		json_kv_string(&j, "status", m->ok ? "ok" : "failed");
		json_kv_string(&j, "release", m->release);
		json_kv_string(&j, "error", m->error);
		json_kv_string(&j, "guest", m->guest);
		break;
	case WIRE_RUN:
		json_kv_string(&j, "run", m->run);
		if (m->like) {
			json_kv_string(&j, "like", m->like);
			json_kv_uint(&j, "repeat", m->repeat);
		}
		break;
	case WIRE_NEXT:
	case WIRE_STOP:
		break;
	}
	json_object_end(&j);
	json_finish(&j);
}

void wire_msg_release(struct wire_msg *m)
{
	free(m->run);
	free(m->what);
	free(m->guest);
	free(m->variant);
	free(m->release);
	free(m->error);
	free(m->like);
	memset(m, 0, sizeof(*m));
}

/* The members a type needs, present and strings. */
static const char *missing(const struct wire_msg *m, bool has_status)
{
	switch (m->type) {
	case WIRE_STEP:
		return !m->run ? "run" : !m->what ? "what" : NULL;
	case WIRE_BOOT:
		return !m->guest ? "guest" : !m->variant ? "variant" : NULL;
	case WIRE_DONE:
		return !m->run ? "run" : !has_status ? "status" : NULL;
	case WIRE_RUN:
		return !m->run ? "run" : NULL;
	default:
		return NULL;
	}
}

int wire_parse(const char *line, struct wire_msg *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	_cleanup_free_ char *type = NULL, *status = NULL;
	struct wire_msg m = { 0 };
	const char *miss;
	long long rep;
	size_t t;
	int r;

	if ((r = json_doc_parse(line, strlen(line), &doc, ret_err)) < 0)
		return r;
	type = json_doc_string(doc, "type");
	for (t = 0; type && t < sizeof(type_names) / sizeof(type_names[0]); t++)
		if (streq(type, type_names[t]))
			break;
	if (!type || t == sizeof(type_names) / sizeof(type_names[0])) {
		*ret_err = xasprintf("unknown message type '%s'", type ? type : "(none)");
		return -EINVAL;
	}
	m.type = (enum wire_type)t;
	m.run = json_doc_string(doc, "run");
	m.what = json_doc_string(doc, "what");
	m.guest = json_doc_string(doc, "guest");
	m.variant = json_doc_string(doc, "variant");
	m.release = json_doc_string(doc, "release");
	m.error = json_doc_string(doc, "error");
	m.like = json_doc_string(doc, "like");
	status = json_doc_string(doc, "status");
	m.ok = status && streq(status, "ok");
	if (m.like && json_doc_int_value(json_doc_get(doc, "repeat"), 1, 1000000, &rep) < 0) {
		wire_msg_release(&m);
		*ret_err = xstrdup("a new run's repeat is not a number from 1");
		return -EINVAL;
	}
	m.repeat = m.like ? (unsigned)rep : 0;
	if ((miss = missing(&m, status && (streq(status, "ok") || streq(status, "failed"))))) {
		*ret_err = xasprintf("a '%s' message without its '%s'", type, miss);
		wire_msg_release(&m);
		return -EINVAL;
	}
	*ret = m;
	return 0;
}
