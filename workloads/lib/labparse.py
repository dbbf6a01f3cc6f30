"""Shared helpers of lab's parse scripts (run on the controller)."""
import sys


def fail(name, path, why):
    sys.stderr.write("%s parse: %s: %s\n" % (name, path, why))
    sys.exit(1)


def snapshots(name, path):
    """'== start' / '== stop' sections of 'key value' lines -> two dicts of ints."""
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        fail(name, path, e.strerror)
    snaps, cur = {}, None
    for n, line in enumerate(lines, 1):
        if line in ("== start", "== stop"):
            cur = snaps.setdefault(line[3:], {})
            continue
        parts = line.split()
        if cur is None or len(parts) != 2:
            fail(name, path, "line %d: not a 'counter value' line: %r" % (n, line))
        try:
            cur[parts[0]] = int(parts[1])
        except ValueError:
            fail(name, path, "line %d: '%s' is not an integer" % (n, parts[1]))
    if "start" not in snaps or "stop" not in snaps or not snaps["start"] or not snaps["stop"]:
        fail(name, path, "need a start and a stop snapshot (was the monitor stopped?)")
    return snaps["start"], snaps["stop"]
