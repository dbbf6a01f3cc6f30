#!/bin/sh
# Full builds of every kernel variant of the shipped lab.yaml, each checked
# for what a booted guest will prove: the release string names the variant,
# the config assertions hold, base and patched configs agree. Then the
# cache: a second build of a built variant is a lookup.
. "$(dirname "$0")/../t/test-lib.sh"

[ -f /usr/src/linux-source-6.1.tar.xz ] || test_skip_all "linux-source-6.1 is not installed (make deps)"
P=$SRC_DIR

for e in quick pcp-auto cpupri-split; do
	test_expect_success "kernels of experiment $e build" "
		lab -C '$P' --json kernel build -e $e >out 2>err &&
		python3 -c '
import json
arts = json.load(open(\"out\"))
for a in arts:
    assert a[\"release\"].startswith(\"6.1.\"), a[\"release\"]
    tag = a[\"variant\"].replace(\"@\", \".\")
    assert \"-lab-\" + tag + \"-\" in a[\"release\"], (tag, a[\"release\"])
    assert all(r[\"ok\"] for r in a[\"require\"]), a[\"require\"]
' &&
		! grep -q 'differ in' err
	"
done

test_expect_success 'a second build of a built variant is a cache hit' "
	lab -C '$P' --json kernel build tg-ratelimit >out &&
	python3 -c 'import json; a = json.load(open(\"out\"))[0]; assert a[\"cached\"] is True'
"

test_done
