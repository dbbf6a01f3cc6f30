#!/bin/sh
# lab site DIR: the results site of a store made by hand (two runs of one
# experiment, one of an experiment named "../../x <b>", one whose run.json
# is damaged): every page written, every link to a page that exists, the
# store's names escaped, nothing written outside DIR, the --json summary,
# pages of runs no longer stored removed (only what DIR/.lab-site lists:
# a user's files in DIR stay), and a bad DIR, or one in the result store,
# refused with exit 2.
. "$(dirname "$0")/test-lib.sh"

# mkrun ID EXPERIMENT SHIFT: a stored run as lab run writes it: two
# kernels, 2 boots x 2 runs a side, the patched throughput SHIFT times the
# baseline's; two declared metrics, one metric name that is markup
mkrun() {
	python3 - "results/$1" "$2" "$3" <<'PY'
import json, os, random, sys
d, exp, shift = sys.argv[1], sys.argv[2], float(sys.argv[3])
random.seed(7)
doc = {"format": 2, "experiment": exp, "variants": ["base", "patched"], "mechanism": [],
       "expect": [{"job": 0, "metric": "w.ops", "direction": "increase", "effect": 0.02},
                  {"job": 0, "metric": "w.faults", "direction": "unchanged", "effect": 0.05}],
       "observe": [], "runs": []}
seq = 0
for b in range(2):
    for v in ("base", "patched"):
        for k in range(2):
            seq += 1
            rid = "x.%04d" % seq
            doc["runs"].append({"id": rid, "status": "ok", "variant": v, "job": 0, "repeat": seq,
                                "group": "w <b>&amp;</b>", "release": "6.1-lab-" + v, "error": None,
                                "boot": "x.b%d" % (b * 2 + (v == "patched") + 1), "boot_pos": k + 1,
                                "guest": None})
            os.makedirs(os.path.join(d, "runs", rid))
            with open(os.path.join(d, "runs", rid, "metrics"), "w") as f:
                f.write("w.ops %.3f\n" % random.gauss(15200 * (shift if v == "patched" else 1), 50))
                f.write("w.faults %.1f\n" % random.gauss(23.85e6, 1e4))
                f.write("m.<script>alert(1)</script> %.3f\n" % random.gauss(5, 1))
with open(os.path.join(d, "run.json"), "w") as f:
    json.dump(doc, f, indent=2)
PY
}

# every href of every page names a file that exists under DIR
cat >links.py <<'PY'
import os, re, sys
top = os.path.realpath(sys.argv[1])
pages = 0
for dirpath, _, files in os.walk(top):
    for name in files:
        if not name.endswith(".html"):
            continue
        pages += 1
        page = os.path.join(dirpath, name)
        for href in re.findall(r"href='([^']*)'", open(page).read()):
            assert "://" not in href and not href.startswith("/"), (page, href)
            target = os.path.realpath(os.path.join(dirpath, href))
            assert target.startswith(top + os.sep), (page, href)
            assert os.path.isfile(target), (page, href, "missing")
print(pages)
PY

# every page self-contained (no script, no resource from elsewhere); the
# site's own pages (the index, exp/) also: a viewport, captions above
# charts, axis labels without e-notation (runs/ holds lab report's HTML)
cat >pages.py <<'PY'
import os, re, sys
for dirpath, _, files in os.walk(sys.argv[1]):
    for name in files:
        if not name.endswith(".html"):
            continue
        s = open(os.path.join(dirpath, name)).read()
        assert "<script" not in s.lower(), name
        assert not re.search(r"\bsrc=", s), name
        assert "http" not in s.replace("xmlns='http://www.w3.org/2000/svg'", ""), name
        if os.path.basename(dirpath) == "runs":
            continue
        assert "name='viewport'" in s, name
        for fig in re.findall(r"<figure>.*?</figure>", s, re.S):
            assert fig.index("<figcaption>") < fig.index("<svg"), name
        for label in re.findall(r"<text[^>]*>([^<]*)</text>", s):
            assert not re.search(r"\d[eE][+-]\d", label), (name, label)
PY

# the files of the test folder but the site and the test's own
tree() {
	find . -path ./out -prune -o -print |
		grep -v '^\./\(\.out\|before\|after\|stdout\|stderr\|help\|order\|want\|got\|n\)$' | sort
}

