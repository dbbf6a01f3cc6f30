"""What start and stop of tg-load-writes share (in the guest): the probe
group and its tracing instance (workloads/lib/tracefs.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from tracefs import TRACEFS, Kcore, Probes, kallsyms  # noqa: E402,F401

GROUP = "lab_tgw"
PROBES = Probes("tg-load-writes", GROUP)
die = PROBES.die
mount = PROBES.mount
write = PROBES.write
remove_probes = PROBES.remove
