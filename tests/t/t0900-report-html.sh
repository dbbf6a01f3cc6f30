#!/bin/sh
# The HTML report of a stored run made by hand (3 boots of 2 runs a kernel,
# environment fingerprints, a hostile group and metric name): one
# self-contained file (no script, no external resource) whose SVG pictures
# are well-formed XML; the forest plot after the headline with a row per
# expectation; every figure's caption before its picture; human units and
# no e-notation in any text; the runs grouped by boot; a folding section per
# group; the environment and the commands that reproduce the run at the
# end; and headless Chromium renders it at desktop and phone width.
# lab-test-seconds: 13 (alone here on 2026-12-06: 10 s)
. "$(dirname "$0")/test-lib.sh"

test_have_prereq PYTHON3 || test_skip_all 'python3 is needed to make the run and read the HTML'

ID=20261130-120000-cafe
R=results/$ID
mkdir -p $R/runs
python3 - $R <<'PY'
import hashlib, json, os, random, sys
d = sys.argv[1]
random.seed(3)
def digest(s):
    return hashlib.sha256(s.encode()).hexdigest()
def fp(cfg):
    return {"host": "lab-box", "cpu_model": "AMD EPYC 7B13", "cpus": "2", "microcode": "0xa0011d1",
            "host_kernel": "6.1.0-28-amd64", "qemu": "7.2.13", "libvirt": "9.0.0", "accel": "tcg",
            "timing": "host", "topology": "small", "topology_digest": digest("small"),
            "pinning": "vcpus floating", "kernel_config": digest(cfg), "image": digest("image"), "lab": "0.1"}
runs, seq, boot = [], 0, 0
groups = [("w <b>&amp;</b>", 0), ("w2 threads=2", 1)]
for g, job in groups:
    for b in range(3):
        for vi, v in enumerate(["base", "patched"]):
            boot += 1
            shift = random.gauss(0, 0.01)  # each boot moves its runs a little
            for pos in range(2):
                seq += 1
                rid = "e.%04d" % seq
                runs.append({"id": rid, "status": "ok", "variant": v, "job": job, "repeat": b + 1, "group": g,
                             "release": "6.1-lab-" + v, "error": None, "boot": "e.b%d" % boot,
                             "boot_pos": pos + 1, "guest": "lab-%s-0" % v, "fingerprint": vi})
                os.makedirs(os.path.join(d, "runs", rid))
                m = {"m.tps": (16500 if vi else 15000) * (1 + shift) + random.gauss(0, 60)}
                if job == 0:
                    m["m.latency_ms"] = 9.5 * (1 + shift) + random.gauss(0, 0.1)
                    m["m.bytes"] = (36e6 if vi else 24e6) * (1 + shift) + random.gauss(0, 1e5)
                    m["m.tiny"] = 1.2e-5 * (1 + shift) + random.gauss(0, 1e-7)
                    m["m.wide"] = 10 ** random.uniform(0, 4)
                    m["m.<script>alert(1)</script>"] = random.gauss(5, 1)
                with open(os.path.join(d, "runs", rid, "metrics"), "w") as f:
                    for k, val in m.items():
                        f.write("%s %.9g\n" % (k, val))
expect = [{"job": 0, "metric": "m.tps", "direction": "increase", "effect": 0.02},
          {"job": 0, "metric": "m.latency_ms", "direction": "unchanged", "effect": 0.05},
          {"job": 0, "metric": "m.wide", "direction": "decrease", "effect": None}]
doc = {"format": 2, "experiment": "e", "variants": ["base", "patched"], "mechanism": [], "timing": "host",
       "expect": expect, "observe": [], "fingerprints": [fp("c-base"), fp("c-patched")], "runs": runs}
open(os.path.join(d, "run.json"), "w").write(json.dumps(doc, indent=2) + "\n")
PY

# The page's elements and text, as a browser's parser sees them.
cat >page.py <<'PY'
import re, sys
from html.parser import HTMLParser
VOID = {"meta", "br", "img", "input", "link", "hr", "rect", "line", "circle", "polygon", "path"}
class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.texts, self.elements = [], [], []
    def handle_starttag(self, tag, attrs):
        node = {"tag": tag, "attrs": dict(attrs), "children": [], "text": ""}
        if self.stack:
            self.stack[-1]["children"].append(node)
        self.elements.append(node)
        if tag not in VOID:
            self.stack.append(node)
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()
    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break
    def handle_data(self, data):
        inside = [n["tag"] for n in self.stack]
        if "style" not in inside:
            self.texts.append(data)
        for n in self.stack:
            n["text"] += data
def load(path):
    p = Page()
    p.feed(open(path, encoding="utf-8").read())
    return p
def find(node, tag, cls=None):
    out = []
    for c in node["children"]:
        if c["tag"] == tag and (cls is None or cls in c["attrs"].get("class", "").split()):
            out.append(c)
        out += find(c, tag, cls)
    return out
