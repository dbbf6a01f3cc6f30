/* SPDX-License-Identifier: MIT */
/*
 * Topology + artifacts + host -> libvirt domain XML (see domain.h).
 */
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/units.h"
#include "../util/xml.h"
#include "domain.h"
#include "../util/banned.h"

#define HOST_MAX_CPUS 8192

unsigned domain_vcpus(const struct spec_topology *t)
{
	return spec_topology_vcpus(t);
}

/*
 * no_timer_check: under TCG on a loaded host the emulated PIT's ticks can
 * miss the kernel's short check_timer() window, and the guest panics with
 * "IO-APIC + timer doesn't work!" (seen here: one boot of t1700's in a
 * suite with three guests on 2 CPUs). Cloud images boot VMs with it too.
 */
char *domain_cmdline(const char *extra)
{
	return xasprintf("console=ttyS0 root=/dev/vda rw net.ifnames=0 panic=-1 no_timer_check%s%s",
			 extra && *extra ? " " : "", extra && *extra ? extra : "");
}

static uint64_t kib(uint64_t bytes)
{
	return bytes >> 10;
}

static uint64_t total_memory(const struct spec_topology *t)
{
	uint64_t m = 0;

	if (!t->ncells)
		return t->memory;
	for (size_t i = 0; i < t->ncells; i++)
		m += t->cells[i].memory;
	return m;
}

/* The CPUs of a cpulist, in order, into v (at most n); returns the count. */
static size_t cpus_of(const char *list, unsigned *v, size_t n)
{
	_cleanup_free_ uint8_t *bits = xcalloc(HOST_MAX_CPUS / 8, 1);
	size_t max = 0, k = 0;

	if (!list || parse_cpulist(list, bits, HOST_MAX_CPUS, &max) < 0)
		return 0;
	for (size_t i = 0; i < HOST_MAX_CPUS && k < n; i++)
		if (bits[i / 8] & (1u << (i % 8)))
			v[k++] = (unsigned)i;
	return k;
}

static bool cell_has_vcpu(const struct spec_cell *c, unsigned v)
{
	return c->cpus[v / 8] & (1u << (v % 8));
}

static int cell_of_vcpu(const struct spec_topology *t, unsigned v)
{
	for (size_t i = 0; i < t->ncells; i++)
		if (cell_has_vcpu(&t->cells[i], v))
			return (int)i;
	return -1;
}

static bool host_numa(const struct domain_config *c)
{
	return c->host && c->host->nnodes > 1 && c->topo->ncells;
}

/*
 * The host CPU of each vCPU (into cpu[], domain_vcpus() of them), from the
 * --jobs slot or the topology's pinning; false when the vCPUs float.
 */
static bool vcpu_pins(const struct domain_host *h, const struct spec_topology *t, const char *cpuset, unsigned *cpu)
{
	unsigned n = domain_vcpus(t);
	_cleanup_free_ unsigned *all = xcalloc(HOST_MAX_CPUS, sizeof(unsigned));
	size_t nall;

	if (cpuset)
		nall = cpus_of(cpuset, all, HOST_MAX_CPUS);
	else if (t->pin == PIN_NONE || !h)
		return false;
	else if (t->pin == PIN_LIST)
		nall = cpus_of(t->pin_cpus, all, HOST_MAX_CPUS);
	else if (h->cpus)
		nall = cpus_of(h->cpus, all, HOST_MAX_CPUS);
	else
		for (nall = 0; nall < h->ncpus && nall < HOST_MAX_CPUS; nall++)
			all[nall] = (unsigned)nall;
	if (!nall)
		return false;
	for (unsigned v = 0; v < n; v++) {
		int cell = cell_of_vcpu(t, v);

		cpu[v] = all[v % nall];
		/* auto with host NUMA: a guest cell's vCPUs go to one host node */
		if (!cpuset && t->pin == PIN_AUTO && h->nnodes > 1 && t->ncells && cell >= 0) {
			unsigned node = (unsigned)cell % h->nnodes, ncpu;
			_cleanup_free_ unsigned *nc = xcalloc(HOST_MAX_CPUS, sizeof(unsigned));
			unsigned idx = 0;

			ncpu = (unsigned)cpus_of(h->node_cpus[node], nc, HOST_MAX_CPUS);
			for (unsigned w = 0; w < v; w++)
				idx += cell_of_vcpu(t, w) == cell;
			if (ncpu)
				cpu[v] = nc[idx % ncpu];
		}
	}
	return true;
}

