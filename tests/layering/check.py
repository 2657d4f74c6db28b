#!/usr/bin/env python3
"""Layering checks of the source tree (docs/architecture.md), run by ctest
as layering/*:

  literals  no C string literal in core/ names an engine: "spark", "flink",
            "dbt" or "databricks" as a word (any case), or an engine's
            term ("SparkContext Id", "DBCEvent..."). Comments do not count; the CLI
            (cli/) is not checked.
  includes  core/ includes no CLI header (cli.h, anything in cli/) and no
            header of an engine (plugins/...: it asks the engine table), and a
            plugin's parser files (plugins/<x>/*.c|h) include only their
            own folder's headers, the SDK (<optipipe/...>), cJSON and libc:
            nothing of core/ and nothing of host/.
  layers    serve/ uses core only: it includes no CLI header and no engine
            header; cli/ includes no header of serve/'s internals (only
            serve/include); and neither includes a core header outside
            core/include, core's public API.

usage: check.py literals|includes|layers|selftest SOURCE_DIR [FILE...]
FILE...: check these files as if they were in core/ (layers: in serve/).
selftest: each check finds exactly what it must in the fixtures
tests/layering/selftest_core.c, selftest_serve.c and selftest_cli.c.
Exit 0 when clean, 1 with one line per problem (FILE:LINE: ...).
"""
import os
import re
import sys

ENGINES = re.compile(r"\b(spark|flink|dbt|databricks)\b", re.I)
# ...and an engine's own terms, spelt as its formats spell them
# ("SparkContext Id", "DBCEventLoggingListenerMetadata")
ENGINE_TERMS = re.compile(r"\b(Spark|Flink|DBC)[A-Z]")


