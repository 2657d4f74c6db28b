#!/usr/bin/env python3
"""Every `optipipe ...` command line in a fenced code block of docs/*.md
(docs/testing.md "Docs examples"; subfolders too) is run, in the order of its page, in a
fresh folder per page, with the paths the docs use mapped to fixtures
(PLACES). A run fails on an exit status the example cannot mean (EXPECT)
or "unknown option" on stderr. Not run, and listed with the reason:
synopses (`[options]`, `A|B`, `FILE`), whose options are checked against
the command's table (--dump-options=json) instead, and examples that need
a server elsewhere (a URL that is not loopback). `optipipe serve`
examples run against loopback: port 0, a token file of the test's, until
the "listening on" line, then SIGTERM, and exit 0 is expected. `review`
gets an approval for each finding on its prompt; `history prune` works on
a copy of the store; the replay markers of docs/writing-rules.md are
followed (`write FILE` writes the block, `run, exit N` expects N). A
block after `<!-- docs-test: skip REASON -->` is not run, with that
reason.

Usage: docs_commands.py OPTIPIPE SOURCE_DIR [REAL_DIR]
"""
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
REAL = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else ""
BUILD = os.path.dirname(BIN)
# the pages: docs/ of the source, or another folder (the wrapper's self-test)
DOCS = os.environ.get("OP_DOCS_DIR") or SRC + "/docs"
# a guard against a hang only: nothing waits for it to pass
HANG_S = 300

# The paths the examples name -> what they run on (relative to the page's
# folder, which links fixtures/, docs/, sdk/ and build/ of the repo).
# "@STORE" is a run store holding the nightly job, "@REAL" the real
# artifacts, "@DATA" a server folder, "@TOKENS" a token file.
PLACES = {
    "target/": "fixtures/demo/dbt/",
    "target/run_results.json": "fixtures/demo/dbt/run_results-2024-05-07.json",
    "target/manifest.json": "fixtures/demo/dbt/manifest.json",
    "target/sources.json": "fixtures/dbt/freshness/sources.json",
    "eventlogs/": "fixtures/spark-nightly/steady/",
    "nightly/": "fixtures/dbt/regression/",
    "artifacts/": "fixtures/demo/",
    "INPUT...": "fixtures/demo/",
    "logs/": "fixtures/spark-nightly/slower/",
    "logs/night-07.log.gz": "fixtures/spark-nightly/slower/night-07.log.gz",
    "logs/night-08.log.gz": "fixtures/spark-nightly/slower/night-08.log.gz",
    "logs/tonight.log.gz": "fixtures/spark-nightly/slower/night-08.log.gz",
    "/var/log/spark-events/application_1700000000000_0042.zstd":
        "fixtures/demo/spark-application_1700000000000_0042.zstd",
    "/var/log/spark-events/": "fixtures/spark-nightly/steady/",
    "eventlog_v2_local-1766844910796/": "@REAL/spark/eventlog_v2_local-1766844910796/",
    "runs.db": "@STORE",
    "/var/lib/optipipe/history.db": "@STORE",
    "/var/lib/optipipe": "@DATA",
    "/srv/op": "@DATA",
    "/etc/optipipe/tokens": "@TOKENS",
    "/etc/optipipe/users": "users",  # `serve user add` writes it, serve reads it
    "job.json": "fixtures/flink/healthy.json",  # what the fetch before it wrote
}

# Exit statuses an example may mean besides 0 (docs/cli.md#exit-codes):
# --fail-on asks for 1 when a finding reaches it.
def expected(tokens):
    return {0, 1} if "--fail-on" in tokens else {0}

LOOPBACK = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\])(:|/|$)")
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip\s+(.*?)\s*-->")


REPLAY = re.compile(r"<!--\s*replay:\s*(.*?)\s*-->")


