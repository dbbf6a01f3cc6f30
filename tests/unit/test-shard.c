/* SPDX-License-Identifier: MIT */
/* Shards for a cluster: every group in exactly one shard, a block's groups
 * (both sides of a pair, every variant of a boot) never split, shards
 * balanced by runs within the largest block; and the spool's
 * content-addressed folders: reused, and refused when changed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "engine/shard.h"
#include "engine/spool.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/path.h"

/* Groups as the engine makes them: per boot b (1..nboots), one group per
 * variant of `runs[b % nruns]` runs (boot: once), on host hosts[b % nhosts]. */
static struct run_group *make_groups(unsigned nboots, unsigned nvariants, const size_t *runs, size_t nruns,
				     size_t *ret_n)
{
	struct run_group *g = xcalloc((size_t)nboots * nvariants + 1, sizeof(*g));
	size_t n = 0, run = 0;

	for (unsigned b = 1; b <= nboots; b++)
		for (unsigned v = 0; v < nvariants; v++) {
			struct run_group *k = &g[n++];

			k->boot = b;
			for (size_t j = 0; j < runs[b % nruns]; j++) {
				GROW(k->runs, k->alloc, k->n + 1);
				k->runs[k->n++] = run++;
			}
		}
	*ret_n = n;
	return g;
}

static void free_groups(struct run_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].runs);
	free(g);
}

/* The invariants of a plan of nboots boots of nvariants variants onto ntasks nodes. */
static void check_plan(unsigned nboots, unsigned nvariants, const size_t *runs, size_t nruns, size_t ntasks,
		       size_t want_shards)
{
	size_t ng, nb, ns, maxblock = 0, lo = SIZE_MAX, hi = 0;
	struct run_group *g = make_groups(nboots, nvariants, runs, nruns, &ng);
	struct shard_block *b;
	struct shard *s;
	int *seen = xcalloc(ng + 1, sizeof(int)), *shard_of_boot = xcalloc(nboots + 2, sizeof(int));

	shard_blocks(g, ng, NULL, &b, &nb);
	assert_int_equal(nb, nboots); /* one block per boot: all its variants */
	for (size_t i = 0; i < nb; i++) {
		assert_int_equal(b[i].n, nvariants);
		assert_int_equal(b[i].boot, i + 1);
		if (b[i].runs > maxblock)
			maxblock = b[i].runs;
	}
	shard_plan(b, nb, ntasks, &s, &ns);
	assert_int_equal(ns, want_shards);
	for (size_t k = 0; k < ns; k++) {
		size_t runs_here = 0;

		assert_true(s[k].n > 0);
		for (size_t j = 0; j < s[k].n; j++) {
			const struct shard_block *blk = &b[s[k].blocks[j]];

			/* blocks in the plan's order inside a shard */
			if (j)
				assert_true(s[k].blocks[j] > s[k].blocks[j - 1]);
			assert_int_equal(shard_of_boot[blk->boot], 0);
			shard_of_boot[blk->boot] = (int)k + 1;
			for (size_t q = 0; q < blk->n; q++) {
				seen[blk->groups[q]]++;
				runs_here += g[blk->groups[q]].n;
			}
		}
		assert_int_equal(runs_here, s[k].runs);
		lo = s[k].runs < lo ? s[k].runs : lo;
		hi = s[k].runs > hi ? s[k].runs : hi;
	}
	for (size_t i = 0; i < ng; i++)
		assert_int_equal(seen[i], 1); /* every group once */
	for (unsigned bt = 1; bt <= nboots; bt++) /* every boot on a shard */
		assert_true(shard_of_boot[bt] > 0);
	assert_true(hi - lo <= maxblock);
	shards_free(s, ns);
	shard_blocks_free(b, nb);
	free_groups(g, ng);
	free(seen);
	free(shard_of_boot);
}

static void test_pairs_never_split(void **state)
{
	static const size_t two[] = { 2 };

	(void)state;
	check_plan(6, 2, two, 1, 2, 2);  /* 6 boots of a pair on 2 nodes */
	check_plan(3, 2, two, 1, 8, 3);  /* fewer blocks than nodes: one each */
	check_plan(1, 2, two, 1, 1, 1);
}

static void test_eight_nodes_uneven_blocks(void **state)
{
	static const size_t uneven[] = { 1, 5, 2, 9, 3 };

	(void)state;
	check_plan(40, 3, uneven, 5, 8, 8);
	check_plan(9, 4, uneven, 5, 8, 8);
	check_plan(100, 2, uneven, 5, 7, 7);
}

