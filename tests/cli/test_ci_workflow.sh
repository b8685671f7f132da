#!/usr/bin/env bash
# docs/ci/github-actions.yml, the example workflow, is valid against the
# GitHub Actions workflow schema (action-validator, from npm's
# @action-validator/cli: .ci/run installs it), and a broken copy is not.
# Skips (77) where action-validator is not installed: nothing is downloaded
# at test time.
. "$KPT_SRC/tests/cli/cli_lib.sh"
command -v action-validator >/dev/null || skip "action-validator is not installed (npm install -g @action-validator/cli)"
WF="$KPT_SRC/docs/ci/github-actions.yml"
run action-validator "$WF"
expect_rc 0 "action-validator $WF: $(cat "$T/out")"
# the validator catches a mistake (a misspelt key)
sed 's/^    steps:$/    stepz:/' "$WF" >"$T/bad.yml"
cmp -s "$WF" "$T/bad.yml" && fail "the broken copy did not change"
run action-validator "$T/bad.yml"
[ "$RC" -ne 0 ] || fail "action-validator accepted a workflow without steps"
# the workflow runs the commands it documents
for want in "kptprof gate" "--markdown kpt-out/comment.md" "kptprof view" "upload-artifact" "createComment"; do
	grep -qF -- "$want" "$WF" || fail "the workflow lacks '$want'"
done
echo "ok: the example workflow validates"
exit 0