char *domain_housekeeping_cpus(const struct domain_host *h, const struct spec_topology *t, char *const *cpusets)
{
	_cleanup_free_ unsigned *cpu = xcalloc(domain_vcpus(t) + 1, sizeof(unsigned));
	_cleanup_free_ uint8_t *bits = xcalloc(HOST_MAX_CPUS / 8, 1);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t max = 0;
	bool pinned = false;

	if (!h)
		return NULL;
	if (h->cpus)
		parse_cpulist(h->cpus, bits, HOST_MAX_CPUS, &max);
	else
		for (unsigned i = 0; i < h->ncpus && i < HOST_MAX_CPUS; i++)
			bits[i / 8] |= (uint8_t)(1u << (i % 8));
	for (size_t k = 0; !k || (cpusets && cpusets[k]); k++) {
		if (!vcpu_pins(h, t, cpusets ? cpusets[k] : NULL, cpu))
			continue;
		pinned = true;
		for (unsigned v = 0; v < domain_vcpus(t); v++)
			if (cpu[v] < HOST_MAX_CPUS)
				bits[cpu[v] / 8] &= (uint8_t)~(1u << (cpu[v] % 8));
	}
	for (size_t i = 0; pinned && i < HOST_MAX_CPUS; i++) {
		size_t j = i;

		if (!(bits[i / 8] & (1u << (i % 8))))
			continue;
		while (j + 1 < HOST_MAX_CPUS && (bits[(j + 1) / 8] & (1u << ((j + 1) % 8))))
			j++;
		strbuf_addf(&sb, "%s%zu", sb.len ? "," : "", i);
		if (j > i)
			strbuf_addf(&sb, "-%zu", j);
		i = j;
	}
	return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* QEMU's own threads (main loop and I/O, TCG's): the --jobs slot unless the
 * topology gives a list; `emulator: auto` the CPUs the vCPUs leave. */
static char *emulator_cpus(const struct domain_config *c)
{
	const struct spec_topology *t = c->topo;

	if (t->emulator == PIN_LIST)
		return xstrdup(t->emulator_cpus);
	if (c->cpuset)
		return xstrdup(c->cpuset);
	if (t->emulator == PIN_AUTO)
		return domain_housekeeping_cpus(c->host, t, NULL);
	return NULL;
}

static void cputune(struct xml *x, const struct domain_config *c)
{
	unsigned n = domain_vcpus(c->topo);
	_cleanup_free_ unsigned *cpu = xcalloc(n + 1, sizeof(unsigned));
	_cleanup_free_ char *emu = emulator_cpus(c);
	bool pinned = vcpu_pins(c->host, c->topo, c->cpuset, cpu);

	if (!pinned && !emu)
		return;
	xml_open(x, "cputune");
	for (unsigned v = 0; pinned && v < n; v++) {
		xml_open(x, "vcpupin");
		xml_attrf(x, "vcpu", "%u", v);
		xml_attrf(x, "cpuset", "%u", cpu[v]);
		xml_close(x);
	}
	if (emu) {
		/* no <iothreads>: the emulator threads are all of QEMU's but the vCPUs' */
		xml_open(x, "emulatorpin");
		xml_attr(x, "cpuset", emu);
		xml_close(x);
	}
	xml_close(x);
}

static void numatune(struct xml *x, const struct domain_config *c)
{
	const struct spec_topology *t = c->topo;

	if (t->pin == PIN_NONE || !host_numa(c))
		return;
	xml_open(x, "numatune");
	xml_open(x, "memory");
	xml_attr(x, "mode", "strict");
	xml_attrf(x, "nodeset", "0-%u", c->host->nnodes - 1);
	xml_close(x);
	for (size_t i = 0; i < t->ncells; i++) {
		xml_open(x, "memnode");
		xml_attrf(x, "cellid", "%zu", i);
		xml_attr(x, "mode", "strict");
		xml_attrf(x, "nodeset", "%zu", i % c->host->nnodes);
		xml_close(x);
	}
	xml_close(x);
}

static void cpu(struct xml *x, const struct domain_config *c)
{
	const struct spec_topology *t = c->topo;
	const char *model = t->cpu && *t->cpu ? t->cpu : "auto";

	xml_open(x, "cpu");
	if (streq(model, "auto"))
		model = c->accel == ACCEL_KVM ? "host-passthrough" : "maximum";
	if (streq(model, "host-passthrough") || streq(model, "host-model") || streq(model, "maximum")) {
		xml_attr(x, "mode", model);
		xml_attr(x, "check", "none");
		if (streq(model, "host-passthrough"))
			xml_attr(x, "migratable", "off");
	} else {
		xml_attr(x, "mode", "custom");
		xml_attr(x, "match", "exact");
		xml_attr(x, "check", "none");
		xml_open(x, "model");
		xml_attr(x, "fallback", "forbid");
		xml_text(x, model);
		xml_close(x);
	}
	xml_open(x, "topology");
	xml_attrf(x, "sockets", "%u", t->sockets);
	xml_attrf(x, "dies", "%u", t->dies);
	xml_attrf(x, "cores", "%u", t->cores);
	xml_attrf(x, "threads", "%u", t->threads);
	xml_close(x);
	if (t->ncells) {
		xml_open(x, "numa");
		for (size_t i = 0; i < t->ncells; i++) {
			xml_open(x, "cell");
			xml_attrf(x, "id", "%zu", i);
			xml_attr(x, "cpus", t->cells[i].cpulist);
			xml_attrf(x, "memory", "%llu", (unsigned long long)kib(t->cells[i].memory));
			xml_attr(x, "unit", "KiB");
			if (t->distances && t->ndistances == t->ncells) {
				xml_open(x, "distances");
				for (size_t j = 0; j < t->ncells; j++) {
					xml_open(x, "sibling");
					xml_attrf(x, "id", "%zu", j);
					xml_attrf(x, "value", "%u", t->distances[i * t->ndistances + j]);
					xml_close(x);
				}
				xml_close(x);
			}
			xml_close(x);
		}
		xml_close(x);
	}
	xml_close(x);
}

