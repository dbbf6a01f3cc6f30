#!/bin/sh
# Kernel variants on the real source (Debian's linux-source-6.1), without
# full builds: every backport series (and every step of the PCP sweep)
# applies and the objects it touches compile with its experiment's config;
# a rejected hunk, a failed assertion and a dropped fragment symbol are
# reported with file, line and content. Minutes, not a full build: the
# cache (lab's, or LAB_TEST_CACHE) keeps the unpacked tree and object folders.
# lab-test-seconds: 130 (make test here: 122 s and 131 s on 2026-12-06/07, with the other lane busy; tests/run-all balances its two lanes by it)
. "$(dirname "$0")/test-lib.sh"

if [ -f /usr/src/linux-source-6.1.tar.xz ] && command -v make >/dev/null && command -v flex >/dev/null &&
	command -v bison >/dev/null && command -v bc >/dev/null && [ -f /usr/include/libelf.h ]; then
	test_set_prereq KSRC
else
	test_skip_all "linux-source-6.1 or the kernel build tools are missing (make deps installs them)"
fi

if [ -n "${LAB_TEST_CACHE:-}" ]; then export XDG_CACHE_HOME="$LAB_TEST_CACHE"; mkdir -p "$XDG_CACHE_HOME"; fi
P=$SRC_DIR

test_expect_success 'kernel list shows every variant and sweep step' "
	lab -C '$P' kernel list >list &&
	for v in base tg-ratelimit pcp-auto pcp-auto@1 pcp-auto@9 base-offstack cpupri-split; do
		test_grep -q \"^\$v \" list || exit 1
	done &&
	test_grep -q '^pcp-auto@5 .* 5 ' list
"

test_expect_success 'kernel show lists the series with content hashes' "
	lab -C '$P' kernel show cpupri-split >show &&
	test_grep -q '^patch: *[0-9a-f]\{12\}  .*/0001-' show &&
	test_grep -q '^fragment: .*maxsmp.config' show &&
	test_grep -q '^require: *CONFIG_CPUMASK_OFFSTACK=y' show
"

for v in tg-ratelimit pcp-auto@1 pcp-auto@3 pcp-auto@5 pcp-auto@7 pcp-auto@9 cpupri-split; do
	test_expect_success KSRC "series of $v applies and its objects compile" "
		lab -C '$P' --json kernel check '$v' >out 2>err &&
		python3 -c '
import json, sys
a = json.load(open(\"out\"))[0]
assert a[\"checked_objects\"], a
assert all(r[\"ok\"] for r in a[\"require\"]), a[\"require\"]
print(\" \".join(a[\"checked_objects\"]))
'
	"
done

test_expect_success KSRC 'the cpupri variants really have CPUMASK_OFFSTACK' "
	lab -C '$P' kernel config cpupri-split >cfg 2>err &&
	test_grep -q '^ok   CONFIG_CPUMASK_OFFSTACK=y (final: y)' cfg
"

test_expect_success KSRC 'base and patched of one experiment end with identical configs' "
	lab -C '$P' kernel config -e quick >cfg 2>err &&
	test_grep -q \"configs of 'base' and 'tg-ratelimit' are identical\" err
"

# A project of our own with broken variants.
lab init proj >/dev/null
sed 's/^ static inline void update_tg_load_avg(struct cfs_rq \*cfs_rq)$/ static void update_tg_load_avg_renamed(struct cfs_rq *cfs_rq)/' \
	"$P"/kernels/patches/sched-fair-ratelimit-tg-load-avg/0001-*.patch >proj/broken.patch
echo 'CONFIG_NOT_A_KCONFIG_SYMBOL=y' >proj/bogus.config
cat >proj/extra.yaml <<EOF
kernels:
  broken:
    from: base
    patches: [broken.patch]
  unasserted:
    from: base
    require:
      CONFIG_CPUMASK_OFFSTACK: y
  dropped:
    from: base
    config: [bogus.config]
EOF
sed -i 's/^version: 1$/version: 1\ninclude: [extra.yaml]/' proj/lab.yaml

test_expect_success KSRC 'a hunk that does not apply is shown with its place and lines' '
	test_must_fail_with 1 lab -C proj kernel check broken 2>err &&
	test_grep -q "broken.patch:[0-9]*:1: hunk 1 of kernel/sched/fair.c (patch lines [0-9]*-[0-9]*) does not apply at line [0-9]* of the tree" err &&
	test_grep -q "^ static void update_tg_load_avg_renamed" err
'

test_expect_success KSRC 'an assertion the final .config does not meet is an error naming the symbol' '
	test_must_fail_with 1 lab -C proj kernel config unasserted 2>err &&
	test_grep -q "extra.yaml:8:7: kernel .unasserted. requires CONFIG_CPUMASK_OFFSTACK=y but the final .config has it unset" err
'

test_expect_success KSRC 'a fragment symbol Kconfig dropped is an error naming file and line' '
	test_must_fail_with 1 lab -C proj kernel config dropped 2>err &&
	test_grep -q "bogus.config:1:1: CONFIG_NOT_A_KCONFIG_SYMBOL=y was dropped by Kconfig" err
'

test_expect_success 'kernel with no variant is a usage error' "
	test_must_fail_with 2 lab -C '$P' kernel build 2>err &&
	test_grep -q 'name variants or an experiment' err &&
	test_must_fail_with 2 lab -C '$P' kernel frobnicate 2>err
"

test_done
