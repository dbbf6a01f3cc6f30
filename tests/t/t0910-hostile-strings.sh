#!/bin/sh
# A stored run made by hand whose every string is hostile, the way a
# fetched bundle's may be: experiment, kernel (variant), group, release,
# error, metric, mechanism and observe strings with ESC sequences, a BEL,
# a DEL, a C1 CSI (U+009B), a byte that is not UTF-8, HTML and Markdown
# syntax. lab ls, lab report (text, md, json, html), lab compare and the
# errors quoting such data show it escaped: no control byte reaches the
# terminal, no HTML the Markdown, and Markdown table rows keep their cells.
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON3 || test_skip_all 'python3 is needed to check the output byte by byte'

ID=20261201-120000-bad1
R=results/$ID
ESC=$(printf '\033')
mkdir -p $R/runs/e.0001 $R/runs/e.0002 $R/runs/e.0003 $R/runs/e.0004
printf 'base\npatched\n' >$R/variants
printf '0\ta|b\tincrease\t0.02\n0\t<script>alert(1)</script>\tdecrease\t-\n' >$R/expect
printf 'kernel base: release 6.1\033]0;pwned\007\n' >$R/mechanism
printf 'x\033[2Jy\t>\t0\t-\tsays \033[5mblink <b>bold</b> *em* `code` [a](javascript:x)\n' >$R/observe
{
	printf '# lab journal 1 experiment=evil\033[31mRED\007 | # not a heading\n'
	printf 'e.0001\tok\tbase\t0\t1\tw\033[1m|g\t6.1-lab\033[0m\t-\n'
	printf 'e.0002\tok\tbase\t0\t2\tw\033[1m|g\t6.1-lab\033[0m\t-\n'
	printf 'e.0003\tok\tpatched\t0\t1\tw\033[1m|g\t6.1\177lab\t-\n'
	printf 'e.0004\tok\tpatched\t0\t2\tw\033[1m|g\t6.1\177lab\t-\n'
	printf 'e.0005\tfailed\tpatched\t0\t3\tw\033[1m|g\t-\tboom \033[2J\033[H<script>x</script>\n'
} >$R/journal
for r in 1 2; do
	printf 'a|b 10\n<script>alert(1)</script> 5\nx\033[2Jy 0\nq\302\233\377 1\n' >$R/runs/e.000$r/metrics
done
for r in 3 4; do
	printf 'a|b 14\n<script>alert(1)</script> 3\nx\033[2Jy 1\nq\302\233\377 2\n' >$R/runs/e.000$r/metrics
done

# Safe for a terminal: valid UTF-8 with no control character but newline,
# no C1 control and no bidirectional override.
cat >terminal-safe.py <<'PY'
import sys, unicodedata
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # raises on a byte that is not UTF-8
for i, ch in enumerate(text):
    o = ord(ch)
    if (o < 0x20 and ch != "\n") or 0x7f <= o <= 0x9f or unicodedata.category(ch) == "Cf":
        sys.exit("%s: raw U+%04X at character %d: %r" % (sys.argv[1], o, i, text[max(0, i - 20):i + 20]))
PY
# Every Markdown table row has as many cells as its header; cells split on
# the pipes no backslash escapes.
cat >md-cells.py <<'PY'
import re, sys
def cells(line):
    return len(re.split(r"(?<!\\)\|", re.sub(r"\\\\", "", line))) - 2
head = None
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if not line.startswith("|"):
        head = None
        continue
    if head is None:
        head = cells(line)
    elif cells(line) != head:
        sys.exit("line %d has %d cells, its header %d: %s" % (n, cells(line), head, line))
PY

test_expect_success 'lab report shows every stored string escaped' "
	lab report $ID --all >report.txt &&
	python3 terminal-safe.py report.txt &&
	! grep -q '$ESC' report.txt &&
	! od -An -c report.txt | grep -q '033\\|177\\|302 233\\|377' &&
	grep -qx 'run $ID, experiment evil\\\\x1b\\[31mRED\\\\x07 | # not a heading' report.txt &&
	grep -q 'compared patched: booted 6.1\\\\x7flab; 2 runs ok, 1 failed' report.txt &&
	grep -q 'kernel base: release 6.1\\\\x1b\\]0;pwned\\\\x07' report.txt &&
	grep -q 'q\\\\u009b\\\\xff  (p=' report.txt &&
	grep -q 'e.0005 patched (infrastructure.s: unknown): boom \\\\x1b\\[2J\\\\x1b\\[H<script>x</script>' report.txt
"

test_expect_success 'a kernel name that is not a name is refused, the error escaped' "
	mkdir -p badk && cp -r $R badk/$ID &&
	printf 'base\\033[31m\\n\\302\\233patched\\377\\n' >badk/$ID/variants &&
	test_must_fail_with 2 lab report badk/$ID 2>err &&
	python3 terminal-safe.py err &&
	grep -q \"variants:1: 'base\\\\\\\\x1b\\\\[31m' is not a kernel name\" err
"

