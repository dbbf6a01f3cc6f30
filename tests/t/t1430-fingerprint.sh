#!/bin/sh
# Environment fingerprints on stored runs made here (no VM): lab report and
# lab judge refuse a comparison whose runs differ in what matters (exit 2,
# the differences listed) unless --allow-mixed, which lists them under
# "Mixed environments" in every format; lab compare puts runs and bundles
# side by side and decides only between runs measured alike; a hostile
# bundle leaves nothing behind and never touches the store.
. "$(dirname "$0")/test-lib.sh"

command -v python3 >/dev/null 2>&1 || test_skip_all 'python3 is not installed'

# make ID HOST_BASE_CPU HOST_PATCHED_CPU HOSTNAME HOSTKERNEL: a stored run, 3 boots a kernel
cat >make.py <<'PY'
import json, os, sys
rid, cpu_b, cpu_p, host, hk = sys.argv[1:6]
def fp(cpu, cfg):
    return {"host": host, "cpu_model": cpu, "cpus": "2", "microcode": "0x1", "host_kernel": hk,
            "qemu": "7.2.13", "libvirt": "9.0.0", "accel": "tcg", "timing": "host", "topology": "t",
            "topology_digest": "aa", "pinning": "vcpus floating", "kernel_config": cfg, "image": "ee", "lab": "0.1"}
fps = [fp(cpu_b, "c-base")]
if cpu_p != cpu_b:
    fps.append(fp(cpu_p, "c-patched"))
else:
    fps.append(fp(cpu_b, "c-patched"))
runs = []
d = "results/" + rid
for i in range(6):
    v = ["base", "patched"][i % 2]
    run = "e.%04d" % (i + 1)
    runs.append({"id": run, "status": "ok", "variant": v, "job": 0, "repeat": i // 2 + 1, "group": "w",
                 "release": None, "error": None, "boot": "e.b%d" % (i + 1), "boot_pos": 1, "guest": None,
                 "fingerprint": i % 2})
    os.makedirs(d + "/runs/" + run, exist_ok=True)
    val = (100 if v == "base" else 120) + i * 0.3
    open(d + "/runs/%s/metrics" % run, "w").write("m.tps %.2f\n" % val)
doc = {"format": 2, "experiment": "e", "variants": ["base", "patched"], "mechanism": [], "timing": "host",
       "expect": [], "observe": [], "fingerprints": fps, "runs": runs}
open(d + "/run.json", "w").write(json.dumps(doc, indent=2) + "\n")
PY
A=20261202-100000-aaaa
M=20261202-100000-m1c5
B=20261202-110000-bbbb
C=20261202-120000-cccc
python3 make.py $A 'AMD EPYC 7B13' 'AMD EPYC 7B13' hostA 6.1.0
python3 make.py $M 'AMD EPYC 7B13' 'Intel Xeon Gold 6338' hostA 6.1.0
python3 make.py $B 'Intel Xeon Gold 6338' 'Intel Xeon Gold 6338' hostB 6.1.0
python3 make.py $C 'AMD EPYC 7B13' 'AMD EPYC 7B13' hostC 6.12.0

test_expect_success 'run.json keeps each environment once; a run of one environment reports as before' "
	python3 -c 'import json; d = json.load(open(\"results/$A/run.json\")); assert len(d[\"fingerprints\"]) == 2' &&
	lab report $A >a.txt &&
	! grep -q 'Mixed environments' a.txt &&
	lab report --format json $A >a.json &&
	! grep -q mixed_environments a.json
"

test_expect_success 'the JSON and Markdown reports list each environment and the runs it covers' "
	lab report --format json $A >a.json &&
	python3 - a.json <<-'EOF' &&
	import json, sys
	envs = json.load(open(sys.argv[1]))['environments']
	assert [e['fingerprint'] for e in envs] == [0, 1], envs
	assert envs[0]['kernels'] == ['base'] and envs[0]['runs'] == ['e.0001', 'e.0003', 'e.0005'], envs
	assert envs[1]['kernels'] == ['patched'] and envs[1]['runs'] == ['e.0002', 'e.0004', 'e.0006'], envs
	assert envs[0]['environment']['cpu_model'] == 'AMD EPYC 7B13', envs
	assert envs[1]['environment']['kernel_config'] == 'c-patched', envs
	EOF
	lab report --format md $A >a.md &&
	test_grep -q '^## Environment\$' a.md &&
	test_grep -q '^| | environment 1: base (3 runs) | environment 2: patched (3 runs) |\$' a.md &&
	test_grep -q '^| cpu model | AMD EPYC 7B13 | AMD EPYC 7B13 |\$' a.md
"

test_expect_success 'lab report refuses runs measured on two CPU models, naming both (exit 2)' "
	test_must_fail_with 2 lab report $M 2>err &&
	test_grep -q 'differ in what matters' err &&
	test_grep -q \"base vs patched in 'w': cpu model 'AMD EPYC 7B13' / 'Intel Xeon Gold 6338'\" err &&
	test_must_fail_with 2 lab --json report $M >err.json &&
	python3 -c 'import json; assert \"cpu model\" in json.load(open(\"err.json\"))[\"error\"]'
"