mkdir -p results
mkrun 20261201-090000-aaaa tg 1.00
mkrun 20261202-090000-bbbb tg 1.20
mkrun 20261203-090000-cccc '../../x <b>' 0.90
mkdir -p results/20261204-090000-dddd
printf '{"format": 2, "experiment": "tg", "vpcus": 1}\n' >results/20261204-090000-dddd/run.json
tree >before

test_expect_success 'lab --help lists lab site' "
	lab --help >help &&
	test_grep -q '^  site ' help
"

test_expect_success 'lab site writes the index, a report per run that loads and a page per experiment' "
	lab site out >stdout 2>stderr &&
	test_grep -q 'out/index.html: 6 pages, 4 stored runs (1 does not load), 2 experiments' stdout &&
	test_grep -q \"run '20261204-090000-dddd' does not load\" stderr &&
	test -f out/index.html &&
	test -f out/runs/20261201-090000-aaaa.html &&
	test -f out/runs/20261202-090000-bbbb.html &&
	test -f out/runs/20261203-090000-cccc.html &&
	! test -e out/runs/20261204-090000-dddd.html &&
	test -f out/exp/tg.html &&
	test \$(ls out/exp | wc -l) = 2 &&
	test \$(find out -type f | wc -l) = 7
"

test_expect_success 'DIR/.lab-site lists the files lab wrote, and nothing else' "
	(cd out && find . -type f ! -name .lab-site | sed 's,^\\./,,' | sort) >want &&
	grep -v '^#' out/.lab-site | sort >got &&
	test_cmp want got &&
	test_line_count = 7 out/.lab-site
"

test_expect_success 'the index: newest first, verdicts, the damaged run with why' "
	grep -o 'runs/2026120[0-9]-090000-[a-d]*.html' out/index.html >order &&
	printf '%s\n' runs/20261203-090000-cccc.html runs/20261202-090000-bbbb.html runs/20261201-090000-aaaa.html >want &&
	test_cmp want order &&
	test_grep -q '20261204-090000-dddd</td>' out/index.html &&
	test_grep -q 'does not load: .*run.json.*vpcus' out/index.html &&
	test_grep -q \"class='v improved'>1 improved\" out/index.html &&
	test_grep -q \"class='v regressed'>1 regressed\" out/index.html &&
	test_grep -q '2026-12-02 09:00' out/index.html
"

test_expect_success 'every link names a page that exists under DIR' "
	python3 links.py out >n &&
	test \$(cat n) = 6
"

test_expect_success 'pages are self-contained, phone-sized, captions above charts, no e-notation' "
	python3 pages.py out &&
	test_grep -q '<figcaption>w.ops: change against the baseline' out/exp/tg.html &&
	test_grep -q '<figcaption>w.faults: change against the baseline' out/exp/tg.html
"

