#!/bin/sh
# lab bundle and lab fetch on a stored run made by hand (no VM): the bundle
# holds every file, the reports and a MANIFEST; fetch checks every checksum,
# unpacks into the results folder and indexes the run; hostile or damaged
# bundles (absolute paths, "..", "~", links, hard links, devices, FIFOs, a
# member twice, files outside the run, a MANIFEST naming a path outside, a
# changed, missing or unlisted file, a decompression bomb, a truncated
# archive, a damaged journal) are refused, leave nothing behind, write
# nothing outside the folder and never cost a stored run its place.
# lab-test-seconds: 14 (alone here on 2026-12-06: 11 s)
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

test_expect_success 'the global --json makes report and compare print JSON; --format still chooses' "
	(cd dst && lab --json report $ID) >rep.json &&
	python3 -c 'import json; d = json.load(open(\"rep.json\")); assert \"variants\" in d, d' &&
	(cd dst && lab --json report $ID --format text) | grep -q 'm.tps' &&
	(cd dst && lab --json compare $ID $ID) >cmp2.json &&
	python3 -c 'import json; json.load(open(\"cmp2.json\"))'
"

test_expect_success 'a second fetch of the same run is refused unless --replace' "
	(cd dst && test_must_fail_with 2 lab fetch ../b.tar.gz 2>err) &&
	grep -q 'already in' dst/err &&
	(cd dst && lab fetch --replace ../b.tar.gz >/dev/null)
"

test_expect_success 'with --json, bundle and fetch print what they made as a JSON object' "
	(cd src && lab --json bundle $ID -o ../j.tar.zst) >bj &&
	python3 -c 'import json; assert json.load(open(\"bj\")) == {\"bundle\": \"../j.tar.zst\"}' &&
	mkdir -p jdst && lab --json fetch -o jdst j.tar.zst >fj &&
	python3 -c 'import json; assert json.load(open(\"fj\")) == {\"run\": \"jdst/$ID\"}'
"

test_expect_success 'fetch RUN_ID copies a run of the local store into -o DIR' "
	(cd src && lab fetch $ID -o ../copy >/dev/null) &&
	test -f copy/$ID/MANIFEST && test -f copy/$ID/journal
"

# hostile bundles, made with python's tarfile
mkdir -p home
python3 - "$ID" <<'PY'
import io, sys, tarfile, hashlib
rid = sys.argv[1]
def add(t, name, data=b"x", kind=None, link=None):
    ti = tarfile.TarInfo(name)
    if kind:
        ti.type = kind
        ti.linkname = link or ""
        if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
            ti.devmajor, ti.devminor = 1, 3
        t.addfile(ti)
    else:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
JOURNAL = b"# lab journal 1 experiment=e\n"
def good(t, skip=None, change=None, extra=None, files=None, manifest_extra=""):
    files = files or {"journal": JOURNAL, "variants": b"base\n", "expect": b""}
    man = ""
    for n, d in files.items():
        if n == skip:
            pass
        else:
            add(t, rid + "/" + n, change if n == "journal" and change else d)
        man += "%s  %s\n" % (hashlib.sha256(d).hexdigest(), n)
    if extra:
        add(t, rid + "/" + extra, b"surprise")
    add(t, rid + "/MANIFEST", (man + manifest_extra).encode())
ssh_key = b"ssh-ed25519 AAAA attacker\n"
cases = {
    "abs": lambda t: add(t, "/etc/lab-pwned"),
    "dotdot": lambda t: (good(t), add(t, rid + "/../lab-pwned")),
    "symlink": lambda t: (add(t, rid + "/journal", kind=tarfile.SYMTYPE, link="/etc/passwd")),
    "outside": lambda t: (good(t), add(t, "other-run/journal")),
    "changed": lambda t: good(t, change=b"# lab journal 1 experiment=tampered\n"),
    "missing": lambda t: good(t, skip="variants"),
    "unlisted": lambda t: good(t, extra="runs/x/metrics"),
    "nomanifest": lambda t: add(t, rid + "/journal", JOURNAL),
    # the MANIFEST lists it with the right checksum: only the name check stops it
    "tilde": lambda t: good(t, files={"journal": JOURNAL, "variants": b"base\n", "expect": b"",
                                      "~/.ssh/authorized_keys": ssh_key}),
    "manifestabs": lambda t: good(t, manifest_extra="%s  /etc/passwd\n" % hashlib.sha256(b"").hexdigest()),
    "manifestdotdot": lambda t: good(t, manifest_extra="%s  runs/../../x\n" % hashlib.sha256(b"").hexdigest()),
    "hardlink": lambda t: (good(t), add(t, rid + "/runs/h", kind=tarfile.LNKTYPE, link="/etc/passwd")),
    "device": lambda t: (good(t), add(t, rid + "/runs/dev", kind=tarfile.CHRTYPE)),
    "fifo": lambda t: (good(t), add(t, rid + "/runs/fifo", kind=tarfile.FIFOTYPE)),
    "duplicate": lambda t: (add(t, rid + "/journal", b"first"), good(t)),
    "control": lambda t: good(t, files={"journal": JOURNAL, "variants": b"base\n", "expect": b"",
                                        "runs/\x1b[31mred": b""}),
}
for name, fill in cases.items():
    with tarfile.open("bad-%s.tar" % name, "w", format=tarfile.GNU_FORMAT) as t:
        fill(t)
