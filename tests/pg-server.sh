#!/usr/bin/env bash
# tests/pg-server.sh - a throwaway PostgreSQL server for the history tests.
#   tests/pg-server.sh start DIR   initdb in DIR, start a server on 127.0.0.1
#                                  and a free port (sockets in DIR too), print
#                                  its URL: postgresql://kpt:PASSWORD@127.0.0.1:PORT/postgres
#   tests/pg-server.sh stop DIR    stop it (DIR is left for the caller to remove)
# Password authentication (scram-sha-256), so that a wrong password is
# refused as it would be on a team's server. As root, the server runs as the
# postgres user (initdb refuses root). Needs the Debian postgresql package.
set -euo pipefail
cmd=${1:?start|stop} dir=${2:?DIR}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bindir/initdb" ] || bindir=$(dirname "$(command -v initdb || echo /nonexistent/initdb)")
if [ ! -x "$bindir/initdb" ]; then
	echo "pg-server: no initdb found: apt-get install postgresql" >&2
	exit 1
fi
as_pg() {
	# from /: the postgres user may not enter the caller's folder
	if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}
case $cmd in
start)
	mkdir -p "$dir"
	chmod 700 "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
		# the postgres user must reach DIR: its parent (a mktemp -d
		# folder is 0700) must let others through
		chmod a+x "$(dirname "$dir")"
	fi
	pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	as_pg sh -c "umask 077; printf '%s\n' '$pw' > '$dir/pw'"
	as_pg "$bindir/initdb" -D "$dir/data" -U kpt --pwfile="$dir/pw" --auth=scram-sha-256 -E UTF8 \
		--no-instructions >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
	as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=50" start \
		>/dev/null || { cat "$dir/server.log" >&2; exit 1; }
	echo "postgresql://kpt:$pw@127.0.0.1:$port/postgres"
	;;
stop)
	as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	;;
*)
	echo "usage: tests/pg-server.sh start|stop DIR" >&2
	exit 2
	;;
esac