test_expect_success 'names from the store are escaped; the hostile experiment gets a file of its own in exp/' "
	test_grep -q 'w &lt;b&gt;&amp;amp;&lt;/b&gt;' out/runs/20261201-090000-aaaa.html &&
	! grep -q 'script' out/runs/20261201-090000-aaaa.html &&
	test_grep -q '\\.\\./\\.\\./x &lt;b&gt;' out/index.html &&
	! grep -q '<b>' out/index.html out/exp/*.html &&
	f=\$(ls out/exp | grep -v '^tg.html\$') &&
	case \$f in *[!A-Za-z0-9._-]*|.*) false ;; esac &&
	test_grep -q \"href='exp/\$f'\" out/index.html
"

test_expect_success '--all: every row in the reports, markup in a metric name escaped' "
	lab site --all all >/dev/null 2>&1 &&
	test_grep -q 'm.&lt;script&gt;alert(1)&lt;/script&gt;' all/runs/20261201-090000-aaaa.html &&
	python3 pages.py all &&
	rm -r all
"

test_expect_success 'nothing is written outside DIR' "
	tree >after &&
	test_cmp before after &&
	! test -e ../x && ! test -e '../x <b>'
"

test_expect_success '--json: pages, runs, experiments, the damaged run, seconds' "
	lab site out --json >j &&
	python3 -c '
import json
d = json.load(open(\"j\"))
assert d[\"pages\"] == 6 and d[\"runs\"] == 4 and d[\"experiments\"] == 2, d
assert [x[\"id\"] for x in d[\"damaged\"]] == [\"20261204-090000-dddd\"], d
assert \"vpcus\" in d[\"damaged\"][0][\"why\"], d
assert d[\"dir\"] == \"out\" and 0 <= d[\"seconds\"] < 60 and d[\"removed\"] == 0, d
'
"

test_expect_success 'written again, the pages are the same' "
	cp -R out out.1 &&
	lab site out >/dev/null 2>&1 &&
	diff -r out.1 out
"

test_expect_success 'a run no longer stored loses its page; files lab did not write stay, pages or not' "
	echo keep >out/runs/notes.txt &&
	echo '<p>mine</p>' >out/runs/notes.html &&
	echo '<p>mine</p>' >out/exp/mine.html &&
	echo '<p>mine</p>' >out/about.html &&
	echo keep >out/runs/.20261202-090000-bbbb.html.1.tmp &&
	mv results/20261202-090000-bbbb gone-bbbb &&
	lab site out --json >j 2>/dev/null &&
	python3 -c 'import json; d = json.load(open(\"j\")); assert d[\"removed\"] == 1 and d[\"runs\"] == 3, d' &&
	! test -e out/runs/20261202-090000-bbbb.html &&
	! grep -q 20261202-090000-bbbb out/index.html out/exp/tg.html out/.lab-site &&
	test -f out/runs/notes.txt && test -f out/runs/notes.html && test -f out/exp/mine.html &&
	test -f out/about.html && test -f out/runs/.20261202-090000-bbbb.html.1.tmp &&
	! grep -q 'notes\\|mine\\|about' out/.lab-site &&
	mv gone-bbbb results/20261202-090000-bbbb &&
	lab site out >/dev/null 2>&1 &&
	test -f out/runs/20261202-090000-bbbb.html && test -f out/runs/notes.html &&
	rm out/runs/notes.txt out/runs/notes.html out/exp/mine.html out/about.html out/runs/.*.tmp &&
	python3 links.py out >/dev/null
"

test_expect_success 'a DIR with files but no manifest: written into, nothing removed' "
	mkdir -p old/runs old/exp &&
	echo '<p>an older site</p>' >old/runs/20261101-090000-zzzz.html &&
	echo '<p>mine</p>' >old/exp/mine.html &&
	echo '<p>mine</p>' >old/index.htm &&
	lab site old --json >j 2>/dev/null &&
	python3 -c 'import json; d = json.load(open(\"j\")); assert d[\"removed\"] == 0 and d[\"pages\"] == 6, d' &&
	test -f old/runs/20261101-090000-zzzz.html && test -f old/exp/mine.html && test -f old/index.htm &&
	test -f old/index.html && test -f old/.lab-site &&
	! grep -q 'zzzz\\|mine\\|htm\$' old/.lab-site &&
	lab site old >/dev/null 2>&1 &&
	test -f old/runs/20261101-090000-zzzz.html && test -f old/exp/mine.html &&
	rm -r old
"

test_expect_success 'a manifest naming anything but a page of the site: nothing of it is removed' "
	lab site hostile >/dev/null 2>&1 &&
	mkdir -p hostile/runs/sub victim &&
	echo v >victim/v.html && echo v >hostile/victim.html && echo v >hostile/runs/sub/x.html &&
	echo v >hostile/runs/.hidden.html && echo v >hostile/runs/-x.html && echo v >hostile/runs/a.txt &&
	echo v >hostile/exp/a.html && ln -s ../../victim/v.html hostile/exp/link.html &&
	{
		echo '../victim/v.html' && echo \\\$PWD/victim/v.html && echo 'runs/../../victim/v.html' &&
		echo 'exp/../../victim/v.html' && echo 'victim.html' && echo 'runs/sub/x.html' &&
		echo 'runs/.hidden.html' && echo 'runs/-x.html' && echo 'runs/a.txt' && echo 'exp/link.html' &&
		echo 'runs//a.html' && echo ' exp/a.html' && echo 'exp/a.html/'
	} >>hostile/.lab-site &&
	lab site hostile --json >j 2>/dev/null &&
	python3 -c 'import json; d = json.load(open(\"j\")); assert d[\"removed\"] == 0, d' &&
	test -f victim/v.html && test -f hostile/victim.html && test -f hostile/runs/sub/x.html &&
	test -f hostile/runs/.hidden.html && test -f hostile/runs/-x.html && test -f hostile/runs/a.txt &&
	test -f hostile/exp/a.html && test -L hostile/exp/link.html &&
	test_line_count = 7 hostile/.lab-site &&
	rm -r hostile victim
"

test_expect_success 'DIR that is a file: a clear error, exit 2, in text and JSON' "
	: >afile &&
	test_must_fail_with 2 lab site afile 2>err &&
	test_grep -q 'afile: not a folder' err &&
	test_must_fail_with 2 lab site afile/sub 2>err &&
	test_grep -q 'afile/sub: not a folder' err &&
	test_must_fail_with 2 lab --json site afile >j &&
	python3 -c 'import json; d = json.load(open(\"j\")); assert \"error\" in d, d' &&
	test -f afile && ! test -s afile
"

test_expect_success 'the results folder itself, no DIR or two: exit 2' "
	test_must_fail_with 2 lab site results 2>err &&
	test_grep -q 'results folder itself' err &&
	! test -e results/index.html &&
	test_must_fail_with 2 lab site 2>err &&
	test_grep -q 'name one folder' err &&
	test_must_fail_with 2 lab site a b 2>err
"

test_expect_success 'a DIR in the result store: a stored run, below results/, by a link or ..: exit 2, nothing written' "
	find results | sort >before.store &&
	test_must_fail_with 2 lab site results/20261201-090000-aaaa 2>err &&
	test_grep -q 'results/20261201-090000-aaaa: a stored run: the pages would go into its bundle' err &&
	test_must_fail_with 2 lab site results/20261201-090000-aaaa/site 2>err &&
	test_grep -q \"inside the stored run .*/results/20261201-090000-aaaa: the pages would go into its bundle\" err &&
	test_must_fail_with 2 lab site results/new/site 2>err &&
	test_grep -q 'results/new/site: inside the results folder' err &&
	test_must_fail_with 2 lab site out/../results 2>err &&
	test_grep -q 'the results folder itself' err &&
	test_must_fail_with 2 lab site out/../results/20261201-090000-aaaa/runs/../x 2>err &&
	ln -s results/20261201-090000-aaaa runlink && ln -s results storelink &&
	test_must_fail_with 2 lab site runlink 2>err &&
	test_grep -q 'runlink: a stored run' err &&
	test_must_fail_with 2 lab site runlink/site 2>err &&
	test_grep -q 'inside the stored run' err &&
	test_must_fail_with 2 lab site storelink 2>err &&
	test_grep -q 'the results folder itself' err &&
	test_must_fail_with 2 lab --json site storelink/x >j &&
	python3 -c 'import json; d = json.load(open(\"j\")); assert \"error\" in d, d' &&
	find results | sort >after.store &&
	test_cmp before.store after.store &&
	rm runlink storelink
"

test_expect_success 'a run folder outside the results folder (lab fetch -o) is refused too' "
	mkdir -p fetched && cp -R results/20261201-090000-aaaa fetched/ &&
	test_must_fail_with 2 lab site fetched/20261201-090000-aaaa/site 2>err &&
	test_grep -q 'inside the stored run' err &&
	! test -e fetched/20261201-090000-aaaa/site &&
	mkdir -p notarun && echo 'my own journal' >notarun/journal &&
	lab site notarun/site >/dev/null 2>&1 && test -f notarun/site/index.html &&
	rm -r fetched notarun
"

test_expect_success 'a link in the way inside DIR is not followed' "
	mkdir -p linked elsewhere &&
	ln -s ../elsewhere linked/runs &&
	test_must_fail_with 2 lab site linked 2>err &&
	test_grep -q 'linked/runs: not a folder' err &&
	test \$(ls elsewhere | wc -l) = 0
"

test_expect_success 'an empty store: an index that says so' "
	mkdir empty && (cd empty && lab site site >/dev/null) &&
	test_grep -q 'No stored runs' empty/site/index.html
"

test_done
