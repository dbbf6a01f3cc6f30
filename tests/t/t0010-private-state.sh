#!/bin/sh
# Where lab keeps its cache and state when the environment says little:
# never a shared folder such as /tmp. Without HOME the passwd entry's home
# is used; a user with neither is told what to set, and nothing is made.
. "$(dirname "$0")/test-lib.sh"

command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && test_set_prereq SETPRIV
NOBODY_UID=54321
getent passwd "$NOBODY_UID" >/dev/null && test_skip_all "uid $NOBODY_UID has a passwd entry here"

test_expect_success SETPRIV 'no HOME and no passwd entry: lab says what to set and touches nothing' "
	mkdir -p w && cp \"$SRC_DIR/lab.yaml\" w/ && chmod -R a+rX . &&
	before=\$(ls -A /tmp | grep -c '^\\.cache\\|^\\.local' || true) &&
	(cd w && env -u HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
		setpriv --reuid=$NOBODY_UID --regid=$NOBODY_UID --clear-groups \"\$LAB\" gc --dry-run >out 2>err; echo \$? >rc) &&
	test \"\$(cat w/rc)\" = 2 &&
	grep -q 'HOME is not set and uid $NOBODY_UID has no home in the passwd database' w/err &&
	after=\$(ls -A /tmp | grep -c '^\\.cache\\|^\\.local' || true) &&
	test \"\$before\" = \"\$after\"
"

test_expect_success SETPRIV 'the same user with XDG folders given: lab runs' "
	mkdir -p x && chmod 777 x &&
	(cd w && env -u HOME XDG_CACHE_HOME=\$TRASH/x/c XDG_STATE_HOME=\$TRASH/x/s \
		setpriv --reuid=$NOBODY_UID --regid=$NOBODY_UID --clear-groups \"\$LAB\" gc --dry-run >out 2>err) ||
		{ cat w/err; false; }
"

test_done