static void metadata(struct xml *x, const struct domain_config *c)
{
	xml_open(x, "metadata");
	xml_open(x, "lab:vm");
	xml_attr(x, "xmlns:lab", LAB_XMLNS);
	xml_attr(x, "name", c->vm ? c->vm : c->name);
	if (c->owner)
		xml_empty(x, "lab:owner", "state", c->owner, NULL);
	if (c->run_id)
		xml_empty(x, "lab:run", "id", c->run_id, NULL);
	if (c->variant) {
		xml_open(x, "lab:kernel");
		xml_attr(x, "variant", c->variant);
		if (c->release)
			xml_attr(x, "release", c->release);
		xml_close(x);
	}
	if (c->image) {
		xml_open(x, "lab:image");
		xml_attr(x, "name", c->image);
		if (c->image_id)
			xml_attr(x, "id", c->image_id);
		xml_close(x);
	}
	xml_open(x, "lab:ssh");
	xml_attr(x, "address", "127.0.0.1");
	xml_attrf(x, "port", "%u", c->ssh_port);
	xml_close(x);
	xml_close(x);
	xml_close(x);
}

static void disk(struct xml *x, const char *device, const char *type, const char *file, const char *dev,
		 const char *bus, bool readonly)
{
	xml_open(x, "disk");
	xml_attr(x, "type", "file");
	xml_attr(x, "device", device);
	xml_empty(x, "driver", "name", "qemu", "type", type, NULL);
	xml_empty(x, "source", "file", file, NULL);
	xml_empty(x, "target", "dev", dev, "bus", bus, NULL);
	if (readonly)
		xml_empty(x, "readonly", NULL);
	xml_close(x);
}

/* name, title, metadata, memory and vCPU count */
static void identity_and_size(struct xml *x, const struct domain_config *c)
{
	const struct spec_topology *t = c->topo;

	xml_element(x, "name", c->name);
	{
		_cleanup_free_ char *title = xasprintf("lab %s: %s on %s", c->vm ? c->vm : c->name,
						       c->variant ? c->variant : "?", t->name);

		xml_element(x, "title", title);
	}
	metadata(x, c);
	xml_open(x, "memory");
	xml_attr(x, "unit", "KiB");
	{
		_cleanup_free_ char *m = xasprintf("%llu", (unsigned long long)kib(total_memory(t)));

		xml_text(x, m);
	}
	xml_close(x);
	{
		_cleanup_free_ char *n = xasprintf("%u", domain_vcpus(t));

		xml_open(x, "vcpu");
		xml_attr(x, "placement", "static");
		xml_text(x, n);
		xml_close(x);
	}
}

/* hugepage backing, direct kernel boot and platform features */
static void boot_and_features(struct xml *x, const struct domain_config *c)
{
	const struct spec_topology *t = c->topo;

	if (t->hugepages) {
		xml_open(x, "memoryBacking");
		xml_open(x, "hugepages");
		xml_empty(x, "page", "size", streq(t->hugepages, "1G") ? "1048576" : "2048", "unit", "KiB", NULL);
		xml_close(x);
		xml_close(x);
	}
	xml_open(x, "os");
	xml_open(x, "type");
	xml_attr(x, "arch", "x86_64");
	xml_attr(x, "machine", "q35");
	xml_text(x, "hvm");
	xml_close(x);
	xml_element(x, "kernel", c->kernel);
	xml_element(x, "cmdline", c->cmdline);
	xml_close(x);
	/* without acpi libvirt passes -no-acpi: one CPU, one node in the guest */
	xml_open(x, "features");
	xml_empty(x, "acpi", NULL);
	xml_empty(x, "apic", NULL);
	if (c->accel == ACCEL_KVM)
		xml_empty(x, "pmu", "state", "on", NULL);
	xml_close(x);
}

