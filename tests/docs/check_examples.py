#!/usr/bin/env python3
"""Run the command examples of README.md and docs/*.md against committed data.

The convention (CONTRIBUTING.md, "Test", says it for writers):

* A fenced block whose lines start with "$ " is a transcript. Each "$ CMD"
  (a line ending in a backslash continues on the next) is run with bash in a
  scratch folder that holds the tree's tests/, baselines/, examples/, bench/,
  scripts/ and build/ (symlinks), kptprof on PATH, NO_COLOR=1 and
  KPTPROF_NO_PROGRESS=1; the lines up to the next "$ " or the fence are its
  output (stdout then stderr) and must be printed exactly. The commands of
  one block run in order in one scratch folder, so "$ echo $?" sees the exit
  status of the command before it. Normalised, and only this: a line that is
  exactly "..." stands for any number of lines (rows cut), and " ... " inside
  a line for any text (columns cut).
* Every other line of an ```sh block that starts with "kptprof " is run too,
  its output not compared, and must exit 0 or 1 (or, under a "parse only"
  marker, only parsed: for blocks whose files are placeholders).
* A command that needs a GPU (record; gate without --from; ab) is checked by
  option parsing only: run with KPTPROF_CHECK_ARGS=1, kptprof parses the
  command line and exits 0 before it touches a GPU. Its output is not
  compared, except under an "output of" marker.
* Markers, an HTML comment on the last non-blank line before the fence:
    <!-- example: not run: REASON -->       the block is an illustration
    <!-- example: parse only: REASON -->    every command only parsed
    <!-- example: varies: dates -->         ISO 8601 UTC times (2026-11-24T03:32:41Z)
                                            compare equal: history stores add-times
    <!-- example: setup: SHELL -->          run first, in the scratch folder
    <!-- example: columns: N -->            run under a terminal N columns wide
    <!-- example: output of: CMD -->        the first transcript command needs
                                            a GPU; CMD, run on committed data, must
                                            print what it shows from its first
                                            "..." line on (before it: progress);
                                            for a command that needs no GPU but
                                            cannot run here (it builds), CMD must
                                            print all it shows
  Several markers may stand on consecutive lines.

Usage: check_examples.py --kptprof BIN --src DIR --build DIR [--update] [--list] [FILE...]
--update rewrites the output of each exactly checked command that differs:
whole, or where it has cuts ("..."), each kept line from the line of the
new output that begins like it (what that cannot match is listed for a
person to redo).
"""
import argparse, fcntl, os, pty, re, select, shlex, shutil, struct, subprocess, sys, tempfile, termios

GPU_CMDS = ("record", "ab")
RUNNABLE = ("diff", "report", "view", "baseline", "history", "import", "export", "gate",
            "compare", "help", "version", "workloads", "devices")
MARK = re.compile(r"<!--\s*example:\s*([a-z ]+?)\s*(?::\s*(.*?))?\s*-->")
DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
LINKS = ("tests", "baselines", "examples", "bench", "scripts", "docs", "kernels", "cli", "lib")


