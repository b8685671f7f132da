# kptprof report on a recording with one corrupt section: exit 2, one line
# naming the file and the section, nothing on stdout (text and json), for
# every section the report header reads (meta, devices, processes, env), the
# counters of a --counters recording and, with --by range, the ranges.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
: "${KPT_DATA:?KPT_DATA must name tests/data}"

# corrupt SRC DST ID: copies SRC to DST with one byte in the middle of the
# zstd frame of section ID (lib/kpt_format_int.h) flipped; fails when SRC has
# no such section.
corrupt() {
	python3 - "$1" "$2" "$3" <<'PY' || fail "cannot corrupt section $3 of $1"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
toc_off, toc_count, toc_entry = struct.unpack_from("<QII", b, 16)
for i in range(toc_count):
    sid, codec, off, size = struct.unpack_from("<IIQQ", b, toc_off + i * toc_entry)
    if sid == int(sys.argv[3]):
        assert codec == 1 and size > 8, (codec, size)
        b[off + size // 2] ^= 0xFF
        break
else:
    sys.exit("no section %s" % sys.argv[3])
open(sys.argv[2], "wb").write(b)
PY
}

src="$KPT_DATA/collector_app.kpt"
[ -r "$src" ] || skip "tests/data/collector_app.kpt is missing"
run "$KPTPROF" report "$src" --format json
expect_rc 0 "report of the intact recording"

for sec in 1:meta 3:devices 4:processes 10:env; do
	id=${sec%%:*}
	name=${sec#*:}
	corrupt "$src" "$T/bad-$name.kpt" "$id"
	for fmt in text json md; do
		run "$KPTPROF" report "$T/bad-$name.kpt" --format "$fmt"
		expect_error "corrupt $name section, --format $fmt" "cannot read '$T/bad-$name.kpt': $name section"
	done
done

# a recording made with --counters (H100): its counters section too
csrc="$KPT_DATA/quick_counters_h100.kpt"
run "$KPTPROF" report "$csrc"
expect_rc 0 "report of the intact counters recording"
expect_out "Counters (replay pass"
corrupt "$csrc" "$T/bad-counters.kpt" 11
for fmt in text json md; do
	run "$KPTPROF" report "$T/bad-counters.kpt" --format "$fmt"
	expect_error "corrupt counters section, --format $fmt" "cannot read '$T/bad-counters.kpt': counters section"
done

corrupt "$src" "$T/bad-ranges.kpt" 8
run "$KPTPROF" report "$T/bad-ranges.kpt" --by range
expect_error "corrupt ranges section, --by range" "cannot read '$T/bad-ranges.kpt': ranges section"
run "$KPTPROF" report "$T/bad-ranges.kpt" --by range --format json
expect_error "corrupt ranges section, --by range --format json" "ranges section"
exit 0
