# Helpers for workload and monitor scripts that run in the guest (or on a
# bare-metal host); sourced, POSIX sh. lab passes every parameter as
# LAB_PARAM_<NAME> (upper case), defaults already applied.

# lab_cpus VALUE: "8" -> 8; "75%" -> 75% of the online CPUs, at least 1.
lab_cpus() {
	case $1 in
	*%) awk -v n="$(nproc)" -v p="${1%\%}" 'BEGIN { c = int(n * p / 100); if (c < 1) c = 1; print c }' ;;
	*) echo "$1" ;;
	esac
}

# lab_in_cgroup PATH CMD...: run CMD in the cgroup v2 group PATH (made if
# missing; lab's seed has delegated the controllers); "" runs it in place.
lab_in_cgroup() {
	lab_join_cgroup "$1"
	shift
	exec "$@"
}

# lab_ctxt: the system's context switches so far (/proc/stat).
lab_ctxt() {
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}

# lab_join_cgroup PATH: move this shell (and so every child it starts
# later) into the cgroup v2 group PATH, made if missing; "" stays put.
# On the way down the cpu, cpuset, memory, io and pids controllers are
# enabled where the kernel has them (as lab's seed does for declared groups).
lab_join_cgroup() {
	[ -n "$1" ] || return 0
	dir=/sys/fs/cgroup
	rest=$1
	while [ -n "$rest" ]; do
		for c in cpu cpuset memory io pids; do
			grep -qw "$c" "$dir/cgroup.controllers" 2>/dev/null &&
				echo "+$c" >"$dir/cgroup.subtree_control" 2>/dev/null || true
		done
		dir=$dir/${rest%%/*}
		case $rest in */*) rest=${rest#*/} ;; *) rest= ;; esac
		mkdir -p "$dir"
	done
	echo $$ >"$dir/cgroup.procs"
}

# lab_seconds DURATION: "90" or "90s" -> 90, "5m" -> 300, "1h" -> 3600,
# "500ms" -> 1 (rounded up: tools here take whole seconds).
lab_seconds() {
	awk -v d="$1" 'BEGIN {
		if (match(d, /^[0-9]+(\.[0-9]+)?/) == 0) { print "lab_seconds: bad duration " d > "/dev/stderr"; exit 1 }
		n = substr(d, 1, RLENGTH); u = substr(d, RLENGTH + 1)
		if (u == "" || u == "s") f = 1; else if (u == "ms") f = 0.001; else if (u == "m" || u == "min") f = 60
		else if (u == "h") f = 3600; else { print "lab_seconds: bad unit in " d > "/dev/stderr"; exit 1 }
		s = n * f; if (s != int(s)) s = int(s) + 1; if (s > 0 && s < 1) s = 1; print s }'
}

# lab_mem_mib: the guest's memory in MiB (MemTotal).
lab_mem_mib() {
	awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo
}

# lab_wait_listen PORT [SECONDS]: wait until something listens on TCP PORT
# of 127.0.0.1 or any address (/proc/net/tcp and tcp6, state 0A), at most
# SECONDS (default 30); 1 and a message on stderr if nothing did. A fixed
# sleep is not enough: a loaded guest under TCG can take seconds to start a
# server.
lab_wait_listen() {
	hex=$(printf '%04X' "$1")
	tries=$((${2:-30} * 10))
	while [ "$tries" -gt 0 ]; do
		awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	echo "lab_wait_listen: nothing listens on port $1 after ${2:-30} s" >&2
	return 1
}

# lab_quiesce: what lab's driver runs before each measured run (experiment
# `quiesce: true`, the default): wait for the boot's jobs to end (cloud-init's
# stage among them; not `cloud-init status --wait`, which waits for the
# stages lab's image masks), stop every systemd timer still active (the image
# masks apt, man-db, fstrim, e2scrub and logrotate; systemd-tmpfiles-clean
# and any other would fire mid-run; a stop lasts until the next boot), flush
# dirty pages and drop the page cache, dentries and inodes, so every run
# starts from the same cache state before its warm-up. Best effort: what it
# could not do is said on stderr, the run goes on. Prints what it did and
# how long it took.
lab_quiesce() {
	t0=$(date +%s%N)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		state=$(timeout 60 systemctl is-system-running --wait 2>/dev/null) || true
		echo "system: ${state:-still starting after 60 s}"
		timers=$(systemctl list-units --type=timer --state=active --plain --no-legend 2>/dev/null | awk '{ print $1 }')
		if [ -n "$timers" ]; then
			# shellcheck disable=SC2086 # unit names have no spaces
			systemctl stop $timers || echo "lab_quiesce: could not stop $timers" >&2
			echo "stopped timers: $(echo "$timers" | tr '\n' ' ')"
		fi
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "lab_quiesce: cannot drop caches (not root?)" >&2
	t1=$(date +%s%N)
	echo "quiesced in $(((t1 - t0) / 1000000)) ms"
}
