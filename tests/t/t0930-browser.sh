#!/bin/sh
# Pages as a reader sees them, in headless Chromium (tests/tools/browser-check):
# first that the checker catches each defect in a hand-written page and
# passes a good one, then lab's HTML report of a stored run made by hand
# (tests/tools/fabricate-run --big: t0900's, plus a metric in the tens of
# millions): it loads with no console error and no request, its headline
# names the declared expectation, and its screenshots (in the trash
# directory) are not blank. The pages are checked in one Chromium
# (browser-check --batch, a browser context each), each check's result in
# files the tests then read; a page that hangs, one that is missing and a
# browser that hangs are checked alone, as they test browser-check's own
# way out. The batch's results are held to a check of the same page alone.
# lab-test-seconds: 100 (2026-12-07, beside make test-full: 99 s, of which the batch of 27 pages 47 s; each page alone took 135 s in all; 29 pages since the track's two)
. "$(dirname "$0")/test-lib.sh"

BC=$SRC_DIR/tests/tools/browser-check
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if test -n "$CHROMIUM"; then
	test_set_prereq CHROMIUM
else
	echo "# chromium is not installed (make deps installs it): the browser tests skip"
fi
# Chromium's HOME, profile and caches go under TMPDIR; this test's own, to
# see that browser-check leaves nothing behind.
mkdir -p tmp home
export TMPDIR="$TRASH/tmp"

# Every check browser-check has, as the report must pass them all.
ALL="--no-console-errors --self-contained --captions-above --no-e-notation --contains m.tps"
ALL="$ALL --headline-contains m.tps --no-horizontal-scroll-at 390"

# check_as OUT PAGE [OPTION...]: a line of the batch: browser-check every
# check (and OPTIONs) on PAGE, its results in OUT.json, OUT.err and OUT.rc
check_as() {
	_out=$1 _page=$2
	shift 2
	printf '%s' "$_out" >>batch
	for _w in $ALL "$@" "$_page"; do printf " '%s'" "$_w" >>batch; done
	echo >>batch
}
# plain OUT PAGE [OPTION...]: a line with only the OPTIONs, none of $ALL
plain() {
	_out=$1 _page=$2
	shift 2
	printf '%s' "$_out" >>batch
	for _w in "$@" "$_page"; do printf " '%s'" "$_w" >>batch; done
	echo >>batch
}
# check_fails OUT "CHECK...": the check OUT failed exactly the CHECKs
# named (exit 1), or none (exit 0) when ""; a line on stderr per failure
check_fails() {
	_out=$1 _want=$2
	_code=1
	test -n "$_want" || _code=0
	test "$(cat "$_out.rc")" = "$_code" || { echo "$_out: exit $(cat "$_out.rc"), not $_code" >&2; return 1; }
	cat "$_out.err"
	python3 - "$_out.json" "$_want" <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))
	got = sorted({f["check"] for f in r["failures"]})
	want = sorted(sys.argv[2].split())
	assert got == want, "failed %s, expected %s" % (got, want)
	PY
	test "$(wc -l <"$_out.err")" -eq "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["failures"]))' "$_out.json")"
}

# png_not_blank PNG WIDTH [HEIGHT]: a PNG that many colours cover
png_not_blank() {
	"$SRC_DIR/tests/tools/png-not-blank" "$@"
}

