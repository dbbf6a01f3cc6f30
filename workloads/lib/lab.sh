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
	cg=$1
	shift
	if [ -n "$cg" ]; then
		mkdir -p "/sys/fs/cgroup/$cg"
		echo $$ > "/sys/fs/cgroup/$cg/cgroup.procs"
	fi
	exec "$@"
}

# lab_ctxt: the system's context switches so far (/proc/stat).
lab_ctxt() {
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}