def examples(path):
    """The page's steps in order: ("run", line, command, skip reason or
    None, exit statuses expected or None) for each command line of a code
    block, ("write", line, file, text) for a block a replay marker
    (docs/writing-rules.md's) says to write. A block marked as a replay's
    output is no command."""
    out, in_block, mark, pending = [], False, None, None
    cont, start, body = "", 0, []
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_block = not in_block
            if in_block:
                mark, pending, body = pending, None, []
            elif mark and mark.startswith("write "):
                out.append(("write", no, mark[6:].strip(), "".join(body)))
            continue
        if not in_block:
            m = SKIP_MARK.search(line) or REPLAY.search(line)
            if m:
                pending = ("skip " + m.group(1)) if m.re is SKIP_MARK else m.group(1)
            elif stripped:
                pending = None
            continue
        body.append(line)
        if mark and (mark.startswith("write ") or mark == "output"):
            continue
        text = cont + line.rstrip("\n")
        if not cont:
            start = no
        if text.endswith("\\"):
            cont = text[:-1] + " "
            continue
        cont = ""
        cmd = re.sub(r"^\s*\$\s+", "", text).strip()
        if not re.match(r"optipipe(\s|$)", cmd):
            continue
        skip = mark[5:] if mark and mark.startswith("skip ") else None
        m = re.match(r"run, exit (\d+)$", mark or "")
        out.append(("run", start, cmd, skip, {int(m.group(1))} if m else None))
    return out


def commands_table():
    d = json.loads(subprocess.run([BIN, "--dump-options=json"], check=True,
                                  capture_output=True, text=True).stdout)
    table = {}
    for c in d["commands"]:
        names = set()
        for g in c["groups"]:
            for o in g["options"]:
                names.add(o["name"])
                if o.get("alias"):
                    names.add(o["alias"])
        table[c["name"]] = names | {"--help", "-h"}
    return table


def command_of(tokens, table):
    """The command a line runs ('history runs'), and where its words end."""
    for n in (2, 1):
        name = " ".join(tokens[1:1 + n])
        if name in table:
            return name, 1 + n
    return None, 1


def is_synopsis(tokens):
    """A usage line: `[options]`, `A|B`, or a placeholder (FILE, URL, A B,
    INPUT...) that PLACES does not map."""
    for t in tokens[1:]:
        if t in PLACES:
            continue
        if re.search(r"[\[\]|]", t) or re.match(r"^[A-Z][A-Z_/]*(\.\.\.)?$", t):
            return True
    return False


def place(tok, env):
    for key, val in PLACES.items():
        if tok == key or (key.endswith("/") and tok.startswith(key) and tok[len(key):] and
                          tok not in PLACES):
            rest = tok[len(key):] if tok != key else ""
            val = val.replace("@STORE", env["store"]).replace("@REAL", REAL) \
                     .replace("@DATA", env["data"]).replace("@TOKENS", env["tokens"])
            return val + rest
    return tok


class Page:
    def __init__(self, path, env):
        self.path, self.env = path, env
        self.dir = tempfile.mkdtemp(prefix="docs-", dir=env["tmp"])
        for name, target in (("fixtures", SRC + "/fixtures"), ("docs", SRC + "/docs"),
                             ("sdk", SRC + "/sdk"), ("build", BUILD)):
            os.symlink(target, os.path.join(self.dir, name))


def prepare(tmp):
    """The run store the history examples name, the server's files and a
    real fingerprint for the decision examples."""
    store = os.path.join(tmp, "runs.db")
    slow = sorted(glob.glob(SRC + "/fixtures/spark-nightly/slower/night-*.log.gz"))
    for log in slow:
        subprocess.run([BIN, "analyze", "-q", "--no-config", "--no-baseline",
                        "--history", store, log], capture_output=True, check=False)
    data = os.path.join(tmp, "serve-data")
    tokens = os.path.join(tmp, "tokens")
    with open(tokens, "w") as f:
        f.write("docs-test-token-0123456789abcdef\n")
    os.chmod(tokens, 0o600)
    rep = subprocess.run([BIN, "analyze", "-q", "--no-config", "--no-baseline",
                          "--format", "json", SRC + "/fixtures/demo/dbt"],
                         capture_output=True, text=True)
    fps = [f["fingerprint"] for f in json.loads(rep.stdout)["findings"]]
    return {"tmp": tmp, "store": store, "data": data, "tokens": tokens,
            "fingerprint": fps[0] if fps else "0000000000000000"}


def argv_of(tokens, env):
    """The argv to run, and the file a '>' sends standard output to."""
    argv, out, i = [BIN], None, 1
    while i < len(tokens):
        t = tokens[i]
        if t == ">" and i + 1 < len(tokens):
            out = tokens[i + 1]
            i += 2
            continue
        if i > 1 and tokens[i - 1] == "--fingerprint":
            t = env["fingerprint"][:len(t)] if len(t) >= 8 else env["fingerprint"]
        argv.append(place(t, env))
        i += 1
    return argv, out


