# kpt-deps.sh - installs the Debian/Ubuntu packages kptprof needs that are
# missing. Sourced by setup-and-run.sh and setup-and-test.sh.
#   kpt_install_deps build|test    0: go on; 2: a required package is missing
#                                  (one line names it)
# Only what is required stops the set-up: the compiler, CMake, pkg-config
# and zstd (and, for the tests, cmocka and python3). Everything else is
# optional: installed when apt-get can, otherwise one line says what was
# left out and what that costs, and the set-up goes on. That covers a
# machine with no network (GPU clusters often have none), no root and no
# sudo (sudo is only used non-interactively), and no apt-get at all.
# The CUDA toolkit is not installed here (it comes from NVIDIA's own
# repository): without it kptprof builds without the collectors and kernels.
#
# For the set-up's own test (tests/cli/test_setup_offline.sh):
# KPT_DEPS_PRETEND_MISSING="pkg ..." treats those packages as absent.

# Required: name only.
KPT_DEPS_BUILD="build-essential cmake pkg-config libzstd-dev"
KPT_DEPS_TEST="libcmocka-dev python3"
# Optional: "package|what is lost without it" (one line each).
KPT_DEPS_BUILD_OPTIONAL="libsqlite3-dev|'kptprof history' and 'gate --db' have no SQLite store
libpq-dev|'kptprof history' and 'gate --db' have no PostgreSQL store
libpng-dev|'kptprof view' draws no timeline PNG
zlib1g-dev|'kptprof import' refuses .json.gz traces (gunzip them first)"
KPT_DEPS_TEST_OPTIONAL="libjansson-dev|the export tests do not parse their JSON
gnuplot-nox|no plots ('view', 'diff --plots', 'history plot'); their tests skip
chromium|the viewer's browser test skips
cmark-gfm|the Markdown test does not render the PR comment (skips)
python3-jsonschema|the JSON outputs are not checked against docs/schema/ (skips)
groff-base|the man pages are not checked (skips)"
# The history store's tests on PostgreSQL need a server (.ci/run starts a
# throwaway one with tests/pg-server.sh; without it those tests skip).
KPT_DEPS_PG="postgresql"

# Present when dpkg knows the package, or (for tools installed another way:
# pip's cmake, a toolchain in /opt) when what it provides is found.
kpt_have() {
	case " ${KPT_DEPS_PRETEND_MISSING:-} " in *" $1 "*) return 1 ;; esac
	dpkg -s "$1" >/dev/null 2>&1 && return 0
	case $1 in
	build-essential) command -v cc >/dev/null && command -v c++ >/dev/null && command -v make >/dev/null ;;
	cmake | pkg-config | python3) command -v "$1" >/dev/null ;;
	gnuplot-nox) command -v gnuplot >/dev/null ;;
	python3-jsonschema) python3 -c 'import jsonschema' 2>/dev/null ;;
	groff-base) command -v groff >/dev/null ;;
	libzstd-dev) pkg-config --exists libzstd 2>/dev/null ;;
	libpng-dev) pkg-config --exists libpng 2>/dev/null ;;
	zlib1g-dev) pkg-config --exists zlib 2>/dev/null ;;
	libcmocka-dev) pkg-config --exists cmocka 2>/dev/null ;;
	libjansson-dev) pkg-config --exists jansson 2>/dev/null ;;
	libsqlite3-dev) pkg-config --exists 'sqlite3 >= 3.35' 2>/dev/null ;;
	libpq-dev) pkg-config --exists libpq 2>/dev/null ;;
	postgresql) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null ;;
	chromium) command -v chromium >/dev/null || command -v chromium-browser >/dev/null ;;
	cmark-gfm) command -v cmark-gfm >/dev/null ;;
	*) return 1 ;;
	esac
}

# How to run apt-get here: "" as root, "sudo -n" when sudo works without a
# password; fails (returns 1, says why in $KPT_APT_WHY) when packages cannot
# be installed at all.
kpt_apt_prefix() {
	KPT_APT_WHY=""
	if ! command -v apt-get >/dev/null; then
		KPT_APT_WHY="no apt-get here"
		return 1
	fi
	if [ "$(id -u)" = 0 ]; then
		KPT_APT=""
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		KPT_APT="sudo -n"
	else
		KPT_APT_WHY="not root and no password-less sudo"
		return 1
	fi
}

# apt-get update once per set-up, bounded: on a machine without network it
# fails after the resolver gives up, and the lists it had stay usable.
kpt_apt_update() {
	[ -n "${KPT_APT_UPDATED:-}" ] && return "$KPT_APT_UPDATED"
	export DEBIAN_FRONTEND=noninteractive
	if timeout 180 $KPT_APT apt-get update -qq >/dev/null 2>&1; then
		KPT_APT_UPDATED=0
	else
		KPT_APT_UPDATED=1
	fi
	return "$KPT_APT_UPDATED"
}

kpt_apt_install() {
	# shellcheck disable=SC2086 # word splitting is the point
	timeout 900 $KPT_APT apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}

kpt_install_deps() {
	local want="$KPT_DEPS_BUILD" optional="$KPT_DEPS_BUILD_OPTIONAL" missing="" p line left=""
	local can=1 n_opt=0
	if [ "${1:-build}" = test ]; then
		want="$want $KPT_DEPS_TEST"
		optional="$optional
$KPT_DEPS_TEST_OPTIONAL"
	fi
	for p in $want; do
		kpt_have "$p" || missing="$missing $p"
	done
	while IFS= read -r line; do
		p=${line%%|*}
		kpt_have "$p" || { left="$left$line
"; n_opt=$((n_opt + 1)); }
	done <<<"$optional"
	[ -z "$missing" ] && [ $n_opt = 0 ] && return 0

	kpt_apt_prefix || can=0
	if [ $can = 1 ]; then
		echo "kpt-deps: installing$missing $(printf '%s' "$left" | cut -d'|' -f1 | tr '\n' ' ')" >&2
		kpt_apt_update || echo "kpt-deps: apt-get update failed (no network?): trying the package lists this machine has" >&2
		if [ -n "$missing" ]; then
			# shellcheck disable=SC2086
			kpt_apt_install $missing || true
		fi
	fi
	# What is still missing after trying.
	local still=""
	for p in $missing; do
		kpt_have "$p" || still="$still $p"
	done
	if [ -n "$still" ]; then
		echo "kptprof: required package(s) missing:$still (${KPT_APT_WHY:-apt-get could not install them}): install them and run again" >&2
		return 2
	fi
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		p=${line%%|*}
		if [ $can = 1 ] && kpt_apt_install "$p" && kpt_have "$p"; then
			continue
		fi
		echo "kpt-deps: left out optional '$p' (${KPT_APT_WHY:-could not be installed}): ${line#*|}" >&2
	done <<<"$left"
	return 0
}

# The PostgreSQL server for the history tests (KPT_DEPS_PG), when missing.
kpt_install_pg() {
	kpt_have postgresql && return 0
	kpt_apt_prefix || { echo "kpt-deps: cannot install $KPT_DEPS_PG ($KPT_APT_WHY)" >&2; return 1; }
	echo "kpt-deps: installing $KPT_DEPS_PG" >&2
	kpt_apt_update
	kpt_apt_install $KPT_DEPS_PG
}

# CMake >= 3.25 (Debian 12, Ubuntu 24.04); older ones get a clear message.
kpt_check_cmake() {
	local v
	v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')
	if [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -n1)" != 3.25 ]; then
		echo "kptprof: cmake $v is older than 3.25: 'python3 -m pip install cmake' gives a newer one" >&2
		return 2
	fi
}
