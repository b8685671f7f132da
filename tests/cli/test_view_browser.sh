#!/usr/bin/env bash
# kptprof view in a real browser: headless Chromium opens index.html (next to
# it a copy with a checking script appended, so the report itself stays
# script-free), every <img> must have loaded (naturalWidth > 0), and a
# screenshot is taken (kept as $KPT_BUILD/view-screenshot.png for people and
# CI artifacts). The harness is checked too: a page with a missing picture
# must be reported broken. Skips (77) without Chromium, except with CI=true
# (fails).
. "$(dirname "$0")/cli_lib.sh"
need_synth
CHROME=""
for c in chromium chromium-browser google-chrome; do
	command -v "$c" >/dev/null && { CHROME=$(command -v "$c"); break; }
done
if [ -z "$CHROME" ]; then
	# CI installs Chromium (scripts/kpt-deps.sh, test): missing there is a
	# broken CI image, not a reason to pass without looking at the page.
	[ "${CI:-}" = true ] && fail "no Chromium but CI=true: the browser check must run in CI (Debian: apt-get install chromium)"
	skip "no Chromium (Debian: apt-get install chromium)"
fi
SYNTH=$KPT_BUILD/kpt-synth

run "$SYNTH" -o "$T/base.kpt" --runs 6 --seed 5 --noise 0.5
expect_rc 0 "kpt-synth base"
run "$SYNTH" -o "$T/new.kpt" --runs 6 --seed 5 --noise 0.5 --slow gemm:15
expect_rc 0 "kpt-synth new"
R=$T/rep
run "$KPTPROF" view "$T/new.kpt" --baseline "$T/base.kpt" --base-runs 0-2 --new-runs 3-5 -o "$R"
expect_rc 0 "view"

chrome() {
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
		--user-data-dir="$T/profile" --hide-scrollbars --virtual-time-budget=10000 "$@" 2>"$T/chrome.err"
}

# check PAGE: writes R/check-PAGE with the checker and prints its verdict line.
check() {
	cp "$R/$1" "$R/check-$1"
	cat >>"$R/check-$1" <<'JS'
<script>
window.addEventListener('load', function () {
  var imgs = document.images, bad = [];
  for (var i = 0; i < imgs.length; i++)
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push(imgs[i].getAttribute('src'));
  var m = document.createElement('pre');
  m.textContent = ['KPT', 'IMAGES', 'total=' + imgs.length, 'broken=' + bad.length, bad.join(',')].join(' ');
  document.body.appendChild(m);
});
</script>
JS
	chrome --dump-dom "file://$R/check-$1" | grep -o 'KPT IMAGES total=[0-9]* broken=[0-9]*[^<]*'
}

line=$(check index.html) || fail "Chromium printed no image check: $(tail -n 3 "$T/chrome.err")"
echo "$line"
total=$(echo "$line" | sed -n 's/.*total=\([0-9]*\).*/\1/p')
broken=$(echo "$line" | sed -n 's/.*broken=\([0-9]*\).*/\1/p')
want=$(grep -o '<img ' "$R/index.html" | wc -l)
[ "$total" = "$want" ] || fail "browser saw $total images, the page has $want"
[ "$total" -ge 2 ] || fail "too few images in the report: $total"
[ "$broken" = 0 ] || fail "images did not load: $line"

# The harness must see a broken picture.
sed 's/src="timeline.png"/src="no-such-picture.png"/' "$R/index.html" >"$R/broken.html"
line=$(check broken.html) || fail "no image check on the broken page"
echo "$line" | grep -q 'broken=1 no-such-picture.png' || fail "harness missed a broken image: $line"
rm -f "$R/broken.html" "$R/check-broken.html"

# Screenshot of the report, for people to look at.
SHOT=$KPT_BUILD/view-screenshot.png
rm -f "$SHOT"
chrome --window-size=1400,2600 --screenshot="$SHOT" "file://$R/index.html" >/dev/null
[ -s "$SHOT" ] || fail "no screenshot: $(tail -n 3 "$T/chrome.err")"
head -c 8 "$SHOT" | od -An -c | grep -q 'P   N   G' || fail "screenshot is not a PNG"
[ "$(stat -c %s "$SHOT")" -gt 50000 ] || fail "screenshot suspiciously small (blank page?)"
exit 0
