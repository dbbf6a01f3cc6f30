/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the lab.yaml loader: bytes in, a model or positioned
 * errors out, never a crash, a leak or undefined behaviour. Includes are
 * off and no path is checked, so the input alone decides what runs.
 * Also formats the errors and, for valid input, the plan, so the
 * formatters see whatever the loader accepts. Each input is loaded a
 * second time as a snapshot's lab.yaml, confined to a few listed files,
 * so that every path it names goes through the confinement's checks.
 */
#include <stddef.h>
#include <stdint.h>
#include "plan/plan.h"
#include "spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct spec_load_opts opts = { .no_include = true, .no_filesystem = true };
	struct diags d = { 0 };
	struct spec *s = NULL;
	struct strbuf sb = STRBUF_INIT;

	if (size > 64 * 1024)
		return 0;
	if (spec_load_buffer("fuzz.yaml", (const char *)data, size, &opts, &s, &d) == 0) {
		struct plan *p = NULL;

		if (plan_build(s, NULL, &p, &d) == 0) {
			/* bounded: a valid file may still describe a very large plan */
			if (p->n < 5000) {
				plan_format_text(p, &sb);
				plan_format_json(p, &sb);
			}
			plan_free(p);
		}
		spec_free(s);
	}
	diags_sort(&d);
	diags_format(&d, &sb);
	strbuf_release(&sb);
	diags_release(&d);
	{
		static const char *const files[] = { "fuzz.yaml", "inc.yaml", "kernels/patches/a/0001-a.patch",
						     "kernels/configs/guest.config", "images/minimal.yaml",
						     "workloads/stress-ng/workload.yaml" };
		struct spec_confine cf;
		struct spec_load_opts confined = opts;

		spec_confine_init(&cf, ".", files, sizeof(files) / sizeof(files[0]));
		confined.confine = &cf;
		if (spec_load_buffer("fuzz.yaml", (const char *)data, size, &confined, &s, &d) == 0)
			spec_free(s);
		diags_format(&d, &sb);
		strbuf_release(&sb);
		diags_release(&d);
		spec_confine_release(&cf);
	}
	return 0;
}
