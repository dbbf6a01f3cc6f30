#!/bin/sh
# The HTML report of a stored run made by hand: one self-contained file
# (no script, no external resource), its SVG charts well-formed XML, and
# headless Chromium renders it to a screenshot that is not blank.
. "$(dirname "$0")/test-lib.sh"

ID=20261130-120000-cafe
"$SRC_DIR/tests/tools/fabricate-run" results $ID

test_expect_success 'the HTML report is one self-contained file with escaped names' "
	lab report --format html --all $ID >r.html &&
	grep -q '<svg' r.html &&
	! grep -qi '<script' r.html &&
	! grep -qi 'src=\\|href=' r.html &&
	grep -q '&lt;script&gt;' r.html &&
	python3 -c '
import re, sys, xml.dom.minidom
s = open(\"r.html\").read()
svgs = re.findall(r\"<svg.*?</svg>\", s, re.S)
assert len(svgs) >= 1, len(svgs)
for svg in svgs:
    xml.dom.minidom.parseString(svg)
'
"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
test -n "$CHROMIUM" && test_set_prereq CHROMIUM
test_expect_success CHROMIUM 'headless Chromium renders it: a screenshot that is not blank' "
	HOME=\$PWD timeout 120 '$CHROMIUM' --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1000,900 --screenshot=\$PWD/r.png file://\$PWD/r.html >chromium.log 2>&1 &&
	python3 -c '
import struct, zlib
d = open(\"r.png\", \"rb\").read()
assert d[:8] == b\"\\x89PNG\\r\\n\\x1a\\n\", \"not a PNG\"
w, h = struct.unpack(\">II\", d[16:24])
idat, i = b\"\", 8
while i < len(d):
    n, t = struct.unpack(\">I4s\", d[i:i + 8])
    if t == b\"IDAT\":
        idat += d[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
# a blank page filters to nearly one byte value; a rendered report does not
distinct = len(set(raw))
busy = sum(1 for b in raw if b not in (0, 255)) / len(raw)
assert w == 1000 and h == 900, (w, h)
assert distinct > 50 and busy > 0.01, (distinct, busy)
'
"

test_done
