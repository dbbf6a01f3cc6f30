"""Shared helpers of lab's parse scripts (run on the controller)."""
import os
import signal
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


def read_lines(name, path):
    try:
        return open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        fail(name, path, e.strerror)


def number(name, path, lineno, text):
    """A finite float, or an error naming the line."""
    try:
        v = float(text)
    except ValueError:
        fail(name, path, "line %d: '%s' is not a number" % (lineno, text))
    if v != v or v in (float("inf"), float("-inf")):
        fail(name, path, "line %d: '%s' is not a finite number" % (lineno, text))
    return v


def work_units(name, path):
    """The workload's units of work in the window, as lab passes them to a
    monitor's parse (LAB_WORK; its metric in LAB_WORK_METRIC), or None:
    no unit declared, or none done (never a made-up figure). A value that
    is not a number is an error."""
    work = os.environ.get("LAB_WORK")
    if not work:
        return None
    try:
        w = float(work)
    except ValueError:
        fail(name, path, "LAB_WORK %r is not a number" % work)
    return w if 0 < w < float("inf") else None


def emit(pairs):
    """Print 'metric value' lines sorted by name."""
    for k, v in sorted(pairs):
        print("%s %.6g" % (k, v))


def run(main):
    """The command line of every parse script: parse RAW."""
    if len(sys.argv) != 2:
        sys.stderr.write("usage: parse RAW\n")
        sys.exit(2)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main(sys.argv[1])


def stats(values):
    """avg, max, min of a non-empty list."""
    return sum(values) / len(values), max(values), min(values)
