#!/bin/sh
# lab run quick.0002: hackbench on base, repeat 1. Exit status: 0 ok, 10 setup, 11 warm-up,
# 12 a monitor did not start, 13 the workload failed.
set -u
cd /var/lib/lab/wl || exit 10
OUT=/var/lib/lab/out
rm -rf "$OUT" && mkdir -p "$OUT/mon" || exit 10
export LAB_MON_DIR="$OUT/mon"
[ -r /var/lib/lab/System.map ] && export LAB_SYSTEM_MAP=/var/lib/lab/System.map
uname -a >"$OUT/uname"
env ./monitors/cpu-stat/start 2>"$OUT"/cpu-stat.start.log || exit 12
echo 'lab: window start'
env ./hackbench/run >"$OUT"/hackbench.raw 2>"$OUT"/hackbench.log </dev/null
rc=$?
echo 'lab: window stop'
./monitors/cpu-stat/stop >"$OUT"/cpu-stat.raw 2>"$OUT"/cpu-stat.stop.log
[ "$rc" -eq 0 ] || exit 13