test_expect_success 'lab ls shows the experiment escaped, in line with its column' "
	lab gc --reindex >/dev/null &&
	lab ls >ls.txt &&
	python3 terminal-safe.py ls.txt &&
	! grep -q '$ESC' ls.txt &&
	grep -q '^$ID  evil\\\\x1b\\[31mRED\\\\x07 | # not a heading  5 ' ls.txt &&
	lab ls --json >ls.json &&
	python3 terminal-safe.py ls.json &&
	python3 -c 'import json; d = json.load(open(\"ls.json\")); assert d[0][\"experiment\"] == \"evil\\x1b[31mRED\\x07 | # not a heading\", d'
"

test_expect_success 'lab compare shows both runs escaped' "
	cp -r $R results/20261201-130000-bad2 &&
	lab compare $ID 20261201-130000-bad2 >cmp.txt &&
	python3 terminal-safe.py cmp.txt &&
	grep -q ':patched' cmp.txt &&
	grep -q ':base' cmp.txt
"

test_expect_success 'the Markdown report has no raw HTML, controls or broken rows' "
	lab report $ID --all --format md >report.md &&
	python3 terminal-safe.py report.md &&
	! grep -q '<script\\|<b>\\|<img' report.md &&
	! grep -q '[^\\\\]](javascript' report.md &&
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' report.md &&
	grep -q '| a\\\\|b |' report.md &&
	grep -qx '# evil\\\\\\\\x1b\\\\\\[31mRED\\\\\\\\x07 \\\\| # not a heading: $ID' report.md &&
	python3 md-cells.py report.md &&
	grep -q '^| e.0005 | patched | infrastructure.s | unknown |  | boom .*&lt;script&gt;x&lt;/script&gt; |\$' report.md &&
	test \$(grep -c '^| ' report.md) -eq 13
"

test_expect_success 'the JSON report stays valid JSON and keeps the controls' "
	lab report $ID --format json >report.json &&
	python3 terminal-safe.py report.json &&
	python3 -c 'import json; d = json.load(open(\"report.json\")); assert d[\"experiment\"] == \"evil\\x1b[31mRED\\x07 | # not a heading\", d[\"experiment\"]'
"

test_expect_success 'the HTML report escapes markup and drops controls' "
	lab report $ID --all --format html >report.html &&
	python3 terminal-safe.py report.html &&
	! grep -q '<script\\|<b>' report.html &&
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' report.html
"

test_expect_success 'an error quoting a stored metrics line shows it escaped' "
	mkdir -p bad && cp -r $R bad/$ID &&
	printf 'evil\\033[2J line 1\\n' >bad/$ID/runs/e.0001/metrics &&
	test_must_fail_with 2 lab report bad/$ID 2>err &&
	python3 terminal-safe.py err &&
	grep -q \"metrics: line 1: not a 'metric value' line: 'evil\\\\\\\\x1b\\\\[2J line 1'\" err
"

test_expect_success 'fetch names a hostile run id escaped when it refuses it' "
	python3 -c 'import io, tarfile
t = tarfile.open(\"evil.tar\", \"w\")
ti = tarfile.TarInfo(\"x\\x1b[2J\\x07/journal\"); ti.size = 1
t.addfile(ti, io.BytesIO(b\"x\"))
t.close()' &&
	mkdir -p into &&
	test_must_fail_with 2 lab fetch -o into evil.tar 2>err &&
	python3 terminal-safe.py err &&
	grep -q \"refused: 'x\\\\\\\\x1b\\\\[2J\\\\\\\\x07' is not a run id\" err
"

# The same run as run.json (what lab run writes now): the old files turned
# into JSON by python, whose escaping is its own, not lab's
cat >to-run-json.py <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
def lines(name):
    return open(src + "/" + name, encoding="utf-8").read().splitlines()
def opt(s):
    return None if s == "-" else s
journal = lines("journal")
doc = {"format": 2, "experiment": journal[0].split("experiment=", 1)[1], "variants": lines("variants"),
       "mechanism": lines("mechanism"), "expect": [], "observe": [], "runs": []}
for l in lines("expect"):
    job, metric, direction, effect = l.split("\t")
    doc["expect"].append({"job": int(job), "metric": metric, "direction": direction,
                          "effect": None if effect == "-" else float(effect)})
for l in lines("observe"):
    metric, rel, value, kernels, says = l.split("\t")
    doc["observe"].append({"metric": metric, "rel": rel, "value": float(value),
                           "kernels": [] if kernels == "-" else kernels.split(","), "says": opt(says)})
for l in journal[1:]:
    rid, status, variant, job, repeat, group, release, error = l.split("\t")
    doc["runs"].append({"id": rid, "status": status, "variant": variant, "job": int(job), "repeat": int(repeat),
                        "group": group, "release": opt(release), "error": opt(error),
                        "boot": None, "boot_pos": 0, "guest": None})
json.dump(doc, open(dst, "w"), indent=1)
PY

test_expect_success 'the same run stored as run.json reports byte for byte the same' "
	mkdir -p asjson/$ID &&
	cp -r $R/runs asjson/$ID/ &&
	python3 to-run-json.py $R asjson/$ID/run.json &&
	grep -q 'u001b' asjson/$ID/run.json &&
	lab report asjson/$ID --all >report-json.txt &&
	cmp report.txt report-json.txt &&
	lab report --format md asjson/$ID >json.md && lab report --format md $R >old.md && cmp old.md json.md &&
	lab report --format html asjson/$ID >json.html && lab report --format html $R >old.html && cmp old.html json.html
"

test_done