static void test_hosts_and_unknown_boots(void **state)
{
	struct run_group g[4] = { 0 };
	size_t r[4] = { 0, 1, 2, 3 };
	const char *hosts[4] = { "a", "b", "a", NULL };
	struct shard_block *b;
	size_t nb;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		g[i].runs = &r[i];
		g[i].n = 1;
		g[i].boot = i < 3 ? 1 : 0;
	}
	shard_blocks(g, 4, hosts, &b, &nb);
	/* boot 1 on host a (groups 0, 2), boot 1 on b, and the one of no boot alone */
	assert_int_equal(nb, 3);
	assert_int_equal(b[0].n, 2);
	assert_int_equal(b[0].groups[1], 2);
	assert_int_equal(b[1].groups[0], 1);
	assert_int_equal(b[2].groups[0], 3);
	shard_blocks_free(b, nb);
}

static void test_spool(void **state)
{
	char tmpl[] = "/tmp/lab-spool-XXXXXX";
	char *root = mkdtemp(tmpl);
	_cleanup_free_ char *from = path_join(root, "from"), *spool = path_join(root, "spool");
	_cleanup_free_ char *in = NULL, *a = NULL, *extra = NULL;
	char d1[SHA256_HEX_LEN + 1], d2[SHA256_HEX_LEN + 1];
	struct diags d = { 0 };

	(void)state;
	assert_non_null(root);
	path_mkdir_p(from, 0755);
	a = path_join(from, "bzImage");
	fs_write_atomic(a, "kernel", 6, 0644);
	free(a);
	a = path_join(from, "config");
	fs_write_atomic(a, "CONFIG_X=y\n", 11, 0644);
	assert_int_equal(spool_put(spool, "kernels", "0123abcd", from, d1, &d), 0);
	in = path_join(spool, "kernels/0123abcd");
	assert_int_equal(spool_check(in, d1, &d), 0);
	/* there already: reused, same digest */
	assert_int_equal(spool_put(spool, "kernels", "0123abcd", from, d2, &d), 0);
	assert_string_equal(d1, d2);
	/* another digest is another folder */
	d2[0] = d2[0] == 'a' ? 'b' : 'a';
	assert_true(spool_check(in, d2, &d) < 0);
	diags_release(&d);
	/* a file changed under the same MANIFEST: refused (a copy, not the
	 * hard link the spool made on this file system) */
	free(a);
	a = path_join(in, "config");
	unlink(a);
	fs_write_atomic(a, "CONFIG_X=n\n", 11, 0644);
	assert_true(spool_check(in, d1, &d) < 0);
	assert_non_null(strstr(d.v[0].msg, "config"));
	diags_release(&d);
	fs_write_atomic(a, "CONFIG_X=y\n", 11, 0644);
	assert_int_equal(spool_check(in, d1, &d), 0);
	/* a file added: refused */
	extra = path_join(in, "evil");
	fs_write_atomic(extra, "x", 1, 0644);
	assert_true(spool_check(in, d1, &d) < 0);
	diags_release(&d);
	/* a bad name never reaches the file system */
	assert_true(spool_put(spool, "kernels", "../x", from, d2, &d) < 0);
	diags_release(&d);
	fs_remove_tree(root);
}


/* A shard.json's "lab" is a version, printed to the node's terminal and the
 * head's: anything a terminal acts on (ESC, C1, a newline) is refused. */
static void test_shard_lab_version(void **state)
{
	static const char *const labs[] = { "0.1", "0.1-42-gdeadbeef-dirty", "0.1\\u001b[31m", "0.1\\u009b2J",
					     "0.1\\nnode n9: ok", "" };
	static const bool ok[] = { true, true, false, false, false, false };

	(void)state;
	for (size_t i = 0; i < sizeof(labs) / sizeof(labs[0]); i++) {
		_cleanup_free_ char *json = xasprintf(
			"{\"lab\": \"%s\", \"run\": \"20261201-162854-0001\", \"experiment\": \"pair\", \"shard\": 0, "
			"\"kernels\": [{\"variant\": \"base\", \"key\": \"%064d\", \"digest\": \"%064d\"}], "
			"\"image\": {\"id\": \"%016d\", \"digest\": \"%064d\"}}",
			labs[i], 1, 2, 3, 4);
		struct shard_spec sp = { 0 };
		char *err = NULL;
		int r = shard_spec_parse("shard.json", json, strlen(json), &sp, &err);

		print_message("lab %s: %s\n", labs[i], r == 0 ? "accepted" : err);
		assert_int_equal(r == 0, ok[i]);
		if (r == 0)
			shard_spec_release(&sp);
		else
			assert_non_null(strstr(err, "lab"));
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_never_split),
		cmocka_unit_test(test_eight_nodes_uneven_blocks),
		cmocka_unit_test(test_hosts_and_unknown_boots),
		cmocka_unit_test(test_spool),
		cmocka_unit_test(test_shard_lab_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
