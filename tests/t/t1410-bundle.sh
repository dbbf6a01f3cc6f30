#!/bin/sh
# lab bundle and lab fetch on a stored run made by hand (no VM): the bundle
# holds every file, the reports and a MANIFEST; fetch checks every checksum,
# unpacks into the results folder and indexes the run; hostile or damaged
# bundles (absolute paths, "..", links, files outside the run, a changed,
# missing or unlisted file) are refused and leave nothing behind.
. "$(dirname "$0")/test-lib.sh"

ID=20261130-120000-beef
mkdir -p src/results/$ID/runs/e.0001 src/results/$ID/runs/e.0002 dst
printf 'base\npatched\n' >src/results/$ID/variants
printf '0\tm.tps\tincrease\t0.02\n' >src/results/$ID/expect
printf 'kernel base: release 6.1-lab-base\n' >src/results/$ID/mechanism
printf '# lab journal 1 experiment=e\ne.0001\tok\tbase\t0\t1\tw\t6.1-lab-base\t-\ne.0002\tok\tpatched\t0\t1\tw\t6.1-lab-patched\t-\n' \
	>src/results/$ID/journal
printf 'm.tps 10\n' >src/results/$ID/runs/e.0001/metrics
printf 'm.tps 12\n' >src/results/$ID/runs/e.0002/metrics
mkdir -p src/results/$ID/runs/e.0001/raw && printf 'raw output\n' >src/results/$ID/runs/e.0001/raw/w.raw

test_expect_success 'lab bundle packs the run, its reports and a MANIFEST' "
	(cd src && lab bundle $ID -o ../b.tar.zst >/dev/null) &&
	tar --zstd -tf b.tar.zst >list &&
	grep -qx '$ID/MANIFEST' list &&
	grep -qx '$ID/report.txt' list && grep -qx '$ID/report.json' list &&
	grep -qx '$ID/report.html' list &&
	grep -qx '$ID/runs/e.0001/raw/w.raw' list &&
	! grep -v '^$ID/' list &&
	tar --zstd -xOf b.tar.zst $ID/MANIFEST >manifest &&
	test_line_count = 11 manifest &&
	(cd src && lab bundle $ID -o ../b.tar.gz >/dev/null) && gzip -t b.tar.gz
"

test_expect_success 'lab fetch checks, unpacks and indexes it; lab report works on it' "
	(cd dst && lab fetch ../b.tar.zst >out) &&
	test -f dst/results/$ID/runs/e.0002/metrics &&
	(cd dst && lab ls) | grep -q '^$ID  e  *2  *2' &&
	(cd dst && lab report $ID --all) | grep -q 'm.tps'
"

test_expect_success 'a second fetch of the same run is refused unless --replace' "
	(cd dst && test_must_fail_with 1 lab fetch ../b.tar.gz 2>err) &&
	grep -q 'already in' dst/err &&
	(cd dst && lab fetch --replace ../b.tar.gz >/dev/null)
"

test_expect_success 'fetch RUN_ID copies a run of the local store into -o DIR' "
	(cd src && lab fetch $ID -o ../copy >/dev/null) &&
	test -f copy/$ID/MANIFEST && test -f copy/$ID/journal
"

# hostile bundles, made with python's tarfile
python3 - "$ID" <<'PY'
import io, sys, tarfile, hashlib
rid = sys.argv[1]
def add(t, name, data=b"x", kind=None, link=None):
    ti = tarfile.TarInfo(name)
    if kind:
        ti.type = kind
        ti.linkname = link or ""
        t.addfile(ti)
    else:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
def good(t, skip=None, change=None, extra=None):
    files = {"journal": b"# lab journal 1 experiment=e\n", "variants": b"base\n", "expect": b""}
    man = ""
    for n, d in files.items():
        if n == skip:
            pass
        else:
            add(t, rid + "/" + n, change if n == "journal" and change else d)
        man += "%s  %s\n" % (hashlib.sha256(d).hexdigest(), n)
    if extra:
        add(t, rid + "/" + extra, b"surprise")
    add(t, rid + "/MANIFEST", man.encode())
cases = {
    "abs": lambda t: add(t, "/etc/lab-pwned"),
    "dotdot": lambda t: (good(t), add(t, rid + "/../lab-pwned")),
    "symlink": lambda t: (add(t, rid + "/journal", kind=tarfile.SYMTYPE, link="/etc/passwd")),
    "outside": lambda t: (good(t), add(t, "other-run/journal")),
    "changed": lambda t: good(t, change=b"# lab journal 1 experiment=tampered\n"),
    "missing": lambda t: good(t, skip="variants"),
    "unlisted": lambda t: good(t, extra="runs/x/metrics"),
    "nomanifest": lambda t: add(t, rid + "/journal", b"# lab journal 1 experiment=e\n"),
}
for name, fill in cases.items():
    with tarfile.open("bad-%s.tar" % name, "w") as t:
        fill(t)
open("bad-garbage.tar.zst", "wb").write(b"\x28\xb5\x2f\xfd not really zstd")
PY

for c in abs:'absolute path' dotdot:"has '..'" symlink:'a link' outside:'outside' changed:'does not match its checksum' \
	missing:'variants is missing' unlisted:'not in the MANIFEST' nomanifest:'no MANIFEST' garbage:'damaged bundle\|cannot open'; do
	name=${c%%:*} why=${c#*:}
	f=bad-$name.tar
	test "$name" = garbage && f=bad-garbage.tar.zst
	test_expect_success "a bundle with $name is refused ($why) and leaves nothing" "
		mkdir -p into-$name &&
		test_must_fail_with 1 lab fetch -o into-$name $f 2>err &&
		grep -q \"$why\" err &&
		test -z \"\$(ls -A into-$name)\" &&
		! test -e /etc/lab-pwned && ! test -e lab-pwned
	"
done

test_expect_success 'lab compare: two stored runs, kernel by kernel, the first the baseline' "
	ID2=20261130-130000-f00d &&
	cp -r src/results/$ID src/results/\$ID2 &&
	printf 'm.tps 20\\n' >src/results/\$ID2/runs/e.0002/metrics &&
	(cd src && lab compare $ID \$ID2 --all) >cmp &&
	grep -q 'kernel base' cmp && grep -q 'kernel patched' cmp &&
	grep -q \"^run $ID vs \$ID2\" cmp &&
	(cd src && lab compare --format json $ID \$ID2) >cmp.json &&
	python3 -c 'import json; d = json.load(open(\"cmp.json\")); assert len(d) == 2, d' &&
	(cd src && test_must_fail_with 2 lab compare $ID 2>err) && grep -q 'name two stored runs' src/err
"

test_expect_success 'fetch refuses a malformed ssh:// source' "
	test_must_fail_with 2 lab fetch 'ssh://-oProxyCommand=x/$ID' 2>err &&
	grep -q 'is not ssh://' err &&
	test_must_fail_with 2 lab fetch 'ssh://host/../x' 2>err
"

test_done