test_expect_success '--allow-mixed reports them with a Mixed environments section in every format' "
	lab report --allow-mixed $M >m.txt &&
	test_grep -q '^Mixed environments (1 unfair)' m.txt &&
	! grep -q 'kernel config' m.txt &&
	lab report --allow-mixed --format md $M >m.md && test_grep -q '^## Mixed environments' m.md &&
	lab report --allow-mixed --format html $M >m.html && test_grep -q '<h2>Mixed environments</h2>' m.html &&
	lab report --allow-mixed --format json $M >m.json &&
	python3 -c 'import json; d = json.load(open(\"m.json\"))[\"mixed_environments\"]; assert d[0][\"differences\"][0] == {\"field\": \"cpu_model\", \"a\": \"AMD EPYC 7B13\", \"b\": \"Intel Xeon Gold 6338\", \"matters\": True}, d'
"

test_expect_success 'lab compare: another CPU is not comparable, and says why' "
	lab compare $A $B >ab.txt &&
	test_grep -q '^  hostA:base vs hostB:base: cpu model' ab.txt &&
	test_grep -q '^    hostB:base .*not comparable: cpu model differs' ab.txt &&
	test_grep -q '^    hostA:patched .*+20' ab.txt &&
	lab compare --json $A $B >ab.json &&
	python3 -c '
import json
d = json.load(open(\"ab.json\"))
assert d[\"columns\"] == [\"hostA:base\", \"hostA:patched\", \"hostB:base\", \"hostB:patched\"], d
cells = d[\"groups\"][0][\"metrics\"][0][\"cells\"]
assert cells[2][\"comparable\"] is False and cells[2][\"why\"] == \"cpu model differs\" and cells[2][\"change\"] is None, cells
assert cells[1][\"comparable\"] is True and cells[1][\"change\"] > 15, cells
'
"

test_expect_success 'lab compare --allow-mixed decides them anyway and says so' "
	lab compare --allow-mixed $A $B >abm.txt &&
	test_grep -q '^    hostB:base .*(mixed: cpu model differs; --allow-mixed)' abm.txt &&
	! grep -q 'not comparable' abm.txt
"

test_expect_success 'lab compare: what is only noted (host, host kernel) keeps runs comparable' "
	lab compare $A $C >ac.txt &&
	test_grep -q \"host kernel '6.1.0' / '6.12.0' (noted)\" ac.txt &&
	! grep -q 'not comparable' ac.txt &&
	test_grep -q '^    hostC:patched .*vs hostA:patched' ac.txt
"

test_expect_success 'lab compare reads a bundle in a temporary folder and leaves the store alone' "
	lab bundle $B -o b.tar.zst >/dev/null &&
	mv results/$B saved-b &&
	ls results >before &&
	mkdir tmp &&
	TMPDIR=\$PWD/tmp lab compare $A b.tar.zst >abb.txt &&
	test_grep -q 'not comparable: cpu model differs' abb.txt &&
	ls results >after && test_cmp before after &&
	test -z \"\$(ls -A tmp)\"
"

test_expect_success 'a hostile bundle is refused, nothing left behind' "
	mkdir -p evil/x && printf 'x\\n' >evil/x/f &&
	tar -C evil -cf evil.tar --transform 's,^x,../../escape,' x/f &&
	TMPDIR=\$PWD/tmp test_must_fail_with 2 lab compare $A evil.tar 2>err &&
	test -z \"\$(ls -A tmp)\" && ! test -e ../escape && ! test -e escape &&
	ls results >after2 && test_cmp before after2
"

cat >fa.json <<'JSON'
{"host": "hostA", "cpu_model": "AMD EPYC 7B13", "accel": "tcg", "qemu": "7.2.13"}
JSON
cat >fb.json <<'JSON'
{"host": "hostB", "cpu_model": "Intel Xeon Gold 6338", "accel": "tcg", "qemu": "7.2.13"}
JSON
printf 'variant,boot,run,metric,value\n' >j.csv
for b in 1 2 3; do
	printf 'base,b%s,1,m.tps,%s\npatched,p%s,1,m.tps,%s\n' $b $((100 + b)) $b $((120 + b)) >>j.csv
done

test_expect_success 'lab judge --fingerprint: refused across CPU models, --allow-mixed lists them' "
	lab judge j.csv --fingerprint base=fa.json --fingerprint patched=fa.json >same.txt &&
	! grep -q 'Mixed' same.txt &&
	test_must_fail_with 2 lab judge j.csv --fingerprint base=fa.json --fingerprint patched=fb.json 2>err &&
	test_grep -q \"cpu model 'AMD EPYC 7B13' / 'Intel Xeon Gold 6338'\" err &&
	lab judge j.csv --allow-mixed --fingerprint base=fa.json --fingerprint patched=fb.json >mixed.txt &&
	test_grep -q '^Mixed environments (1 unfair)' mixed.txt &&
	test_must_fail_with 2 lab judge j.csv --fingerprint nosuch=fa.json 2>err &&
	test_grep -q \"variant 'nosuch'\" err &&
	printf '{\"cpu_model\": 7}' >bad.json &&
	test_must_fail_with 2 lab judge j.csv --fingerprint base=bad.json 2>err &&
	test_grep -q \"'cpu_model' is an integer\" err &&
	test_must_fail_with 2 lab judge j.csv --fingerprint base=fa.json --fingerprint base=fb.json 2>err &&
	test_grep -q \"judge: --fingerprint 'base=fb.json': variant 'base' is given twice\" err
"

test_done