open("bad-garbage.tar.zst", "wb").write(b"\x28\xb5\x2f\xfd not really zstd")
PY

for c in abs:'absolute path' dotdot:"has '..'" symlink:'symbolic link' outside:'outside' changed:'does not match its checksum' \
	missing:'variants is missing' unlisted:'not in the MANIFEST' nomanifest:'no MANIFEST' garbage:'damaged bundle\|cannot open' \
	tilde:"'~'" manifestabs:"names '/etc/passwd', not a path inside" manifestdotdot:'not a path inside the run' \
	hardlink:'is a hard link' device:'character device' fifo:'is a FIFO' duplicate:'in the bundle twice' \
	control:'control character'; do
	name=${c%%:*} why=${c#*:}
	f=bad-$name.tar
	test "$name" = garbage && f=bad-garbage.tar.zst
	test_expect_success "a bundle with $name is refused ($why) and leaves nothing" "
		mkdir -p into-$name &&
		HOME=\$PWD/home test_must_fail_with 2 lab fetch -o into-$name $f 2>err &&
		grep -q \"$why\" err &&
		test -z \"\$(ls -A into-$name)\" &&
		test -z \"\$(ls -A home)\" &&
		! test -e /etc/lab-pwned && ! test -e lab-pwned && ! test -e x
	"
done

test_expect_success 'a truncated bundle is refused as damaged and leaves nothing' "
	size=\$(stat -c %s b.tar.gz) &&
	head -c \$((size / 2)) b.tar.gz >half.tar.gz &&
	mkdir -p into-half &&
	test_must_fail_with 2 lab fetch -o into-half half.tar.gz 2>err &&
	grep -q 'damaged bundle\|truncated' err &&
	test -z \"\$(ls -A into-half)\"
"

# a decompression bomb: 256 MiB of zeros in one member, a few hundred KiB packed
python3 - "$ID" <<'PY'
import sys, tarfile, subprocess, hashlib
rid = sys.argv[1]
class Zeros:
    def __init__(self, n): self.n = n
    def read(self, k=-1):
        k = self.n if k < 0 else min(k, self.n)
        self.n -= k
        return bytes(k)
z = subprocess.Popen(["zstd", "-q", "-3", "-o", "bomb.tar.zst"], stdin=subprocess.PIPE)
with tarfile.open(fileobj=z.stdin, mode="w|") as t:
    ti = tarfile.TarInfo(rid + "/runs/big"); ti.size = 256 << 20
    t.addfile(ti, Zeros(ti.size))
z.stdin.close(); z.wait()
PY

test_expect_success 'a decompression bomb stops at the ratio limit and leaves nothing' "
	test \$(stat -c %s bomb.tar.zst) -lt 1048576 &&
	mkdir -p into-bomb &&
	test_must_fail_with 2 lab fetch -o into-bomb bomb.tar.zst 2>err &&
	grep -q 'more than 1000 times its size' err &&
	# the message names the bundle's size, and what of it was read
	grep -q \"its first [0-9]* bytes of \$(stat -c %s bomb.tar.zst) unpack to [0-9]* bytes\" err &&
	test -z \"\$(ls -A into-bomb)\"
"

test_expect_success 'fetch --max-size stops a bundle that unpacks to more' "
	mkdir -p into-max &&
	test_must_fail_with 2 lab fetch --max-size 1k -o into-max b.tar.zst 2>err &&
	grep -q 'unpacks to more than 1024 bytes' err &&
	test -z \"\$(ls -A into-max)\" &&
	test_must_fail_with 2 lab fetch --max-size lots b.tar.zst 2>err && grep -q 'not a size' err
"

test_expect_success 'a sparse member (GNU tar) unpacks to its full size and checks out' "
	rm -rf sp && mkdir -p sp/results && cp -r src/results/$ID sp/results/ &&
	printf 'head' >sp/results/$ID/runs/e.0001/raw/sparse &&
	truncate -s 3M sp/results/$ID/runs/e.0001/raw/sparse &&
	(cd sp && lab bundle $ID -o ../plain.tar >/dev/null) &&
	mkdir -p sp2 && tar -C sp2 -xf plain.tar &&
	tar -C sp2 --sparse --format=gnu -cf sparse.tar $ID &&
	tar -tvf sparse.tar | grep -q sparse &&
	mkdir -p into-sparse &&
	lab fetch -o into-sparse sparse.tar >/dev/null &&
	test \$(stat -c %s into-sparse/$ID/runs/e.0001/raw/sparse) = 3145728 &&
	cmp into-sparse/$ID/runs/e.0001/raw/sparse sp/results/$ID/runs/e.0001/raw/sparse
"

test_expect_success 'lab bundle results/ID/ (a trailing slash) names the bundle and its members by the id' "
	(cd src && lab bundle results/$ID/ >out) &&
	grep -qx '$ID.tar.zst' src/out && test -f src/$ID.tar.zst &&
	! test -e src/.tar.zst &&
	tar --zstd -tf src/$ID.tar.zst >list && ! grep -v '^$ID/' list
"

# a bundle whose checksums pass but whose journal is damaged
python3 - "$ID" <<'PY'
import io, sys, tarfile, hashlib
rid = sys.argv[1]
files = {"journal": b"# lab journal 1 experiment=e\n../../etc\tok\tbase\t0\t1\tw\t-\t-\n",
         "variants": b"base\npatched\n", "expect": b""}
with tarfile.open("badjournal.tar", "w") as t:
    man = ""
    for n, d in files.items():
        ti = tarfile.TarInfo(rid + "/" + n); ti.size = len(d); t.addfile(ti, io.BytesIO(d))
        man += "%s  %s\n" % (hashlib.sha256(d).hexdigest(), n)
    ti = tarfile.TarInfo(rid + "/MANIFEST"); ti.size = len(man); t.addfile(ti, io.BytesIO(man.encode()))
PY

test_expect_success 'fetch --replace with a damaged journal keeps the stored run and its index entry' "
	cp dst/results/$ID/journal journal.before &&
	(cd dst && test_must_fail_with 2 lab fetch --replace ../badjournal.tar 2>../err) &&
	grep -q \"^$ID/journal:2: '../../etc' is not a run id\" err &&
	cmp journal.before dst/results/$ID/journal &&
	test -f dst/results/$ID/runs/e.0002/metrics &&
	(cd dst && lab ls) | grep -q '^$ID  e  *2  *2' &&
	(cd dst && lab report $ID --all) | grep -q 'm.tps' &&
	test -z \"\$(ls -A dst/results | grep '^\\.fetch')\"
"

test_expect_success 'fetch without --replace leaves no unindexed run behind when the run is bad' "
	mkdir -p into-badj &&
	test_must_fail_with 2 lab fetch -o into-badj badjournal.tar 2>err &&
	test -z \"\$(ls -A into-badj)\" &&
	lab fetch -o into-badj b.tar.zst >/dev/null
"

test_expect_success 'lab compare: two stored runs side by side, each kernel against the same kernel of the first' "
	ID2=20261130-130000-f00d &&
	cp -r src/results/$ID src/results/\$ID2 &&
	printf 'm.tps 20\\n' >src/results/\$ID2/runs/e.0002/metrics &&
	(cd src && lab compare $ID \$ID2) >cmp &&
	grep -q \"^    $ID:base \" cmp && grep -q \"^    \$ID2:patched .*vs $ID:patched\" cmp &&
	grep -q \"^baseline $ID:base\" cmp &&
	(cd src && lab compare --format json $ID \$ID2) >cmp.json &&
	python3 -c 'import json; d = json.load(open(\"cmp.json\")); assert len(d[\"columns\"]) == 4, d' &&
	(cd src && test_must_fail_with 2 lab compare 2>err) && grep -q 'name 1 to 16 stored runs or bundles' src/err &&
	(cd src && test_must_fail_with 2 lab compare $ID nosuchrun 2>err) && grep -q \"'nosuchrun' is neither\" src/err
"

# a bundle made by lab at 480d661, before run.json: the run in the old
# line layout (journal, variants, expect, mechanism, observe)
V1=$TEST_DIRECTORY/data/store-v1
test_expect_success 'a bundle of the old layout still fetches and reports as lab reported it then' "
	mkdir -p oldb &&
	lab fetch -o oldb '$V1/bundle-20261130-101500-ab12.tar.gz' >/dev/null &&
	test -f oldb/20261130-101500-ab12/journal && ! test -e oldb/20261130-101500-ab12/run.json &&
	lab report oldb/20261130-101500-ab12 >old.txt &&
	test_cmp '$V1/report.txt' old.txt &&
	lab report --format json oldb/20261130-101500-ab12 >old.json &&
	test_cmp '$V1/report.json' old.json
"

NID=20261130-140000-cafe
mkdir -p src/results/$NID/runs/e.0001 src/results/$NID/runs/e.0002
cat >src/results/$NID/run.json <<'EOF'
{"format": 2, "experiment": "e", "variants": ["base", "patched"], "mechanism": [],
 "expect": [{"job": 0, "metric": "m.tps", "direction": "increase", "effect": 0.02}], "observe": [],
 "runs": [{"id": "e.0001", "status": "ok", "variant": "base", "job": 0, "repeat": 1, "group": "w",
           "release": "6.1-lab-base", "error": null, "boot": "e.b1", "boot_pos": 1, "guest": "lab-base-0"},
          {"id": "e.0002", "status": "ok", "variant": "patched", "job": 0, "repeat": 1, "group": "w",
           "release": "6.1-lab-patched", "error": null, "boot": "e.b2", "boot_pos": 1, "guest": "lab-patched-0"}]}
EOF
printf 'm.tps 10\n' >src/results/$NID/runs/e.0001/metrics
printf 'm.tps 12\n' >src/results/$NID/runs/e.0002/metrics

test_expect_success 'a run stored as run.json bundles, fetches and reports' "
	(cd src && lab bundle $NID -o ../n.tar.zst >/dev/null) &&
	tar --zstd -tf n.tar.zst >nlist &&
	grep -qx '$NID/run.json' nlist && ! grep -q '/journal\$' nlist &&
	mkdir -p ndst && lab fetch -o ndst n.tar.zst >/dev/null &&
	cmp src/results/$NID/run.json ndst/$NID/run.json &&
	lab report ndst/$NID --all >nrep && grep -q 'm.tps' nrep
"

test_expect_success 'a damaged run.json is refused, naming the file, line and column' "
	mkdir -p bad/$NID/runs && printf '{\"format\": 2,\n \"experiment\": }\n' >bad/$NID/run.json &&
	test_must_fail_with 2 lab report bad/$NID 2>err &&
	grep -q '^bad/$NID/run.json:2:16: ' err
"

# a stand-in for ssh: after "--" comes the host, then the remote command,
# run here in src/ (or, with FAKE_SSH_BUNDLE set, that file printed instead)
mkdir -p fakebin
cat >fakebin/ssh <<EOF
#!/bin/sh
while [ "\$1" != "--" ]; do shift; done
shift 2
if [ -n "\${FAKE_SSH_BUNDLE:-}" ]; then cat "\$FAKE_SSH_BUNDLE"; exit 0; fi
[ "\$1" = lab ] || exit 127
shift
cd "$TRASH/src" && exec "$LAB" "\$@"
EOF
chmod +x fakebin/ssh

test_expect_success 'fetch ssh://HOST/RUN_ID takes the remote lab bundle output, checked and indexed' "
	mkdir -p viassh &&
	(cd viassh && PATH=\$TRASH/fakebin:\$PATH lab fetch ssh://user@lab-box:2222/$ID >out) &&
	test -f viassh/results/$ID/runs/e.0002/metrics &&
	(cd viassh && lab ls) | grep -q '^$ID  e' &&
	test -z \"\$(ls -A viassh/results | grep -v '^$ID\$\\|^index')\"
"

test_expect_success 'a remote host that sends a hostile bundle gets it refused, nothing left' "
	mkdir -p viassh2 home2 &&
	(cd viassh2 && HOME=\$TRASH/home2 FAKE_SSH_BUNDLE=\$TRASH/bad-tilde.tar PATH=\$TRASH/fakebin:\$PATH \
		test_must_fail_with 2 lab fetch ssh://lab-box/$ID 2>err) &&
	grep -q \"'~'\" viassh2/err &&
	test -z \"\$(ls -A home2)\" &&
	test -z \"\$(ls -A viassh2/results)\"
"

test_expect_success 'fetch refuses a malformed ssh:// source' "
	test_must_fail_with 2 lab fetch 'ssh://-oProxyCommand=x/$ID' 2>err &&
	grep -q 'is not ssh://' err &&
	test_must_fail_with 2 lab fetch 'ssh://host/../x' 2>err
"

test_done
