# kpt-deps.sh - installs the Debian/Ubuntu packages kptprof needs that are
# missing. Sourced by setup-and-run.sh and setup-and-test.sh.
#   kpt_install_deps build|test
# The CUDA toolkit is not installed here (it comes from NVIDIA's own
# repository): without it kptprof builds without the collectors and kernels.

# Needed to build kptprof and the tools its tests use.
KPT_DEPS_BUILD="build-essential cmake pkg-config libzstd-dev libpng-dev libsqlite3-dev libpq-dev"
# Needed to run the tests (cmocka unit tests, jansson JSON checks, python3
# for CLI checks, gnuplot for the viewer's plots, python3-jsonschema for the
# JSON outputs against docs/schema/, groff for the man pages).
KPT_DEPS_TEST="libcmocka-dev libjansson-dev python3 gnuplot-nox python3-jsonschema groff-base"
# The history store's tests on PostgreSQL need a server (.ci/run starts a
# throwaway one with tests/pg-server.sh; without it those tests skip).
KPT_DEPS_PG="postgresql"
# Wanted but not required: the viewer's browser test skips without it (on
# Ubuntu the chromium package needs snapd, so a failure here is not fatal).
KPT_DEPS_OPTIONAL="chromium"

# Present when dpkg knows the package, or (for tools installed another way:
# pip's cmake, a toolchain in /opt) when what it provides is found.
kpt_have() {
	dpkg -s "$1" >/dev/null 2>&1 && return 0
	case $1 in
	build-essential) command -v cc >/dev/null && command -v c++ >/dev/null && command -v make >/dev/null ;;
	cmake | pkg-config | python3) command -v "$1" >/dev/null ;;
	gnuplot-nox) command -v gnuplot >/dev/null ;;
	python3-jsonschema) python3 -c 'import jsonschema' 2>/dev/null ;;
	groff-base) command -v groff >/dev/null ;;
	libzstd-dev) pkg-config --exists libzstd 2>/dev/null ;;
	libpng-dev) pkg-config --exists libpng 2>/dev/null ;;
	libcmocka-dev) pkg-config --exists cmocka 2>/dev/null ;;
	libjansson-dev) pkg-config --exists jansson 2>/dev/null ;;
	libsqlite3-dev) pkg-config --exists 'sqlite3 >= 3.35' 2>/dev/null ;;
	libpq-dev) pkg-config --exists libpq 2>/dev/null ;;
	postgresql) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null ;;
	chromium) command -v chromium >/dev/null || command -v chromium-browser >/dev/null ;;
	*) return 1 ;;
	esac
}

kpt_install_deps() {
	local want="$KPT_DEPS_BUILD" missing="" optional="" sudo="" p
	[ "${1:-build}" = test ] && want="$want $KPT_DEPS_TEST"
	if ! command -v apt-get >/dev/null; then
		echo "kpt-deps: no apt-get here: install $want yourself" >&2
		return 0
	fi
	for p in $want; do
		kpt_have "$p" || missing="$missing $p"
	done
	if [ "${1:-build}" = test ]; then
		for p in $KPT_DEPS_OPTIONAL; do
			kpt_have "$p" || optional="$optional $p"
		done
	fi
	[ -z "$missing$optional" ] && return 0
	[ "$(id -u)" = 0 ] || sudo="sudo"
	echo "kpt-deps: installing$missing$optional" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! $sudo apt-get update -qq; then
		[ -z "$missing" ] || return 1
		echo "kpt-deps: apt-get update failed; skipping the optional$optional" >&2
		return 0
	fi
	if [ -n "$missing" ]; then
		# shellcheck disable=SC2086 # word splitting is the point
		$sudo apt-get install -y -qq --no-install-recommends $missing || return 1
	fi
	for p in $optional; do
		$sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
			|| echo "kpt-deps: optional package '$p' could not be installed; tests that need it skip" >&2
	done
}

# The PostgreSQL server for the history tests (KPT_DEPS_PG), when missing.
kpt_install_pg() {
	local sudo=""
	kpt_have postgresql && return 0
	command -v apt-get >/dev/null || { echo "kpt-deps: no apt-get here: install $KPT_DEPS_PG yourself" >&2; return 1; }
	[ "$(id -u)" = 0 ] || sudo="sudo"
	echo "kpt-deps: installing $KPT_DEPS_PG" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends $KPT_DEPS_PG
}

# CMake >= 3.25 (Debian 12, Ubuntu 24.04); older ones get a clear message.
kpt_check_cmake() {
	local v
	v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')
	if [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -n1)" != 3.25 ]; then
		echo "kpt-deps: cmake $v is older than 3.25; 'python3 -m pip install cmake' gives a newer one" >&2
		return 1
	fi
}