static void devices(struct xml *x, const struct domain_config *c)
{
	xml_open(x, "devices");
	disk(x, "disk", "qcow2", c->disk, "vda", "virtio", false);
	if (c->modules)
		disk(x, "disk", "raw", c->modules, "vdb", "virtio", true);
	disk(x, "cdrom", "raw", c->seed, "sda", "sata", true);
	xml_open(x, "serial");
	xml_attr(x, "type", "file");
	xml_empty(x, "source", "path", c->console, NULL);
	xml_empty(x, "target", "port", "0", NULL);
	xml_close(x);
	xml_empty(x, "controller", "type", "usb", "model", "none", NULL);
	xml_empty(x, "memballoon", "model", "none", NULL);
	xml_open(x, "rng");
	xml_attr(x, "model", "virtio");
	xml_open(x, "backend");
	xml_attr(x, "model", "random");
	xml_text(x, "/dev/urandom");
	xml_close(x);
	xml_close(x);
	xml_close(x);
}

/* A value in QEMU's KEY=VALUE,... option syntax, which doubles a comma. */
static void qemu_opt_value(struct strbuf *sb, const char *v)
{
	for (; *v; v++) {
		if (*v == ',')
			strbuf_addch(sb, ',');
		strbuf_addch(sb, *v);
	}
}

/* lab's instruction-counting TCG plugin (lab/plugin/lab-insn.c) */
static void insn_plugin(struct xml *x, const struct domain_config *c)
{
	_cleanup_strbuf_ struct strbuf arg = STRBUF_INIT;

	if (!c->insn_plugin)
		return;
	strbuf_addstr(&arg, "file=");
	qemu_opt_value(&arg, c->insn_plugin);
	strbuf_addstr(&arg, ",sock=");
	qemu_opt_value(&arg, c->insn_socket);
	xml_empty(x, "qemu:arg", "value", "-plugin", NULL);
	xml_empty(x, "qemu:arg", "value", arg.buf, NULL);
}

/* timing: icount: the guest's clock counts instructions (1 ns each) while
 * a vCPU runs; QEMU then runs TCG's vCPUs on one thread, which lab's
 * -accel tcg lets it. sleep=on: an idle guest's clock follows the host's;
 * with sleep=off it jumps to the next timer at once, and a guest waiting
 * on disk saw half an hour pass during its boot and failed ssh.service */
static void icount_args(struct xml *x, const struct domain_config *c)
{
	if (c->topo->timing != TIMING_ICOUNT)
		return;
	xml_empty(x, "qemu:arg", "value", "-icount", NULL);
	xml_empty(x, "qemu:arg", "value", "shift=0,sleep=on,align=off", NULL);
}

/* isolated user-mode networking: the guest reaches nothing, lab reaches its sshd;
 * its default addresses are the ones lab-seed.sh sets (image/seed.c) */
static void user_network(struct xml *x, const struct domain_config *c)
{
	_cleanup_free_ char *nd = xasprintf("user,id=labnet,restrict=on,hostfwd=tcp:127.0.0.1:%u-:22", c->ssh_port);
	_cleanup_free_ char *dev = c->mac ? xasprintf("virtio-net-pci,netdev=labnet,bus=pcie.0,addr=0x10,mac=%s",
						      c->mac)
					  : xstrdup("virtio-net-pci,netdev=labnet,bus=pcie.0,addr=0x10");

	xml_open(x, "qemu:commandline");
	xml_empty(x, "qemu:arg", "value", "-netdev", NULL);
	xml_empty(x, "qemu:arg", "value", nd, NULL);
	xml_empty(x, "qemu:arg", "value", "-device", NULL);
	xml_empty(x, "qemu:arg", "value", dev, NULL);
	insn_plugin(x, c);
	icount_args(x, c);
	xml_close(x);
}

void domain_format_xml(const struct domain_config *c, struct strbuf *out)
{
	struct xml x;

	xml_init(&x, out);
	xml_open(&x, "domain");
	xml_attr(&x, "type", c->accel == ACCEL_KVM ? "kvm" : "qemu");
	xml_attr(&x, "xmlns:qemu", "http://libvirt.org/schemas/domain/qemu/1.0");
	identity_and_size(&x, c);
	cputune(&x, c);
	numatune(&x, c);
	boot_and_features(&x, c);
	cpu(&x, c);
	xml_empty(&x, "clock", "offset", "utc", NULL);
	xml_element(&x, "on_poweroff", "destroy");
	/* a reboot ends the VM (a panic with panic=-1 shows); a VM playing a
	 * machine restarts instead, into the same kernel, as from its boot loader */
	xml_element(&x, "on_reboot", c->reboot_restarts ? "restart" : "destroy");
	xml_element(&x, "on_crash", "destroy");
	devices(&x, c);
	user_network(&x, c);
	xml_close(&x);
}
