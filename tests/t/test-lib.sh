# test-lib.sh: shell tests of the CLI as a user drives it, after git's
# t/test-lib.sh. Each test file sources this, declares tests with
# test_expect_success, and ends with test_done. Output is TAP.
#
#   test_expect_success [PREREQ,...] 'description' 'commands'
#   test_set_prereq NAME / test_have_prereq NAME
#   test_skip_all 'reason'
# A test skips only when a prerequisite is truly missing, and says which.
#
# Two tiers (README: Tests). A test that needs the prerequisite FULL
# (repetitions, fault paths) runs only under `make test-full`
# (LAB_TEST_FULL=1); `make test` lists it as skipped, saying so.
#
# A real-VM file declares what it costs, for each tier:
#   # lab-test-seconds: N       seconds under `make test` (tests/run-all
#   # lab-test-seconds-full: N  balances its lanes by them)
#   # lab-test-boots: N         guests it may boot under `make test`,
#   # lab-test-boots-full: N    and under `make test-full`
# test_done counts the guests the file booted (lab's boot journal in its
# state folder, and test_boot_journal for a QEMU it starts itself) and
# fails the file when it booted more than it declares: a count of boots
# does not depend on the machine's load, seconds do.

set -u
TEST_DIRECTORY=$(cd "$(dirname "$0")/.." && pwd)
TEST_FILE=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
SRC_DIR=$(cd "$TEST_DIRECTORY/.." && pwd)
: "${LAB:=$SRC_DIR/build/lab}"
test_count=0
test_failed=0
test_prereqs=" "
test_t0=$(date +%s)
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/lab-test.XXXXXX")
# LAB_TEST_KEEP=1 keeps the file's folder (its projects, results and logs)
# and says where, as git's test-lib does with --debug
test_remove_trash() {
	if [ -n "${LAB_TEST_KEEP:-}" ]; then
		echo "# kept: $TRASH"
	else
		rm -rf "$TRASH"
	fi
}
trap test_remove_trash EXIT
cd "$TRASH" || exit 1

lab() { "$LAB" "$@"; }

test_set_prereq() { test_prereqs="$test_prereqs$1 "; }
test_have_prereq() {
	for p in $(echo "$1" | tr ',' ' '); do
		case "$test_prereqs" in *" $p "*) ;; *) return 1 ;; esac
	done
	return 0
}
missing_prereqs() {
	out=""
	for p in $(echo "$1" | tr ',' ' '); do
		case "$test_prereqs" in *" $p "*) ;; *) out="$out $p" ;; esac
	done
	echo "${out# }"
}

test_expect_success() {
	prereq=""
	if [ $# -eq 3 ]; then prereq=$1; shift; fi
	test_count=$((test_count + 1))
	if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
		case " $(missing_prereqs "$prereq") " in
		*" FULL "*) echo "ok $test_count # skip $1 (the full tier: make test-full)" ;;
		*) echo "ok $test_count # skip $1 (missing $(missing_prereqs "$prereq"))" ;;
		esac
		return 0
	fi
	if (set -e; eval "$2") >"$TRASH/.out" 2>&1; then
		echo "ok $test_count - $1"
	else
		test_failed=$((test_failed + 1))
		{
			echo "not ok $test_count - $1"
			echo "#   commands:"
			printf '%s\n' "$2" | sed 's/^/#     /'
			# last, so that a tail of this (CI prints 60 lines) shows what failed
			echo "#   what they printed:"
			sed 's/^/#   /' "$TRASH/.out"
		} | if [ -n "${LAB_TEST_FAILURES:-}" ]; then
			tee -a "$LAB_TEST_FAILURES/$(basename "$0" .sh)"
		else
			cat
		fi
	fi
}

test_skip_all() {
	echo "1..0 # skip $1"
	exit 0
}

# test_declared KEY: the number this file declares as `# KEY: N`, in this
# tier (KEY-full under make test-full, when the file gives one)
test_declared() {
	_v=
	[ -z "${LAB_TEST_FULL:-}" ] ||
		_v=$(sed -n "s/^# $1-full: \([0-9][0-9]*\).*/\1/p" "$TEST_FILE" | head -n 1)
	[ -n "$_v" ] || _v=$(sed -n "s/^# $1: \([0-9][0-9]*\).*/\1/p" "$TEST_FILE" | head -n 1)
	echo "$_v"
}

# test_boot_journal NAME: a guest this test starts itself (QEMU without
# lab) goes into the boot journal, as lab's own boots do
test_boot_journal() {
	mkdir -p "$TRASH/state/lab" &&
	printf '%s\t%s\t-\ttcg\tlocal\n' "$(date +%s)" "$1" >>"$TRASH/state/lab/boots.log"
}

