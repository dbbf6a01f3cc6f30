"""What lab's kprobe monitors share in the guest: tracefs writes, a group
of probes and its private tracing instance removed whatever state they
are in, /proc/kallsyms and reads of kernel memory through /proc/kcore."""
import os
import struct
import subprocess
import sys

TRACEFS = "/sys/kernel/tracing"


class Probes:
    """The kprobe events of one monitor: group GROUP, instance GROUP."""

    def __init__(self, monitor, group):
        self.monitor, self.group = monitor, group

    def die(self, why):
        sys.stderr.write("%s: %s\n" % (self.monitor, why))
        sys.exit(1)

    def mount(self):
        """tracefs where the kernel has it; mounted when nothing is there yet."""
        if not os.path.exists(os.path.join(TRACEFS, "kprobe_events")):
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], stderr=subprocess.DEVNULL, check=False)
        if not os.path.exists(os.path.join(TRACEFS, "kprobe_events")):
            self.die("no %s/kprobe_events: the kernel needs CONFIG_KPROBE_EVENTS" % TRACEFS)

    def write(self, path, text, append=False):
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
            self.die("%s/%s <- %r: %s%s" % (TRACEFS, path, text.strip(), e.strerror, "\n" + log if log else ""))

    def remove(self):
        """The instance and every probe of the group, whatever state they are in."""
        inst = os.path.join("instances", self.group)
        if os.path.isdir(os.path.join(TRACEFS, inst)):
            if os.path.exists(os.path.join(TRACEFS, inst, "events", self.group)):
                self.write(os.path.join(inst, "events", self.group, "enable"), "0")
            os.rmdir(os.path.join(TRACEFS, inst))
        with open(os.path.join(TRACEFS, "kprobe_events")) as f:
            events = [line.split()[0].split(":", 1)[1] for line in f
                      if line.startswith("p:%s/" % self.group) or line.startswith("r:%s/" % self.group)]
        for ev in events:
            self.write("kprobe_events", "-:%s\n" % ev, append=True)

    def profile(self):
        """kprobe_profile: event -> (hits, missed), for this group's events."""
        counts = {}
        with open(os.path.join(TRACEFS, "kprobe_profile")) as f:
            for line in f:
                p = line.split()
                if len(p) == 3:
                    counts[p[0]] = (int(p[1]), int(p[2]))
        return counts


def kallsyms(die):
    """Sorted (address, type, name) of every symbol; dies when addresses are hidden."""
    syms = []
    try:
        with open("/proc/kallsyms") as f:
            for line in f:
                p = line.split()
                if len(p) >= 3:
                    syms.append((int(p[0], 16), p[1], p[2]))
    except OSError as e:
        die("/proc/kallsyms: %s" % e.strerror)
    syms.sort()
    if not syms or syms[-1][0] == 0:
        die("/proc/kallsyms shows no addresses (run as root with kernel.kptr_restrict=0)")
    return syms


class Kcore:
    """Kernel memory as /proc/kcore's ELF segments show it."""

    def __init__(self, die):
        self.die = die
        try:
            self.f = open("/proc/kcore", "rb")
        except OSError as e:
            die("/proc/kcore: %s (needs CONFIG_PROC_KCORE and root)" % e.strerror)
        h = self.f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2:
            die("/proc/kcore: not a 64-bit ELF core")
        phoff, = struct.unpack_from("<Q", h, 32)
        phentsize, phnum = struct.unpack_from("<HH", h, 54)
        self.f.seek(phoff)
        ph = self.f.read(phentsize * phnum)
        self.loads = []
        for i in range(phnum):
            typ, _flags, off, vaddr, _pa, filesz = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
            if typ == 1:
                self.loads.append((vaddr, filesz, off))

    def read(self, addr, size):
        for vaddr, filesz, off in self.loads:
            if vaddr <= addr and addr + size <= vaddr + filesz:
                self.f.seek(off + addr - vaddr)
                return self.f.read(size)
        self.die("/proc/kcore: no segment holds 0x%x" % addr)