# A good page: viewport for phones, headline naming m.tps, captions above
# their pictures, human units, a wide table scrolling in its own wrapper,
# and an e-notation label that is not drawn (display none).
cat >good.html <<'EOF'
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>good</title>
<style>body{font-family:sans-serif;margin:1em}.wrap{overflow-x:auto}td{border:1px solid #ccc}</style>
</head><body>
<h1>lab: e 20261130-120000-cafe</h1>
<p><strong>patched: m.tps +20.5% [+16.9%, +24.2%] improved as expected</strong></p>
<div class="wrap"><table><tr><td style="min-width:900px">m.tps</td><td>15.2k</td></tr></table></div>
<figure><figcaption>m.tps (transactions/s)</figcaption>
<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150" viewBox="0 0 300 150">
<linearGradient id="g"><stop offset="0" stop-color="#ddf"/><stop offset="1" stop-color="#fdd"/></linearGradient>
<rect x="0" y="0" width="100%" height="100%" fill="url(#g)"/>
<circle cx="150" cy="75" r="30" fill="#c33"/>
<text x="10" y="20" font-size="10">15.2k</text><text x="10" y="140" font-size="10">9.5 ms</text>
<text x="10" y="80" font-size="10" display="none">1.518e+04</text>
</svg></figure>
</body></html>
EOF
# bad NAME PYTHON-EXPRESSION: NAME.html, good.html rewritten by the
# expression over its text s
bad() {
	python3 -c 'import sys; s = open("good.html").read(); open(sys.argv[1] + ".html", "w").write(eval(sys.argv[2]))' "$1" "$2"
	cmp -s good.html "$1.html" && echo "bad $1: the page did not change" >&2 && exit 1
	return 0
}
FIG='<figcaption>m.tps (transactions/s)</figcaption>'
bad caption-below "s.replace('$FIG', '').replace('</svg>', '</svg>$FIG')"
bad caption-drawn-below "s.replace('.wrap{', 'figure{display:flex;flex-direction:column-reverse}.wrap{')"
bad no-figure "s[:s.index('<figure>')] + s[s.index('</figure>') + 9:]"
bad e-notation-svg "s.replace('>15.2k</text>', '>1.518e+04</text>')"
bad e-notation-text "s.replace('</body>', '<p>p=2e-05</p></body>')"
bad console-error "s.replace('</body>', '<script>console.error(\"boom\")</script></body>')"
bad exception "s.replace('</body>', '<script>null.boom()</script></body>')"
bad missing-image "s.replace('</body>', '<img src=\"missing.png\"></body>')"
bad external-image "s.replace('</body>', '<img src=\"http://127.0.0.1:9/x.png\"></body>')"
bad local-image "s.replace('</body>', '<img src=\"dot.png\"></body>')"
bad wide "s.replace('</body>', '<div id=\"banner\" style=\"width:800px\">wide</div></body>')"
bad no-viewport "s.replace('<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">', '')"
bad headline "s.replace('patched: m.tps', 'patched: nothing')"
bad busy "s.replace('</body>', '<script>for (;;) {}</script></body>')"

# The batch: every page below, and the report and the site lab writes.
ID=20261130-120000-cafe
"$SRC_DIR/tests/tools/fabricate-run" results $ID --big
# a track's robot report (t0940 has its content): its own results folder,
# written by lab's store code, so the site below holds only the run above
TRACK=$(cd "$SRC_DIR" && "${LAB_BUILD:-$SRC_DIR/build/asan}/tests/test-track" --write-store "$TRASH/tracks")
# the site's index and experiment pages: no headline of their own
SITE="--no-console-errors --self-contained --no-e-notation --no-horizontal-scroll-at 390"
: >batch
check_as good good.html --screenshot good.png --dom good.dom.html
check_as good-phone good.html --width 390 --mobile --height 700 --screenshot good-phone.png
for p in caption-below caption-drawn-below no-figure e-notation-svg e-notation-text console-error exception \
	missing-image external-image wide no-viewport headline; do
	check_as $p $p.html
done
# a picture that loads: 1x1, opaque
python3 -c 'import base64, sys; open("dot.png", "wb").write(base64.b64decode(sys.argv[1]))' \
	iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==
check_as local-image local-image.html
plain wide-1000 wide.html --no-horizontal-scroll-at 1000
check_as good-contains good.html --contains 'not on the page' --contains 'transactions/s'
# a page that hangs its renderer inside the batch: its line times out, and
# the next line gets a fresh browser
plain busy-in-batch busy.html --timeout 5
check_as good-after-busy good.html
plain report report.html --no-console-errors --self-contained --contains m.tps --headline-contains m.tps \
	--screenshot report.png --dom report.dom.html
plain report-phone report.html --width 390 --mobile --screenshot report-phone.png --no-console-errors
check_as report-all report.html --screenshot report-all.png
check_as report-all-phone report.html --width 390 --mobile --screenshot report-all-phone.png
# shellcheck disable=SC2086
plain site site/index.html $SITE --contains $ID --screenshot site.png --dom site.dom.html
# shellcheck disable=SC2086
plain site-phone site/index.html $SITE --width 390 --mobile
# shellcheck disable=SC2086
plain site-exp site/exp/e.html $SITE --captions-above --contains m.tps
check_as site-run site/runs/$ID.html
# shellcheck disable=SC2086
plain track track.html $SITE --captions-above --headline-contains FYI --contains c0ffee040000 \
	--screenshot track.png --dom track.dom.html
# shellcheck disable=SC2086
plain track-phone track.html $SITE --width 390 --mobile --screenshot track-phone.png

test_expect_success CHROMIUM 'the report and the site, then every page in one browser' "
	lab report --format html --all $ID >report.html &&
	lab report --format html tracks/$TRACK >track.html &&
	lab site --json site >site.json &&
	ls site/exp/*.html >pages &&
	test_line_count = 1 pages &&
	test \"\$(cat pages)\" = site/exp/e.html &&
	'$BC' --batch batch &&
	test -z \"\$(find tmp -mindepth 1)\" &&
	for o in \$(cut -d' ' -f1 batch); do test -s \$o.rc && test -s \$o.json || exit 1; done
"

test_expect_success CHROMIUM 'a page checked alone says what its line in the batch said' "
	test_must_fail_with 1 '$BC' \$ALL --json caption-below.html >alone.json 2>alone.err &&
	cmp alone.err caption-below.err &&
	python3 - alone.json caption-below.json <<-'EOF'
	import json, sys
	a, b = (json.load(open(p)) for p in sys.argv[1:])
	assert a['failures'] == b['failures'] and a['figures'] == b['figures'], (a, b)
	EOF
"

test_expect_success CHROMIUM 'a good page passes every check, and its screenshot is not blank' "
	check_fails good '' &&
	test ! -s good.err &&
	png_not_blank good.png 1000 &&
	grep -q '<figcaption>m.tps' good.dom.html &&
	check_fails good-phone '' &&
	png_not_blank good-phone.png 390 700
"

test_expect_success CHROMIUM 'captions: below in the DOM, drawn below, or no figure at all' "
	check_fails caption-below captions-above &&
	grep -q 'figure 1 (.m.tps (transactions/s).): its first child is <svg>, not its <figcaption>' caption-below.err &&
	grep -q 'figure 1 .*: the caption is drawn below its <svg>' caption-below.err &&
	check_fails caption-drawn-below captions-above &&
	! grep -q 'first child' caption-drawn-below.err &&
	grep -q 'the caption is drawn below its <svg> (caption bottom [0-9]* > svg top [0-9]*)' caption-drawn-below.err &&
	check_fails no-figure captions-above &&
	grep -q 'the page has no <figure>' no-figure.err
"

test_expect_success CHROMIUM 'e-notation in a drawn SVG label or in the text' "
	check_fails e-notation-svg no-e-notation &&
	grep -q \"no-e-notation: '1.518e+04' in svg <text> in figure 'm.tps (transactions/s)'\" e-notation-svg.err &&
	check_fails e-notation-text no-e-notation &&
	grep -q \"'2e-05' in text: 'p=2e-05'\" e-notation-text.err
"

test_expect_success CHROMIUM 'console errors and uncaught exceptions' "
	check_fails console-error no-console-errors &&
	grep -q 'no-console-errors: console.error: boom' console-error.err &&
	check_fails exception no-console-errors &&
	grep -q 'no-console-errors: uncaught exception: TypeError' exception.err
"

test_expect_success CHROMIUM 'requests: a missing file, an external one, and one that loads' "
	check_fails missing-image 'no-console-errors self-contained' &&
	grep -q 'request failed: file://.*/missing.png (net::ERR_FILE_NOT_FOUND)' missing-image.err &&
	grep -q 'self-contained: the page requests file://.*/missing.png' missing-image.err &&
	check_fails external-image 'no-console-errors self-contained' &&
	grep -q 'self-contained: the page requests http://127.0.0.1:9/x.png' external-image.err &&
	check_fails local-image self-contained &&
	grep -q 'self-contained: the page requests file://.*/dot.png' local-image.err
"

test_expect_success CHROMIUM 'sideways scrolling on a phone: a wide block, no viewport' "
	check_fails wide no-horizontal-scroll-at &&
	grep -q 'at 390 px the page scrolls sideways: it is [0-9]* px wide; too wide: div#banner' wide.err &&
	test \"\$(cat wide-1000.rc)\" = 0 &&
	check_fails no-viewport no-horizontal-scroll-at &&
	grep -q 'no <meta name=viewport>, so a phone lays it out 980 px wide' no-viewport.err
"

test_expect_success CHROMIUM 'the headline and the visible text' "
	check_fails headline headline-contains &&
	grep -q \"the headline does not name 'm.tps': 'patched: nothing\" headline.err &&
	check_fails good-contains contains &&
	grep -q \"the visible text does not hold 'not on the page'\" good-contains.err &&
	! grep -q transactions/s good-contains.err
"

test_expect_success CHROMIUM 'a page that hangs its renderer in a batch: its line times out, the next one passes' "
	test \"\$(cat busy-in-batch.rc)\" = 2 &&
	grep -q 'busy.html: timed out' busy-in-batch.err &&
	grep -q '\"error\": .*timed out' busy-in-batch.json &&
	check_fails good-after-busy ''
"

test_expect_success CHROMIUM 'a page that never loads: a timeout, and nothing left behind' "
	test_must_fail_with 2 env HOME=\$PWD/home '$BC' --timeout 5 --json busy.html >busy.json 2>busy.err &&
	grep -q 'busy.html: timed out' busy.err &&
	grep -q '\"error\": .*timed out' busy.json &&
	test_must_fail_with 2 '$BC' nowhere.html 2>nowhere.err &&
	grep -q 'cannot load file://.*/nowhere.html: net::ERR_FILE_NOT_FOUND' nowhere.err &&
	test -z \"\$(find tmp home -mindepth 1)\" &&
	! ps -eo args | grep -v grep | grep -q \"\$TMPDIR/browser-check\"
"

# A browser that never answers, with a child of its own: both are killed.
cat >hung-chromium <<'EOF'
#!/bin/sh
echo $$ >"$HUNG_PIDS"
sleep 600 &
echo $! >>"$HUNG_PIDS"
wait
EOF
chmod +x hung-chromium
test_expect_success 'a browser that hangs is killed, and what it started' "
	export HUNG_PIDS=\$PWD/hung.pids &&
	test_must_fail_with 2 '$BC' --chromium \$PWD/hung-chromium --timeout 3 good.html 2>hung.err &&
	grep -q 'good.html: timed out' hung.err &&
	test_line_count = 2 hung.pids &&
	# alive: in ps, and not a zombie no one has reaped yet
	! ps -o stat= -p \$(paste -sd, hung.pids) | grep -v ^Z &&
	test -z \"\$(find tmp -mindepth 1)\"
"

test_expect_success CHROMIUM 'the HTML report loads clean, and its headline names m.tps' "
	check_fails report '' &&
	png_not_blank report.png 1000 &&
	grep -q '<figure>' report.dom.html &&
	check_fails report-phone '' &&
	png_not_blank report-phone.png 390
"

test_expect_success CHROMIUM 'the HTML report passes every check, at a desktop and a phone width' "
	check_fails report-all '' &&
	png_not_blank report-all.png 1000 &&
	check_fails report-all-phone '' &&
	png_not_blank report-all-phone.png 390
"

test_expect_success CHROMIUM 'the site built from the store passes every check: index, experiment page, report' "
	check_fails site '' &&
	png_not_blank site.png 1000 &&
	grep -q 'href=\"runs/$ID.html\"' site.dom.html &&
	check_fails site-phone '' &&
	check_fails site-exp '' &&
	check_fails site-run ''
"

test_expect_success CHROMIUM 'the robot report of a track: its line first, the series drawn, at a desktop and a phone width' "
	test -n '$TRACK' &&
	check_fails track '' &&
	png_not_blank track.png 1000 &&
	grep -q 'stroke-dasharray' track.dom.html &&
	grep -q '<figcaption>w.m: each dot' track.dom.html &&
	check_fails track-phone '' &&
	png_not_blank track-phone.png 390
"

test_done