PY

test_expect_success 'the HTML report is one self-contained file with escaped names' "
	lab report --format html --all $ID >r.html &&
	grep -q '<svg' r.html &&
	! grep -qi '<script' r.html &&
	! grep -qi 'src=\\|href=\\|url(' r.html &&
	grep -q '&lt;script&gt;' r.html &&
	python3 -c '
import re, sys, xml.dom.minidom
s = open(\"r.html\").read()
svgs = re.findall(r\"<svg.*?</svg>\", s, re.S)
assert len(svgs) >= 6, len(svgs)
for svg in svgs:
    xml.dom.minidom.parseString(svg)
'
"

test_expect_success 'phone width and print: a viewport, pictures that scale, tables that scroll' "
	grep -q '<meta name=.viewport. content=.width=device-width' r.html &&
	grep -q 'svg{max-width:100%;height:auto' r.html &&
	grep -q '@media print{' r.html &&
	grep -q 'break-inside:avoid' r.html &&
	grep -q 'print-color-adjust:exact' r.html &&
	python3 -c '
import sys; sys.path.insert(0, \".\")
from page import load
p = load(\"r.html\")
tables = [e for e in p.elements if e[\"tag\"] == \"div\" and e[\"attrs\"].get(\"class\") == \"scroll\"]
wrapped = sum(len([c for c in d[\"children\"] if c[\"tag\"] == \"table\"]) for d in tables)
assert wrapped == len([e for e in p.elements if e[\"tag\"] == \"table\"]), wrapped
for svg in [e for e in p.elements if e[\"tag\"] == \"svg\"]:
    assert \"viewBox\" in svg[\"attrs\"] or \"viewbox\" in svg[\"attrs\"], svg[\"attrs\"]
'
"

test_expect_success 'the forest plot comes right after the headline, a row per expectation, worst first' "
	python3 -c '
import sys; sys.path.insert(0, \".\")
from page import load, find
p = load(\"r.html\")
body = [e for e in p.elements if e[\"tag\"] == \"body\"][0]
kids = [c[\"tag\"] for c in body[\"children\"]]
# h1, the headline, then the forest
assert kids[:5] == [\"h1\", \"p\", \"h2\", \"figure\", \"p\"], kids[:6]
fig = body[\"children\"][3]
assert fig[\"attrs\"][\"class\"] == \"forest\", fig[\"attrs\"]
rows = find(fig, \"g\", \"row\")
declared = find(fig, \"g\", \"declared\")
assert len(declared) == 3, len(declared)
assert all(r[\"text\"].lstrip().startswith(\"★\") for r in declared)
names = [r[\"text\"].split()[1] for r in declared]
assert sorted(names) == [\"m.latency_ms\", \"m.tps\", \"m.wide\"], names
# m.bytes moved +50%: a flagged change, not declared
flagged = [r for r in rows if r not in declared]
assert any(\"m.bytes\" in r[\"text\"] for r in flagged), [r[\"text\"] for r in rows]
order = [\"regressed\", \"changed\", \"improved\", \"smaller than declared\", \"unchanged\", \"inconclusive\", \"flagged\"]
words = []
for r in rows:
    w = [o for o in order if (\"■ \" + o) in r[\"text\"]]
    assert len(w) == 1, r[\"text\"]
    words.append(order.index(w[0]))
assert words == sorted(words), words
# the axis in percent, the intervals from the decision engine
assert \"0%\" in fig[\"text\"] and \"change against base, %\" in fig[\"text\"], fig[\"text\"]
tps = [r for r in rows if \" m.tps\" in r[\"text\"]][0]
assert \"improved\" in tps[\"text\"] and \"% [+\" in tps[\"text\"], tps[\"text\"]
'
"

test_expect_success 'every figure has its caption first, naming metric, group and unit' "
	python3 -c '
import sys; sys.path.insert(0, \".\")
from page import load
p = load(\"r.html\")
figs = [e for e in p.elements if e[\"tag\"] == \"figure\"]
assert len(figs) >= 6, len(figs)
for f in figs:
    assert f[\"children\"][0][\"tag\"] == \"figcaption\", [c[\"tag\"] for c in f[\"children\"]]
    assert f[\"children\"][1][\"tag\"] == \"svg\", [c[\"tag\"] for c in f[\"children\"]]
caps = [f[\"children\"][0][\"text\"].strip() for f in figs[1:]]
lat = [c for c in caps if c.startswith(\"m.latency_ms\")]
assert len(lat) == 1 and \"w <b>&amp;</b>\" in lat[0] and \"unit: ms\" in lat[0], lat
assert any(c.startswith(\"m.tps · w2 threads=2 · no unit in its name\") for c in caps), caps
for c in caps:
    assert \"points: runs, grouped by boot; ◆ boot means; bar: mean and 95% interval\" in c, c
'
"

test_expect_success 'no e-notation in any text; figures in human units' "
	python3 -c '
import re, sys; sys.path.insert(0, \".\")
from page import load
p = load(\"r.html\")
text = \" \".join(p.texts)
enot = re.findall(r\"(?<![0-9A-Za-z.])[-+]?[0-9]+(?:[.][0-9]+)?[eE][-+]?[0-9]+(?![0-9A-Za-z])\", text)
assert not enot, enot
# axes: thousands, millions, milliseconds, micro
assert re.search(r\"(?<![0-9.])1[5-7](?:[.][0-9])?k(?![a-z])\", text), \"no 15k-style label\"
assert re.search(r\"[0-9]M(?![a-zA-Z])\", text), \"no M label\"
assert re.search(r\"[0-9] ms\", text), \"no ms label\"
assert re.search(r\"[0-9]µ\", text), \"no µ label\"
# table means in the same units
cells = [e[\"text\"] for e in p.elements if e[\"tag\"] == \"td\"]
assert any(re.match(r\"^1[56](?:[.][0-9]+)?k ±\", c) for c in cells), cells
assert any(re.match(r\"^(?:9|10)(?:[.][0-9]+)? ms ±\", c) for c in cells), cells
'
"

test_expect_success 'runs grouped by boot, boot means marked; a log axis over decades' "
	python3 -c '
import sys; sys.path.insert(0, \".\")
from page import load, find
p = load(\"r.html\")
figs = [e for e in p.elements if e[\"tag\"] == \"figure\"][1:]
tps = [f for f in figs if f[\"children\"][0][\"text\"].strip().startswith(\"m.tps · w <b>\")][0]
assert len(find(tps, \"circle\")) == 12, len(find(tps, \"circle\"))
assert len(find(tps, \"polygon\")) == 6, len(find(tps, \"polygon\"))
assert \"6 runs, 3 boots\" in tps[\"text\"], tps[\"text\"]
wide = [f for f in figs if f[\"children\"][0][\"text\"].strip().startswith(\"m.wide\")][0]
assert \"log scale\" in wide[\"children\"][0][\"text\"]
assert \"log scale\" not in tps[\"children\"][0][\"text\"]
'
"

test_expect_success 'a folding section per group' "
	python3 -c '
import sys; sys.path.insert(0, \".\")
from page import load
p = load(\"r.html\")
det = [e for e in p.elements if e[\"tag\"] == \"details\"]
assert len(det) == 2, len(det)
assert all(\"open\" in d[\"attrs\"] for d in det)
assert [d[\"children\"][0][\"tag\"] for d in det] == [\"summary\", \"summary\"]
assert [d[\"children\"][0][\"text\"] for d in det] == [\"w <b>&amp;</b>\", \"w2 threads=2\"], det
'
"

test_expect_success 'the environment and the commands that reproduce the run close the page' "
	python3 -c '
import sys; sys.path.insert(0, \".\")
from page import load
p = load(\"r.html\")
body = [e for e in p.elements if e[\"tag\"] == \"body\"][0]
h2 = [c[\"text\"] for c in body[\"children\"] if c[\"tag\"] == \"h2\"]
assert h2[-2:] == [\"Environment\", \"Reproduce\"], h2
cells = [e[\"text\"] for e in p.elements if e[\"tag\"] in (\"td\", \"th\")]
for want in (\"cpu model\", \"AMD EPYC 7B13\", \"qemu version\", \"7.2.13\", \"accel\", \"tcg\", \"kernel config digest\",
             \"environment 1: base (12 runs)\", \"environment 2: patched (12 runs)\"):
    assert want in cells, (want, cells)
code = [e[\"text\"] for e in p.elements if e[\"tag\"] == \"code\"]
assert code == [\"lab reproduce $ID\", \"lab bundle $ID -o $ID.tar.zst\", \"lab reproduce $ID.tar.zst\",
                \"lab run e\", \"lab report $ID --format html --all\"], code
'
"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
test -n "$CHROMIUM" && test_set_prereq CHROMIUM
test_expect_success CHROMIUM 'headless Chromium renders it, desktop and phone: screenshots that are not blank' "
	HOME=\$PWD timeout 120 '$CHROMIUM' --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1000,900 --screenshot=\$PWD/r.png file://\$PWD/r.html >chromium.log 2>&1 &&
	'$SRC_DIR/tests/tools/png-not-blank' r.png 1000 900 &&
	HOME=\$PWD timeout 120 '$CHROMIUM' --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=400,900 --screenshot=\$PWD/phone.png file://\$PWD/r.html >chromium.log 2>&1 &&
	'$SRC_DIR/tests/tools/png-not-blank' phone.png 400 900
"

test_done
