#!/bin/bash
# No secret of a store URL in any output (issue 21, item 3): a corpus of
# odd URLs, each password being "topsecret" (or pieces of it, or encoded),
# through the commands that take a store; stdout and stderr must hold
# neither "secret" nor a quoted piece of the password, and each command
# fails with exit 2. Before: libpq's parse message echoed the whole URL
# ('postgres://u:topsecret@[::1:1/db') and a second password= was shown.
# With $KPT_TEST_PG_URL, also a real server refusing a wrong password.
. "$KPT_SRC/tests/cli/cli_lib.sh"
BASE="$KPT_DATA/copy_base.kpt"
"$KPTPROF" history ls --db "postgresql://x" 2>&1 | grep -q "built without PostgreSQL" &&
	skip "kptprof is built without PostgreSQL (libpq)"

urls=$(cat <<'EOF'
postgres://u:topsecret@[::1:1/db
postgresql://u:topsecret@127.0.0.1:1/db
postgres://u:top%73ecret@127.0.0.1:1/db
postgres://u:top%2Fsecret@127.0.0.1:1/db
postgres://u:top/secret@127.0.0.1:1/db
postgres://u:top@secret@127.0.0.1:1/db
postgres://u:top?secret@127.0.0.1:1/db
postgres://u:top:secret@127.0.0.1:1/db
postgres://u:topsecret@127.0.0.1:1/db?bogus=1
postgres://u:topsecret@127.0.0.1:badport/db
postgres://u:topsecret@127.0.0.1:1/db?port=topsecret
postgres://u:topsecret@127.0.0.1:1/db?sslmode=topsecret
postgres://127.0.0.1:1/db?password=topsecret
postgres://127.0.0.1:1/db?user=u&password=topsecret&sslmode=disable
postgres://127.0.0.1:1/db?pass%77ord=topsecret
postgres://127.0.0.1:1/db?PASSWORD=topsecret
postgres://127.0.0.1:1/db?password=top%73ecret
postgres://u:x@127.0.0.1:1/db?password=topsecret
postgres://127.0.0.1:1/db?password=abc&password=topsecret
postgres://127.0.0.1:1/db?sslpassword=topsecret
postgres://u:topsecret@127.0.0.1:1/db?dbname=host%3Dx%20password%3Dtopsecret
postgres://u:topsecret@/db?host=/nonexistent-socket-dir
postgresql://u:'topsecret'@127.0.0.1:1/db
host=127.0.0.1 port=1 password=topsecret
host=127.0.0.1 password='top secret' port=1
host=127.0.0.1 password = topsecret port=1
host=127.0.0.1 password=abc password=topsecret
host=127.0.0.1 password topsecret
EOF
)
if [ -n "${KPT_TEST_PG_URL:-}" ]; then
	hostpart=${KPT_TEST_PG_URL##*@}
	urls+=$'\n'"postgresql://kpt:topsecret@$hostpart"
	urls+=$'\n'"postgresql://kpt@$hostpart?password=topsecret"
	urls+=$'\n'"postgresql://kpt:wrong@$hostpart?password=abc&password=topsecret"
fi

cd "$T" || fail "cannot enter $T"
n=0
u=0
while IFS= read -r url; do
	# gate --db and view --db open the store as ls does and print its
	# name as add does: they run on every fourth URL and the real server's
	# (loading the recording makes them slow)
	cmds=("history ls" "history add $BASE")
	u=$((u + 1))
	{ [ $((u % 4)) = 1 ] || [ "${url#*kpt}" != "$url" ]; } && cmds+=("gate --from $BASE" "view $BASE -o $T/v")
	for cmd in "${cmds[@]}"; do
		# shellcheck disable=SC2086
		run "$KPTPROF" $cmd --db "$url"
		n=$((n + 1))
		cat "$T/out" "$T/err" >"$T/all"
		if grep -qi 'secret' "$T/all" || grep -q '"top"' "$T/all"; then
			fail "'$cmd --db $url' printed the secret: $(cat "$T/all")"
		fi
		# a key=value string is no URL: add makes a SQLite file of that name
		[ "$RC" = 2 ] || { [ "$RC" = 0 ] && [ "${url#host=}" != "$url" ] && [ "$cmd" = "history add $BASE" ]; } ||
			fail "'$cmd --db $url': exit $RC, expected 2: $(cat "$T/all")"
	done
done <<<"$urls"
echo "ok: $n runs over $(wc -l <<<"$urls") URLs, no secret printed"
