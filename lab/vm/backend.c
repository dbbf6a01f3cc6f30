/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "../util/banned.h"

void vm_machine_release(struct vm_machine *m)
{
	free(m->host_storage);
	free(m->kernel);
	free(m->modules);
	free(m->disk);
	free(m->seed);
	free(m->console);
	memset(m, 0, sizeof(*m));
}
