#!/usr/bin/env bash
# The example workflows are valid against the GitHub Actions workflow schema
# (action-validator, from npm's @action-validator/cli: .ci/run installs it),
# and a broken copy of each is not: docs/ci/github-actions.yml (the bundled
# suite's gate), docs/ci/project-gate.yml (a user's project: gate
# --against the base branch, the baseline on main) and docs/ci/store-gate.yml
# (the main-branch loop: main adds its session to the history store, pull
# requests gate against the newest N).
# Skips (77) where action-validator is not installed: nothing is downloaded
# at test time.
. "$KPT_SRC/tests/cli/cli_lib.sh"
command -v action-validator >/dev/null || skip "action-validator is not installed (npm install -g @action-validator/cli)"

# check WORKFLOW WANT...: it validates, a copy without "steps:" does not,
# and it has each WANT (the commands it documents).
check() {
	local wf=$KPT_SRC/docs/ci/$1 want
	shift
	run action-validator "$wf"
	expect_rc 0 "action-validator $wf: $(cat "$T/out")"
	# the validator catches a mistake (a misspelt key)
	sed 's/^    steps:$/    stepz:/' "$wf" >"$T/bad.yml"
	cmp -s "$wf" "$T/bad.yml" && fail "the broken copy of $wf did not change"
	run action-validator "$T/bad.yml"
	[ "$RC" -ne 0 ] || fail "action-validator accepted $wf without steps"
	for want in "$@"; do
		grep -qF -- "$want" "$wf" || fail "$wf lacks '$want'"
	done
}
check github-actions.yml "kptprof gate" "--markdown kpt-out/comment.md" "kptprof view" "upload-artifact" "createComment"
# shellcheck disable=SC2016 # the workflow's text, not expanded here
check project-gate.yml "runs-on: [self-hosted, gpu]" "fetch-depth: 0" \
	'kptprof gate --against "origin/$BASE_REF" --markdown gate.md --junit gate.xml --json gate.json' \
	"BASE_REF: \${{ github.base_ref }}" "upload-artifact" "createComment" "steps.gate.outputs.rc == '1'" \
	"kptprof record --project kptprof.json -o main.kpt" "kptprof baseline update main.kpt" \
	"github.event.pull_request.head.repo.full_name == github.repository"
# shellcheck disable=SC2016 # the workflow's text, not expanded here
check store-gate.yml "KPTPROF_DB: \${{ secrets.KPTPROF_DB }}" \
	'kptprof gate --suite default --runs 5 --db "$KPTPROF_DB" --baseline-sessions "$SESSIONS"' \
	"kptprof record --suite default --runs 5 -o main.kpt" \
	'kptprof gate --from main.kpt --db "$KPTPROF_DB" --baseline-sessions "$SESSIONS"' \
	'kptprof history add main.kpt --db "$KPTPROF_DB" --branch main --commit "$GITHUB_SHA"' \
	"github.event.pull_request.head.repo.full_name == github.repository" "steps.gate.outputs.rc == '1'"
echo "ok: the example workflows validate"
exit 0
