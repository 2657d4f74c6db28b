#!/usr/bin/env python3
"""validate.py - a small JSON Schema validator (Python standard library
only) covering the keywords the SARIF 2.1.0 schema uses: type, enum, const,
properties, required, additionalProperties, items, minItems, maxItems,
uniqueItems, minimum, maximum, pattern, format (uri, uri-reference,
date-time), $ref into definitions, allOf, anyOf, oneOf, not.

Usage: validate.py SCHEMA.json DOCUMENT.json
Prints every violation with its JSON path and exits 1 when there is one.
Unknown keywords fail loudly, so a schema using more than this covers is
never silently accepted.
"""
import json
import re
import sys

IGNORED = {"$schema", "id", "$id", "title", "description", "default",
           "definitions", "deprecated", "examples", "$comment"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
URI_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def format_ok(fmt, value):
    if fmt == "uri":
        return bool(SCHEME.match(value)) and bool(URI_CHARS.match(value))
    if fmt == "uri-reference":
        return bool(URI_CHARS.match(value))
    if fmt == "date-time":
        return bool(DATE_TIME.match(value))
    raise ValueError("unsupported format %r" % fmt)


class Validator:
    def __init__(self, root):
        self.root = root
        self.errors = []

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError("only local $ref supported: %r" % ref)
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def check(self, schema, value, path):
        """Appends violations to self.errors; returns True when valid."""
        before = len(self.errors)
        if schema is True or schema == {}:
            return True
        if schema is False:
            self.errors.append("%s: not allowed" % path)
            return False
        for key, arg in schema.items():
            if key in IGNORED:
                continue
            handler = getattr(self, "kw_" + key.lstrip("$"), None)
            if handler is None:
                raise ValueError("unsupported keyword %r at %s" % (key, path))
            handler(arg, value, path, schema)
        return len(self.errors) == before

    def quiet(self, schema, value, path):
        saved = self.errors
        self.errors = []
        ok = self.check(schema, value, path)
        self.errors = saved
        return ok

    def kw_ref(self, ref, value, path, _):
        self.check(self.resolve(ref), value, path)

    def kw_type(self, types, value, path, _):
        types = types if isinstance(types, list) else [types]
        if not any(TYPES[t](value) for t in types):
            self.errors.append("%s: expected %s, got %r" % (path, "/".join(types), value))

    def kw_enum(self, allowed, value, path, _):
        if value not in allowed:
            self.errors.append("%s: %r not one of %r" % (path, value, allowed))

    def kw_const(self, const, value, path, _):
        if value != const:
            self.errors.append("%s: %r is not %r" % (path, value, const))

    def kw_properties(self, props, value, path, _):
        if isinstance(value, dict):
            for name, sub in props.items():
                if name in value:
                    self.check(sub, value[name], "%s.%s" % (path, name))

    def kw_required(self, names, value, path, _):
        if isinstance(value, dict):
            for name in names:
                if name not in value:
                    self.errors.append("%s: missing required %r" % (path, name))

    def kw_additionalProperties(self, extra, value, path, schema):
        if not isinstance(value, dict):
            return
        known = schema.get("properties", {})
        for name, item in value.items():
            if name in known:
                continue
            if extra is False:
                self.errors.append("%s: unexpected property %r" % (path, name))
            elif isinstance(extra, dict):
                self.check(extra, item, "%s.%s" % (path, name))

    def kw_items(self, sub, value, path, _):
        if isinstance(value, list):
            for i, item in enumerate(value):
                self.check(sub, item, "%s[%d]" % (path, i))

    def kw_minItems(self, n, value, path, _):
        if isinstance(value, list) and len(value) < n:
            self.errors.append("%s: fewer than %d items" % (path, n))

    def kw_maxItems(self, n, value, path, _):
        if isinstance(value, list) and len(value) > n:
            self.errors.append("%s: more than %d items" % (path, n))

    def kw_uniqueItems(self, unique, value, path, _):
        if unique and isinstance(value, list):
            seen = [json.dumps(v, sort_keys=True) for v in value]
            if len(seen) != len(set(seen)):
                self.errors.append("%s: items are not unique" % path)

    def kw_minimum(self, n, value, path, _):
        if TYPES["number"](value) and value < n:
            self.errors.append("%s: %r < minimum %r" % (path, value, n))

    def kw_maximum(self, n, value, path, _):
        if TYPES["number"](value) and value > n:
            self.errors.append("%s: %r > maximum %r" % (path, value, n))

    def kw_pattern(self, pattern, value, path, _):
        if isinstance(value, str) and not re.search(pattern, value):
            self.errors.append("%s: %r does not match %r" % (path, value, pattern))

    def kw_format(self, fmt, value, path, _):
        if isinstance(value, str) and not format_ok(fmt, value):
            self.errors.append("%s: %r is not a valid %s" % (path, value, fmt))

    def kw_allOf(self, subs, value, path, _):
        for sub in subs:
            self.check(sub, value, path)

    def kw_anyOf(self, subs, value, path, _):
        if not any(self.quiet(sub, value, path) for sub in subs):
            self.errors.append("%s: matches none of anyOf" % path)

    def kw_oneOf(self, subs, value, path, _):
        n = sum(1 for sub in subs if self.quiet(sub, value, path))
        if n != 1:
            self.errors.append("%s: matches %d of oneOf (needs exactly 1)" % (path, n))

    def kw_not(self, sub, value, path, _):
        if self.quiet(sub, value, path):
            self.errors.append("%s: matches a forbidden schema" % path)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(argv[2], encoding="utf-8") as f:
        doc = json.load(f)
    v = Validator(schema)
    v.check(schema, doc, "$")
    for e in v.errors:
        print(e)
    if v.errors:
        print("%s: %d schema violation(s)" % (argv[2], len(v.errors)))
        return 1
    print("%s: valid against %s" % (argv[2], argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
