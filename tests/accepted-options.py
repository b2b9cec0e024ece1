#!/usr/bin/env python3
"""accepted-options.py CMD.c: the options a tool accepts, one a line with its dashes,
read from its getopt tables: long options ({"name", ..._argument}), short ones (the
letters of getopt_long's option string; SS_KOPTS_SHORT adds -b, -X, -F, the Kafka
options every Kafka tool takes), and options matched by hand (strcmp(arg, "--json"))."""
import re
import sys

src = open(sys.argv[1]).read()
opts = set('--' + n for n in re.findall(r'\{"([a-z][a-z-]*)", (?:no|required|optional)_argument', src))
opts |= set(re.findall(r'strcmp\([^,()]+, "(--[a-z][a-z-]*)"\)', src))
strings = re.findall(r'getopt_long\(argc, argv, "([^"]*)"()', src)
strings += re.findall(r'optstring\[\] = "([^"]*)"\s*(SS_KOPTS_SHORT)?', src)
for letters, kafka in strings:
    opts |= set('-' + c for c in letters.replace(':', '') + ('bXF' if kafka else ''))
print('\n'.join(sorted(opts)))
