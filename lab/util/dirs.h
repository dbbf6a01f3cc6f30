/* SPDX-License-Identifier: MIT */
/*
 * Where lab keeps things: the one module that decides. Each folder is the
 * first that is set of a LAB_* variable, lab.yaml's settings (where there
 * is one), the XDG variable and the home folder; a relative LAB_* or XDG
 * value is ignored (the XDG rule). The home is $HOME when absolute, else
 * the passwd entry's; without one, lab never falls back to a shared
 * folder such as /tmp (main() refuses to start).
 *
 *   cache    LAB_CACHE_DIR | settings.cache | $XDG_CACHE_HOME/lab | ~/.cache/lab
 *   state    LAB_STATE_DIR | $XDG_STATE_HOME/lab | ~/.local/state/lab
 *   results  LAB_RESULTS_DIR | settings.results | <lab.yaml's folder>/results
 *   ssh key  <cache>/ssh/id_ed25519 (and .pub)
 *   a VM     <state>/vms/NAME, its ssh control socket NAME/ssh.ctl
 *   a host   <state>/hosts/NAME, its ssh control socket NAME/ssh.ctl
 *
 * Pure functions of the environment and their arguments: nothing is
 * created or checked here (fs_check_private checks), except that the
 * shipped data is found by looking for it beside lab's binary:
 *
 *   data     LAB_DATADIR | PREFIX/share/lab beside PREFIX/bin/lab | the
 *            checkout lab was built in | the compiled-in LAB_DATADIR
 *   layer    <data>/images/layer
 *   plugin   LAB_INSN_PLUGIN | <data>/lib/lab-insn.so | <data>/build/lib/lab-insn.so
 */
#pragma once

#include <stdbool.h>

/* The user's home, or NULL when neither HOME nor the passwd entry gives one. */
const char *dirs_home(void);
/* Whether the cache and the state folder have a place (a home, or both
 * LAB_/XDG_ variables for them): main() asks before any command runs. */
bool dirs_have_home(void);
/* `setting`: lab.yaml's settings.cache, or NULL. */
char *dirs_cache(const char *setting);
char *dirs_state(void);
/* `setting`: settings.results or NULL; `spec_dir`: lab.yaml's folder or NULL. */
char *dirs_results(const char *setting, const char *spec_dir);
char *dirs_ssh_key(const char *cache);
char *dirs_vm(const char *state, const char *name);
char *dirs_host(const char *state, const char *name);
/* Where lab's shipped data (lab.yaml, workloads/, kernels/, images/) lives. */
char *dirs_datadir(void);
/* lab's guest layer (images/layer) in the shipped data. */
char *dirs_layer_dir(void);
#define DIRS_INSN_PLUGIN_NAME "lab-insn.so"
/* The insn monitor's QEMU plugin: $LAB_INSN_PLUGIN (absolute), else the data
 * folder's lib/lab-insn.so (installed) or build/lib/lab-insn.so (a checkout);
 * NULL when there is none. */
char *dirs_insn_plugin(void);
