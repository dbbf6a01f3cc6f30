"""What start and stop of cpupri-masks share (in the guest): the probe
group, its tracing instance and the state file names."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from tracefs import TRACEFS, Kcore, Probes, kallsyms  # noqa: E402,F401

GROUP = "lab_cpm"
PROBES = Probes("cpupri-masks", GROUP)
# what every kernel has (the RT class's cpupri) and what only the split adds
FIND, SET, SPLIT = "cpupri_find_fitness", "cpupri_set", "_find_first_and_and_bit"


def state(name):
    d = os.environ.get("LAB_MON_DIR") or PROBES.die("LAB_MON_DIR is not set")
    return os.path.join(d, "cpupri-masks." + name)