def parse_file(path):
    """Yields blocks: dict(line, lang, lines (text), marks {name: value})."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        marks, k = {}, start - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        while k >= 0 and MARK.search(lines[k]):
            mm = MARK.search(lines[k])
            marks[mm.group(1)] = mm.group(2) or ""
            k -= 1
        yield {"line": start + 1, "lang": lang, "body": lines[start + 1:j], "marks": marks,
               "body_start": start + 1}
        i = j + 1


def commands(block):
    """[(cmd, want or None, first line index in body, end index)]"""
    body, out, i = block["body"], [], 0
    if block["lang"] not in ("", "sh", "console", "shell"):
        return out
    transcript = any(l.startswith("$ ") for l in body)
    while i < len(body):
        l = body[i]
        if transcript and l.startswith("$ "):
            cmd, s = l[2:], i
            while cmd.endswith("\\") and i + 1 < len(body):
                i += 1
                cmd = cmd[:-1] + " " + body[i].strip()
            i += 1
            j = i
            while j < len(body) and not body[j].startswith("$ "):
                j += 1
            out.append((cmd, body[i:j], i, j))
            i = j
            continue
        if not transcript and block["lang"] == "sh" and l.startswith("kptprof "):
            out.append((l, None, i, i + 1))
        i += 1
    return out


def kptprof_words(cmd):
    """The argv of each 'kptprof ...' in a shell line (comments, pipes, ; and && cut)."""
    res = []
    try:
        lex = shlex.shlex(cmd, posix=True, punctuation_chars=";&|<>()")
        lex.whitespace_split = True
        lex.commenters = "#"
        words = list(lex)
    except ValueError:
        return res
    cur = None
    for w in words + [";"]:
        if w in (";", "&&", "||", "|", "&", ">", "<", ">>", "2>", "(", ")") or set(w) <= set(";&|<>()"):
            if cur:
                res.append(cur)
            cur = None
            continue
        if cur is None:
            cur = [w] if w == "kptprof" else []
        elif cur:
            cur.append(w)
    return [r for r in res if r]


def needs_gpu(argv):
    sub = argv[1] if len(argv) > 1 else ""
    if sub in GPU_CMDS:
        return True
    if sub == "gate":
        return "--from" not in argv or "--against" in argv
    return False


def run_pty(script, cwd, env, cols):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe("bash", ["bash", "-c", script], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    data = b""
    while True:
        try:
            r, _, _ = select.select([fd], [], [], 120)
            if not r:
                break
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    return data.decode("utf-8", "replace").replace("\r\n", "\n"), os.waitstatus_to_exitcode(status)


def run(script, cwd, env, cols=None):
    if cols:
        return run_pty(script, cwd, env, cols)
    r = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    return r.stdout.decode("utf-8", "replace"), r.returncode


def line_match(want, got):
    if want == got:
        return True
    if " ... " not in want:
        return False
    return re.fullmatch(" .* ".join(re.escape(p) for p in want.split(" ... ")), got) is not None


def lines_match(want, got):
    """want with '...' lines (any number of lines) against got; greedy-free DP."""
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(want):
            r = j == len(got)
        elif want[i] == "...":
            r = any(m(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and line_match(want[i], got[j]) and m(i + 1, j + 1)
        memo[(i, j)] = r
        return r
    sys.setrecursionlimit(100000)
    return m(0, 0)


def recut(want, got):
    """want's cuts applied to got: each kept line replaced by the line of got
    that begins like it (a cut line: its text before ' ... ', and got's last
    characters as many as its tail had; a whole line: the got line sharing
    the longest start and end, 12 characters at least; a blank line: the
    next blank one). None when the result does
    not match got (a person redoes it)."""
    out, used = [], set()
    for w in want:
        if w == "...":
            out.append(w)
            continue
        if " ... " in w:
            head, tail = w.split(" ... ", 1)[0], w.rsplit(" ... ", 1)[1]
            cand = [j for j, g in enumerate(got) if j not in used and g.startswith(head + " ")]
            if not cand:
                return None
            g = got[cand[0]]
            used.add(cand[0])
            out.append(head + " ... " + (g[-len(tail):] if tail else ""))
            continue
        best, bl = None, 11
        for j, g in enumerate(got):
            if j in used or (w == "") != (g == ""):
                continue
            # shared start and end (a row's first and last columns)
            n = len(os.path.commonprefix([w, g])) + len(os.path.commonprefix([w[::-1], g[::-1]]))
            if w == "" or n > bl:
                best, bl = j, n
                if w == "":
                    break
        if best is None:
            return None
        used.add(best)
        out.append(got[best])
    return out if lines_match(out, got) else None


class Checker:
    def __init__(self, a):
        self.a = a
        self.counts = {"exact": 0, "run": 0, "parse": 0, "exempt": 0}
        self.bad = 0
        self.manual = []
        self.bindir = tempfile.mkdtemp(prefix="kpt-examples-bin.")
        os.symlink(os.path.abspath(a.kptprof), os.path.join(self.bindir, "kptprof"))
        self.env = dict(os.environ, NO_COLOR="1", KPTPROF_NO_PROGRESS="1",
                        PATH=self.bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        for k in ("KPTPROF_DB", "KPT_DB", "KPTPROF_BASELINES", "KPT_BASELINES", "KPTPROF_CHECK_ARGS"):
            self.env.pop(k, None)

    def scratch(self):
        d = tempfile.mkdtemp(prefix="kpt-examples.")
        for n in LINKS:
            if os.path.exists(os.path.join(self.a.src, n)):
                os.symlink(os.path.join(self.a.src, n), os.path.join(d, n))
        os.symlink(os.path.abspath(self.a.build), os.path.join(d, "build"))
        return d

    def fail(self, where, msg):
        self.bad += 1
        print("%s: %s" % (where, msg), file=sys.stderr)

    def block(self, path, b, edits):
        rel = os.path.relpath(path, self.a.src)
        where = "%s:%d" % (rel, b["line"])
        cmds = commands(b)
        if "not run" in b["marks"]:
            if cmds:
                self.counts["exempt"] += 1
                if self.a.list:
                    print("%s: not run (%s)" % (where, b["marks"]["not run"]))
            return
        if not cmds:
            return
        wd = self.scratch()
        try:
            if "setup" in b["marks"]:
                out, rc = run(b["marks"]["setup"], wd, self.env)
                if rc != 0:
                    self.fail(where, "setup '%s' exit %d:\n%s" % (b["marks"]["setup"], rc, out))
                    return
            cols = int(b["marks"]["columns"]) if "columns" in b["marks"] else None
            prev = 0
            for n, (cmd, want, s, e) in enumerate(cmds):
                kcmds = kptprof_words(cmd)
                gpu = "parse only" in b["marks"] or any(needs_gpu(k) for k in kcmds)
                if n == 0 and "output of" in b["marks"] and not gpu and want is not None:
                    # a command that cannot run here as written (it builds,
                    # installs): the substitute prints all its output
                    cmd = b["marks"]["output of"]
                elif gpu:
                    for k in kcmds:
                        out, rc = run(" ".join(shlex.quote(w) for w in k), wd,
                                      dict(self.env, KPTPROF_CHECK_ARGS="1"))
                        if rc != 0:
                            self.fail(where, "'%s' does not parse (exit %d):\n%s" % (" ".join(k), rc, out))
                    self.counts["parse"] += 1
                    if self.a.list:
                        print("%s: parse only: %s" % (where, cmd))
                    if n == 0 and "output of" in b["marks"] and want is not None and "..." in want:
                        # the lines before the first "..." are the GPU command's
                        # own (progress); the substitute makes the rest
                        cmd = b["marks"]["output of"]
                        want = want[want.index("..."):]
                    else:
                        continue
                script = "(exit %d); %s" % (prev, cmd)
                out, rc = run(script, wd, self.env, cols)
                prev = rc
                got = out.split("\n")
                if got and got[-1] == "":
                    got.pop()
                if want is None:
                    self.counts["run"] += 1
                    if self.a.list:
                        print("%s: run: %s" % (where, cmd))
                    if rc not in (0, 1):
                        self.fail(where, "'%s' exit %d:\n%s" % (cmd, rc, out))
                    continue
                self.counts["exact"] += 1
                if self.a.list:
                    print("%s: exact: %s" % (where, cmd))
                wn, gn = want, got
                if b["marks"].get("varies") == "dates":
                    wn = [DATE.sub("<date>", w) for w in want]
                    gn = [DATE.sub("<date>", g) for g in got]
                if not lines_match(wn, gn):
                    if self.a.update and not any(w == "..." or " ... " in w for w in want):
                        edits.append((b["body_start"] + s, b["body_start"] + e, got))
                        print("%s: updated '%s'" % (where, cmd), file=sys.stderr)
                        continue
                    if self.a.update:
                        redo = recut(want, got)
                        if redo is not None:
                            edits.append((b["body_start"] + s, b["body_start"] + e, redo))
                            print("%s: updated '%s' (cuts kept)" % (where, cmd), file=sys.stderr)
                            continue
                        self.manual.append("%s: '%s' (has '...': redo by hand)" % (where, cmd))
                    self.fail(where, "'%s' (exit %d) prints:\n%s\nbut the doc shows:\n%s" %
                              (cmd, rc, "\n".join(got), "\n".join(want)))
        finally:
            shutil.rmtree(wd, ignore_errors=True)

    def file(self, path):
        edits = []
        for b in parse_file(path):
            self.block(path, b, edits)
        if edits:
            lines = open(path, encoding="utf-8").read().split("\n")
            for s, e, got in sorted(edits, reverse=True):
                lines[s:e] = got
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kptprof", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--update", action="store_true")
    p.add_argument("--list", action="store_true")
    p.add_argument("files", nargs="*")
    a = p.parse_args()
    a.src = os.path.abspath(a.src)
    files = a.files or [os.path.join(a.src, "README.md")] + sorted(
        os.path.join(a.src, "docs", f) for f in os.listdir(os.path.join(a.src, "docs")) if f.endswith(".md"))
    c = Checker(a)
    try:
        for f in files:
            c.file(os.path.abspath(f))
    finally:
        shutil.rmtree(c.bindir, ignore_errors=True)
    for m in c.manual:
        print(m, file=sys.stderr)
    print("doc examples: %(exact)d checked exactly, %(run)d run, %(parse)d parse only, %(exempt)d blocks not run" %
          c.counts)
    if c.bad:
        print("%d example(s) differ from what kptprof does" % c.bad)
    return 1 if c.bad else 0


if __name__ == "__main__":
    sys.exit(main())
