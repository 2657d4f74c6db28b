#!/usr/bin/env python3
"""Fails (exit 1, naming the first offset) when a file holds a terminal
control character other than newline: C0 (ESC, BEL, ...), DEL, or a C1
control (U+0080..U+009F, e.g. the one-character CSI U+009B) or bytes of
broken UTF-8 - what a hostile server could use to drive a terminal."""
import sys

data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8", "replace")
for i, ch in enumerate(text):
    c = ord(ch)
    if (c < 0x20 and ch not in "\n\r") or 0x7f <= c <= 0x9f or c == 0xfffd:
        print("control character U+%04X at character %d" % (c, i))
        sys.exit(1)
