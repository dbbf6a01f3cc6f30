#!/bin/sh
# Pages as a reader sees them, in headless Chromium (tests/tools/browser-check):
# first that the checker catches each defect in a hand-written page and
# passes a good one, then lab's HTML report of a stored run made by hand
# (tests/tools/fabricate-run --big: t0900's, plus a metric in the tens of
# millions): it loads with no console error and no request, its headline
# names the declared expectation, and its screenshots (in the trash
# directory) are not blank.
# lab-test-seconds: 135 (make test here on 2026-12-05, with the other lane busy: tests/run-all balances its two lanes by it)
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

# check_fails PAGE "CHECK..." [OPTION...]: browser-check PAGE with every
# check (and OPTIONs) fails exactly the CHECKs named, or none when "".
check_fails() {
	_page=$1 _want=$2
	shift 2
	_code=1
	test -n "$_want" || _code=0
	# shellcheck disable=SC2086
	test_must_fail_with $_code "$BC" $ALL --json "$@" "$_page" >"$_page.json" 2>"$_page.err"
	cat "$_page.err"
	python3 - "$_page.json" "$_want" <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))
	got = sorted({f["check"] for f in r["failures"]})
	want = sorted(sys.argv[2].split())
	assert got == want, "failed %s, expected %s" % (got, want)
	PY
	test "$(wc -l <"$_page.err")" -eq "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["failures"]))' "$_page.json")"
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

test_expect_success CHROMIUM 'a good page passes every check, and its screenshot is not blank' "
	check_fails good.html '' --screenshot good.png --dom good.dom.html &&
	test ! -s good.html.err &&
	png_not_blank good.png 1000 &&
	grep -q '<figcaption>m.tps' good.dom.html &&
	check_fails good.html '' --width 390 --mobile --height 700 --screenshot good-phone.png &&
	png_not_blank good-phone.png 390 700
"

test_expect_success CHROMIUM 'captions: below in the DOM, drawn below, or no figure at all' "
	check_fails caption-below.html captions-above &&
	grep -q 'figure 1 (.m.tps (transactions/s).): its first child is <svg>, not its <figcaption>' caption-below.html.err &&
	grep -q 'figure 1 .*: the caption is drawn below its <svg>' caption-below.html.err &&
	check_fails caption-drawn-below.html captions-above &&
	! grep -q 'first child' caption-drawn-below.html.err &&
	grep -q 'the caption is drawn below its <svg> (caption bottom [0-9]* > svg top [0-9]*)' caption-drawn-below.html.err &&
	check_fails no-figure.html captions-above &&
	grep -q 'the page has no <figure>' no-figure.html.err
"

test_expect_success CHROMIUM 'e-notation in a drawn SVG label or in the text' "
	check_fails e-notation-svg.html no-e-notation &&
	grep -q \"no-e-notation: '1.518e+04' in svg <text> in figure 'm.tps (transactions/s)'\" e-notation-svg.html.err &&
	check_fails e-notation-text.html no-e-notation &&
	grep -q \"'2e-05' in text: 'p=2e-05'\" e-notation-text.html.err
"

test_expect_success CHROMIUM 'console errors and uncaught exceptions' "
	check_fails console-error.html no-console-errors &&
	grep -q 'no-console-errors: console.error: boom' console-error.html.err &&
	check_fails exception.html no-console-errors &&
	grep -q 'no-console-errors: uncaught exception: TypeError' exception.html.err
"

test_expect_success CHROMIUM 'requests: a missing file, an external one, and one that loads' "
	check_fails missing-image.html 'no-console-errors self-contained' &&
	grep -q 'request failed: file://.*/missing.png (net::ERR_FILE_NOT_FOUND)' missing-image.html.err &&
	grep -q 'self-contained: the page requests file://.*/missing.png' missing-image.html.err &&
	check_fails external-image.html 'no-console-errors self-contained' &&
	grep -q 'self-contained: the page requests http://127.0.0.1:9/x.png' external-image.html.err &&
	cp good.png dot.png &&
	check_fails local-image.html self-contained &&
	grep -q 'self-contained: the page requests file://.*/dot.png' local-image.html.err
"

test_expect_success CHROMIUM 'sideways scrolling on a phone: a wide block, no viewport' "
	check_fails wide.html no-horizontal-scroll-at &&
	grep -q 'at 390 px the page scrolls sideways: it is [0-9]* px wide; too wide: div#banner' wide.html.err &&
	'$BC' --no-horizontal-scroll-at 1000 wide.html &&
	check_fails no-viewport.html no-horizontal-scroll-at &&
	grep -q 'no <meta name=viewport>, so a phone lays it out 980 px wide' no-viewport.html.err
"

test_expect_success CHROMIUM 'the headline and the visible text' "
	check_fails headline.html headline-contains &&
	grep -q \"the headline does not name 'm.tps': 'patched: nothing\" headline.html.err &&
	check_fails good.html contains --contains 'not on the page' --contains 'transactions/s' &&
	grep -q \"the visible text does not hold 'not on the page'\" good.html.err &&
	! grep -q transactions/s good.html.err
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

ID=20261130-120000-cafe
"$SRC_DIR/tests/tools/fabricate-run" results $ID --big

test_expect_success CHROMIUM 'the HTML report loads clean, and its headline names m.tps' "
	lab report --format html --all $ID >report.html &&
	'$BC' --no-console-errors --self-contained --contains m.tps --headline-contains m.tps \
		--screenshot report.png --dom report.dom.html report.html &&
	png_not_blank report.png 1000 &&
	grep -q '<figure>' report.dom.html &&
	'$BC' --width 390 --mobile --screenshot report-phone.png --no-console-errors report.html &&
	png_not_blank report-phone.png 390
"

test_expect_success CHROMIUM 'the HTML report passes every check, at a desktop and a phone width' "
	'$BC' \$ALL --screenshot report-all.png report.html &&
	png_not_blank report-all.png 1000 &&
	'$BC' \$ALL --width 390 --mobile --screenshot report-all-phone.png report.html &&
	png_not_blank report-all-phone.png 390
"

# the site's index and experiment pages: no headline of their own
SITE="--no-console-errors --self-contained --no-e-notation --no-horizontal-scroll-at 390"
test_expect_success CHROMIUM 'the site built from the store passes every check: index, experiment page, report' "
	lab site --json site >site.json &&
	'$BC' \$SITE --contains $ID --screenshot site.png --dom site.dom.html site/index.html &&
	png_not_blank site.png 1000 &&
	grep -q 'href=\"runs/$ID.html\"' site.dom.html &&
	'$BC' \$SITE --width 390 --mobile site/index.html &&
	ls site/exp/*.html >pages &&
	test_line_count = 1 pages &&
	'$BC' \$SITE --captions-above --contains m.tps \$(cat pages) &&
	'$BC' \$ALL site/runs/$ID.html
"

test_done
