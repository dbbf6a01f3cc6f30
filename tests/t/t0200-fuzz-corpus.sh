#!/bin/sh
# Replays the committed fuzz corpus (tests/fuzz/corpus, grown with
# `make fuzz`, crashers kept as regression inputs) through the loader
# built with ASan+UBSan. Each input is one TAP test.
here=$(cd "$(dirname "$0")/.." && pwd)
replay=${LAB_BUILD:-$here/../build/asan}/fuzz-replay
if [ ! -x "$replay" ]; then
	echo "1..0 # skip no $replay (run through make test)"
	exit 0
fi
exec "$replay" "$here/fuzz/corpus"
