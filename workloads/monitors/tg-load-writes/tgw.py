"""What start and stop of tg-load-writes share (in the guest): the tracefs
writes and the removal of the probes and of their tracing instance."""
import os
import subprocess
import sys

GROUP = "lab_tgw"
TRACEFS = "/sys/kernel/tracing"


def die(why):
    sys.stderr.write("tg-load-writes: %s\n" % why)
    sys.exit(1)


def mount():
    """tracefs where the kernel has it; mounted when nothing is there yet."""
    if not os.path.exists(os.path.join(TRACEFS, "kprobe_events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], stderr=subprocess.DEVNULL, check=False)
    if not os.path.exists(os.path.join(TRACEFS, "kprobe_events")):
        die("no %s/kprobe_events: the kernel needs CONFIG_KPROBE_EVENTS" % TRACEFS)


def write(path, text, append=False):
    """One write(2) to a tracefs file: Python's append mode seeks to the
    end, which tracefs refuses (EINVAL), and a buffered write could split
    a command. A refusal dies with the kernel's error_log."""
    try:
        fd = os.open(os.path.join(TRACEFS, path), os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC))
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as e:
        log = ""
        try:
            log = open(os.path.join(TRACEFS, "error_log")).read().strip()
        except OSError:
            pass
        die("%s/%s <- %r: %s%s" % (TRACEFS, path, text.strip(), e.strerror, "\n" + log if log else ""))


def remove_probes():
    """The instance and every lab_tgw probe, whatever state they are in."""
    inst = os.path.join("instances", GROUP)
    if os.path.isdir(os.path.join(TRACEFS, inst)):
        if os.path.exists(os.path.join(TRACEFS, inst, "events", GROUP)):
            write(os.path.join(inst, "events", GROUP, "enable"), "0")
        os.rmdir(os.path.join(TRACEFS, inst))
    with open(os.path.join(TRACEFS, "kprobe_events")) as f:
        events = [line.split()[0].split(":", 1)[1] for line in f if line.startswith("p:%s/" % GROUP)]
    for ev in events:
        write("kprobe_events", "-:%s\n" % ev, append=True)
