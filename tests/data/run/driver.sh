#!/bin/sh
# lab run quick.0001: stress-ng on base, repeat 1. Exit status: 0 ok, 10 setup, 11 warm-up,
# 12 a monitor did not start, 13 the workload failed.
set -u
cd /var/lib/lab/wl || exit 10
OUT=/var/lib/lab/out
rm -rf "$OUT" && mkdir -p "$OUT/mon" || exit 10
export LAB_MON_DIR="$OUT/mon"
[ -r /var/lib/lab/System.map ] && export LAB_SYSTEM_MAP=/var/lib/lab/System.map
uname -a >"$OUT/uname"
env LAB_PARAM_STRESSOR=switch LAB_PARAM_DURATION=20s LAB_PARAM_EXTRA='--taskset '\''0,1'\''; rm -rf /' ./stress-ng/setup >"$OUT/setup.log" 2>&1 || exit 10
(. ./lib/lab.sh && lab_quiesce) >"$OUT/quiesce.log" 2>&1
env LAB_PARAM_STRESSOR=switch LAB_PARAM_DURATION=5s LAB_PARAM_EXTRA='--taskset '\''0,1'\''; rm -rf /' ./stress-ng/run >/dev/null 2>"$OUT/warmup.log" || exit 11
env ./monitors/cpu-stat/start 2>"$OUT"/cpu-stat.start.log || exit 12
env LAB_PARAM_INTERVAL=1s ./monitors/zoneinfo-pcp/start 2>"$OUT"/zoneinfo-pcp.start.log || exit 12
env LAB_PARAM_STRESSOR=switch LAB_PARAM_DURATION=20s LAB_PARAM_EXTRA='--taskset '\''0,1'\''; rm -rf /' ./stress-ng/run >"$OUT"/stress-ng.raw 2>"$OUT"/stress-ng.log
rc=$?
./monitors/zoneinfo-pcp/stop >"$OUT"/zoneinfo-pcp.raw 2>"$OUT"/zoneinfo-pcp.stop.log
./monitors/cpu-stat/stop >"$OUT"/cpu-stat.raw 2>"$OUT"/cpu-stat.stop.log
[ "$rc" -eq 0 ] || exit 13