test_done() {
	# a boot again after QEMU crashed (the journal's "again") is the
	# emulator's fault, not the test's: said, not counted
	_boots=0 _again=0 _declared=$(test_declared lab-test-boots)
	if [ -f "$TRASH/state/lab/boots.log" ]; then
		_again=$(grep -c '	again$' "$TRASH/state/lab/boots.log" || :)
		_boots=$(($(wc -l <"$TRASH/state/lab/boots.log") - _again))
	fi
	[ "$_again" -eq 0 ] || echo "# $_again boot(s) again after QEMU crashed during a boot, not counted"
	if [ "$_boots" -gt "${_declared:-0}" ]; then
		test_count=$((test_count + 1)) test_failed=$((test_failed + 1))
		echo "not ok $test_count - booted $_boots guests, declares ${_declared:-none} (# lab-test-boots)" |
			if [ -n "${LAB_TEST_FAILURES:-}" ]; then
				tee -a "$LAB_TEST_FAILURES/$(basename "$0" .sh)"
			else
				cat
			fi
	fi
	# for tests/run-all's summary: declared and measured seconds, boots
	if [ -n "${LAB_SUITE_DIR:-}" ] && mkdir -p "$LAB_SUITE_DIR/cost"; then
		_secs=$(test_declared lab-test-seconds)
		echo "${_secs:--} $(($(date +%s) - test_t0)) ${_declared:--} $_boots" >"$LAB_SUITE_DIR/cost/$(basename "$0")"
	fi
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
}

# Helpers in the spirit of git's: each fails loudly with what it saw.
test_cmp() {
	diff -u "$1" "$2"
}
test_must_fail_with() {
	want=$1; shift
	set +e
	"$@"
	got=$?
	set -e
	if [ "$got" -ne "$want" ]; then
		echo "expected exit $want, got $got from: $*" >&2
		return 1
	fi
}
test_grep() {
	if ! grep "$@"; then
		echo "no match for 'grep $*'; the file was:" >&2
		eval "cat \"\${$#}\"" >&2
		return 1
	fi
}
test_line_count() {
	n=$(wc -l <"$3")
	if ! [ "$n" "$1" "$2" ]; then
		echo "expected $1 $2 lines in $3, got $n" >&2
		return 1
	fi
}
# run_journal RUN_DIR...: each stored run's runs as tab-separated lines
# (id, status, variant, job, repeat, group, release, error; "-" for none),
# from run.json, for tests to grep
run_journal() {
	python3 - "$@" <<'PY'
import json, sys
for d in sys.argv[1:]:
    try:
        runs = json.load(open(d.rstrip("/") + "/run.json"))["runs"]
    except OSError:
        continue
    for r in runs:
        f = [r["id"], r["status"], r["variant"], r["job"], r["repeat"], r["group"], r["release"], r["error"]]
        print("\t".join("-" if v is None else " ".join(str(v).split("\n")).replace("\t", " ") for v in f))
PY
}

[ -z "${LAB_TEST_FULL:-}" ] || test_set_prereq FULL
command -v valgrind >/dev/null 2>&1 && test_set_prereq VALGRIND
command -v python3 >/dev/null 2>&1 && test_set_prereq PYTHON3

# The real-VM tests need: the tools, root (mmdebstrap --mode=root), the
# kernel source, the Debian archive and libvirt's QEMU driver; else they
# skip, naming what is missing. They share lab's cache (~/.cache/lab, or $LAB_TEST_CACHE), kept between runs.
test_require_vm() {
	_missing=""
	for _p in qemu-system-x86_64 qemu-img genisoimage ssh ssh-keygen mmdebstrap mkfs.ext4 make flex bison bc "$@"; do
		command -v "$_p" >/dev/null || _missing="$_missing $_p"
	done
	[ -z "$_missing" ] || test_skip_all "missing:$_missing (make deps installs them)"
	[ "$(id -u)" = 0 ] || test_skip_all "the image build needs root (mmdebstrap --mode=root)"
	[ -f /usr/src/linux-source-6.1.tar.xz ] || test_skip_all "linux-source-6.1 is missing (make deps installs it)"
	getent hosts deb.debian.org >/dev/null ||
		test_skip_all "the Debian archive (deb.debian.org) does not resolve"
	# one cache outside the clone, kept between runs (keys are content
	# hashes: a stale entry is never taken for a current one)
	if [ -n "${LAB_TEST_CACHE:-}" ]; then
		export XDG_CACHE_HOME="$LAB_TEST_CACHE"
		mkdir -p "$XDG_CACHE_HOME"
	fi
	# a state folder of this test's own: its VMs, and the boot journal
	# test_done counts
	export XDG_STATE_HOME="$TRASH/state"
	test_project || { echo "Bail out! cannot make the tests' project in $TRASH/project"; exit 1; }
}

# test_project: P, the tests' project: the shipped lab.yaml with the test
# kernel (start: tinyconfig + kernels/configs/test.config, through the vars
# kernel_start and kernel_config) beside the shipped kernels/, images/ and
# workloads/. It holds exactly what the tests' guests use and builds in a
# fraction of the experiments' kernel's time (bench/kernel-build prints
# both). LAB_TEST_KERNEL=shipped runs the tests on the shipped project, the
# experiments' kernels (defconfig + guest.config) as they are.
test_project() {
	P=$SRC_DIR
	[ "${LAB_TEST_KERNEL:-}" != shipped ] || return 0
	P=$TRASH/project
	[ -f "$P/lab.yaml" ] || "$SRC_DIR/tests/tools/test-project" "$P"
}