def run_serve(argv, page):
    """serve on loopback until it listens, then SIGTERM: its exit status."""
    a, i = [], 0
    while i < len(argv):
        if argv[i] == "--listen":
            i += 2
            continue
        a.append(argv[i])
        i += 1
    a += ["--listen", "127.0.0.1:0"]
    p = subprocess.Popen(a, cwd=page.dir, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    err = []
    guard = threading.Timer(HANG_S, p.kill)  # a hang only
    guard.start()
    for line in p.stderr:  # the ready line is an event, not a delay
        err.append(line)
        if "listening on http://127.0.0.1:" in line:
            p.send_signal(signal.SIGTERM)
            break
    rest = p.communicate()[1]
    guard.cancel()
    return p.returncode, "".join(err) + (rest or "")


def check_synopsis(cmd, name, table):
    """The options a synopsis names that its command does not take."""
    return sorted(t for t in re.findall(r"(?<![\w-])--?[a-z][\w-]*", cmd)
                  if name and t not in table[name] and t != "--dump-options")


def run_step(cmd, skip, expect, page, env, table):
    """("ok  "|"FAIL"|"SKIP", what to say, whether it ran)."""
    try:
        tokens = shlex.split(cmd, comments=True)
    except ValueError as e:
        return "FAIL", "cannot split: %s" % e, False
    name, _ = command_of(tokens, table)
    urls = [t for t in tokens if re.match(r"https?://", t) and not LOOPBACK.match(t)]
    if skip:
        return "SKIP", skip, False
    if urls:
        return "SKIP", ("needs %s, a server elsewhere: e2e/fetch_* run fetch against a "
                        "loopback server" % urls[0]), False
    if is_synopsis(tokens):
        bad = check_synopsis(cmd, name, table)
        if bad:
            return "FAIL", "a synopsis naming options '%s' does not take: %s" % (
                name, ", ".join(bad)), False
        return "SKIP", "a synopsis, not an example (its options are checked)", False
    if not name and tokens[1:2] != ["--version"]:
        return "FAIL", "no such command", False
    if not REAL and any("@REAL" in PLACES.get(t, "") for t in tokens):
        return "SKIP", "needs ../shared/real, absent", False
    argv, out = argv_of(tokens, env)
    run_env = dict(os.environ)
    if name == "diff" or (name or "").startswith("history "):
        run_env["OPTIPIPE_HISTORY"] = env["store"]  # docs/history.md's export
    if name == "history prune":  # on a copy: later examples still find the runs
        copy = os.path.join(page.dir, "pruned.db")
        shutil.copy(env["store"], copy)
        argv = [copy if a == env["store"] else a for a in argv]
        run_env["OPTIPIPE_HISTORY"] = copy
    if name == "serve":
        rc, err = run_serve(argv, page)
    else:
        # review asks at a prompt: the person there approves each finding
        r = subprocess.run(argv, cwd=page.dir, env=run_env, capture_output=True,
                           input="a\n" * 1000 if name == "review" else "",
                           text=True, timeout=HANG_S)
        rc, err = r.returncode, r.stderr
        if out:
            with open(os.path.join(page.dir, out), "w") as f:
                f.write(r.stdout)
    if rc not in (expect or expected(tokens)) or "unknown option" in err:
        return "FAIL", "exit %d\n  %s" % (rc, err.strip().replace("\n", "\n  ")[:1200]), True
    return "ok  ", "" if rc == 0 else "exit %d, as the page says" % rc, True


def main():
    tmp = tempfile.mkdtemp(prefix="op-docs-")
    env = prepare(tmp)
    table = commands_table()
    ran = skipped = failed = 0
    os.environ.pop("OPTIPIPE_HISTORY", None)
    os.environ.pop("OPTIPIPE_HOME", None)
    try:
        for path in sorted(glob.glob(DOCS + "/**/*.md", recursive=True)):
            rel = os.path.relpath(path, os.path.dirname(DOCS))
            page = None
            for step in examples(path):
                if page is None:
                    page = Page(path, env)
                if step[0] == "write":
                    target = os.path.join(page.dir, step[2])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with open(target, "w", encoding="utf-8") as f:
                        f.write(step[3])
                    continue
                _, line, cmd, skip, expect = step
                where = "%s:%d: %s" % (rel, line, cmd)
                r = run_step(cmd, skip, expect, page, env, table)
                print(r[0] + " " + where + (r[1] and " (%s)" % r[1] or ""))
                ran += r[0] in ("ok  ", "FAIL") and r[2]
                skipped += r[0] == "SKIP"
                failed += r[0] == "FAIL"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d docs examples run, %d skipped with a reason, %d failed" % (ran, skipped, failed))
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