def strip(text):
    """Yields (kind, value, line) for each comment-free token of interest:
    ('str', body, line) for string literals, ('include', name, line)."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            m = re.match(r'#\s*include\s*([<"])([^>"]+)[>"]', text[i:])
            if m:
                yield ("include", (m.group(1), m.group(2)), line)
                i += m.end()
            else:
                i += 1
        elif c in "\"'":
            j, body = i + 1, []
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    body.append(text[j:j + 2])
                    j += 2
                    continue
                body.append(text[j])
                j += 1
            if c == '"':
                yield ("str", "".join(body), line)
            i = j + 1
        else:
            i += 1


def files(root, sub, exts=(".c", ".h", ".in")):
    base = os.path.join(root, sub)
    if not os.path.isdir(base):
        return []
    return sorted(os.path.join(sub, f) for f in os.listdir(base)
                  if f.endswith(exts) and os.path.isfile(os.path.join(base, f)))


def core_files(root):
    return files(root, "core") + files(root, "core/include")


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def check_literals(root, extra):
    bad = []
    for rel in core_files(root) + extra:
        for kind, val, line in strip(read(root, rel)):
            if kind == "str" and (ENGINES.search(val) or ENGINE_TERMS.search(val)):
                bad.append('%s:%d: engine name in a string literal: "%s"'
                           % (rel, line, val[:80]))
    return bad


def check_includes(root, extra):
    bad = []
    cli_headers = {"cli.h"} | {os.path.basename(f) for d in ("cli", "serve", "serve/include")
                               for f in files(root, d, (".h",))}
    engine_headers = set()
    for dirpath, _, names in os.walk(os.path.join(root, "plugins")):
        engine_headers |= {n for n in names if n.endswith(".h")}
    for rel in core_files(root) + extra:
        for kind, val, line in strip(read(root, rel)):
            if kind != "include" or val[0] != '"':
                continue
            name = os.path.basename(val[1])
            if (name in cli_headers or val[1].startswith(("cli/", "serve/"))):
                bad.append("%s:%d: core includes the CLI header %s" % (rel, line, val[1]))
            elif name in engine_headers or "plugins/" in val[1]:
                bad.append("%s:%d: core includes the engine header %s (ask the "
                           "engine table, engine.h)" % (rel, line, val[1]))
    core_headers = {os.path.basename(f) for f in files(root, "core", (".h",))}
    plugins = os.path.join(root, "plugins")
    for p in sorted(os.listdir(plugins)) if os.path.isdir(plugins) else []:
        own = {os.path.basename(f) for f in files(root, os.path.join("plugins", p), (".h",))}
        for rel in files(root, os.path.join("plugins", p), (".c", ".h")):
            for kind, val, line in strip(read(root, rel)):
                if kind != "include":
                    continue
                quote, name = val
                if quote == '"':
                    # its own folder's headers, or a table generated from
                    # its own data (NAME_gen.h, by plugins/<x>/plugin.cmake)
                    ok = name in own or ("/" not in name and name.endswith("_gen.h"))
                else:  # the SDK, cJSON, libc: never a core or host header
                    ok = os.path.basename(name) not in core_headers and "host/" not in name
                if not ok:
                    bad.append("%s:%d: a parser file includes %s: only the SDK, "
                               "cJSON, libc and its own folder's headers"
                               % (rel, line, name))
    return bad


def basenames(root, sub):
    return {os.path.basename(f) for f in files(root, sub, (".h",))}


def check_layers(root, serve_extra=(), cli_extra=()):
    bad = []
    cli_h = basenames(root, "cli") | {"cli.h"}
    serve_internal = basenames(root, "serve")
    core_public = basenames(root, "core/include")
    core_internal = basenames(root, "core") - core_public
    engine_h = set()
    for _, _, names in os.walk(os.path.join(root, "plugins")):
        engine_h |= {n for n in names if n.endswith(".h")}
    layers = [("serve", files(root, "serve") + files(root, "serve/include")
               + list(serve_extra)),
              ("cli", files(root, "cli") + list(cli_extra))]
    for layer, rels in layers:
        for rel in rels:
            for kind, val, line in strip(read(root, rel)):
                if kind != "include" or val[0] != '"':
                    continue
                name = os.path.basename(val[1])
                if layer == "serve" and (name in cli_h or "cli/" in val[1]):
                    bad.append("%s:%d: serve includes the CLI header %s (serve "
                               "uses core only)" % (rel, line, val[1]))
                elif layer == "cli" and (name in serve_internal or
                                         ("serve/" in val[1] and "include/" not in val[1])):
                    bad.append("%s:%d: cli includes %s, of serve's internals "
                               "(serve/include is its API)" % (rel, line, val[1]))
                elif name in core_internal:
                    bad.append("%s:%d: %s includes core's internal %s (only "
                               "core/include is public)" % (rel, line, layer, val[1]))
                elif name in engine_h or "plugins/" in val[1]:
                    bad.append("%s:%d: %s includes the engine header %s"
                               % (rel, line, layer, val[1]))
    return bad


def selftest(root):
    fx = "tests/layering/selftest_core.c"
    lits = [int(b.split(":")[1]) for b in check_literals(root, [fx]) if b.startswith(fx)]
    incs = [int(b.split(":")[1]) for b in check_includes(root, [fx]) if b.startswith(fx)]
    if lits != [7, 8, 9, 10, 11, 12] or incs != [3, 4]:
        print("selftest: literals found on lines %s (want [7, 8, 9, 10, 11, 12]), "
              "includes on %s (want [3, 4])" % (lits, incs))
        return 1
    fs, fc = "tests/layering/selftest_serve.c", "tests/layering/selftest_cli.c"
    found = check_layers(root, [fs], [fc])
    srv = [int(b.split(":")[1]) for b in found if b.startswith(fs)]
    cli = [int(b.split(":")[1]) for b in found if b.startswith(fc)]
    if srv != [3, 4, 5, 6] or cli != [3, 4, 5]:
        print("selftest: layers found on lines %s of %s (want [3, 4, 5, 6]) and "
              "%s of %s (want [3, 4, 5])" % (srv, fs, cli, fc))
        return 1
    print("selftest: every check finds what it must")
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("literals", "includes", "layers", "selftest"):
        sys.stderr.write(__doc__)
        return 2
    root, extra = argv[2], argv[3:]
    if argv[1] == "selftest":
        return selftest(root)
    if argv[1] == "layers":
        bad = check_layers(root, extra)
    else:
        bad = (check_literals if argv[1] == "literals" else check_includes)(root, extra)
    for b in bad:
        print(b)
    if bad:
        print("%d layering problem%s (docs/architecture.md)"
              % (len(bad), "" if len(bad) == 1 else "s"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