# test_require_libvirt_vm [tools]: test_require_vm, libvirt's QEMU driver,
# a private state folder (VMs of this test only) and every VM torn down at
# exit. Sets P (the project) and W (its workload catalogue).
test_require_libvirt_vm() {
	test_require_vm "$@"
	id libvirt-qemu >/dev/null 2>&1 ||
		test_skip_all "libvirt's QEMU driver is not installed (make deps: libvirt-daemon-system)"
	W=$SRC_DIR/workloads
	# the suite's shared guests (test_shared_vm) live in LAB_SUITE_DIR,
	# which tests/run-all makes and t9990 tears down; a test run on its
	# own gets a folder of its own, torn down with it
	if [ -n "${LAB_SUITE_DIR:-}" ]; then
		SUITE_STATE=$LAB_SUITE_DIR/state
	else
		SUITE_STATE=$TRASH/suite-state
	fi
	trap 'lab -C "$P" -q vm down --all >/dev/null 2>&1
		[ -n "${LAB_SUITE_DIR:-}" ] || XDG_STATE_HOME="$SUITE_STATE" lab -C "$P" -q vm down --all >/dev/null 2>&1
		test_remove_trash' EXIT
}

# test_node_lab: the path of a lab for Slurm's nodes (engine: lab:): this
# lab without LeakSanitizer. Under slurmstepd, LSan's stop-the-world tracer
# crashes at random at exit ("Tracer caught signal 11 ... LeakSanitizer has
# encountered a fatal error", google/sanitizers#1353), failing a shard or a
# probe that did its work; the head and every local lab keep leak checking.
test_node_lab() {
	cat >"$TRASH/node-lab" <<-EOF
	#!/bin/sh
	ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0" exec "$LAB" "\$@"
	EOF
	chmod +x "$TRASH/node-lab" && echo "$TRASH/node-lab"
}

# shared_lab ARGS...: lab with the state folder of the suite's shared guests
shared_lab() {
	XDG_STATE_HOME="$SUITE_STATE" lab "$@"
}

# test_shared_vm NAME IMAGE: the suite's shared guest NAME: the base kernel
# and IMAGE on quick-2x2 with the quick experiment, the catalogue unpacked
# in /tmp/wl. Booted by the first test of the suite that asks for it (under
# a lock) and kept up for the next ones, so the suite boots it once; `vm
# up`'s JSON is in $SUITE_STATE/NAME.up.json. Tests that share it write
# only below /tmp in the guest, under names of their own, and leave its
# kernel, sysctls and cgroups as they found them. t9990 takes it down.
test_shared_vm() {
	mkdir -p "$SUITE_STATE" &&
	(
		# bounded: a lock never released (a holder that kept this
		# descriptor, which t1200 checks it does not) fails, not hangs
		flock -w 900 9 || { echo "test_shared_vm: $SUITE_STATE/.lock held for 15 minutes" >&2; exit 1; }
		if ! shared_lab -C "$P" vm ssh "$1" true >/dev/null 2>&1; then
			shared_lab -C "$P" -q vm down "$1" >/dev/null 2>&1
			lab -C "$P" -q kernel build base &&
			lab -C "$P" -q image build "$2" &&
			shared_lab -C "$P" --json vm up quick-2x2 --kernel base --image "$2" -e quick \
				--name "$1" >"$SUITE_STATE/$1.up.json" &&
			copy_catalogue shared_lab "$1" "$SUITE_STATE/$1.wl.tar"
		fi
	) 9>>"$SUITE_STATE/.lock"
}

# test_catalogue_vm NAME IMAGE: the base kernel and IMAGE built, VM NAME up
# on quick-2x2 with the quick experiment, the catalogue unpacked in /tmp/wl.
test_catalogue_vm() {
	lab -C "$P" -q kernel build base &&
	lab -C "$P" -q image build "$2" &&
	lab -C "$P" -q vm up quick-2x2 --kernel base --image "$2" -e quick --name "$1" >/dev/null &&
	copy_catalogue lab "$1" "$PWD/wl.tar"
}

# copy_catalogue LAB NAME TAR: the workload catalogue packed into TAR and
# unpacked in guest NAME's /tmp/wl, through LAB (lab or shared_lab)
copy_catalogue() {
	tar -C "$W" -cf "$3" . &&
	"$1" -C "$P" vm cp "$2" "$3" :/tmp/wl.tar &&
	"$1" -C "$P" vm ssh "$2" sh -c 'mkdir -p /tmp/wl /tmp/mon /tmp/out && tar -C /tmp/wl -xf /tmp/wl.tar'
}
