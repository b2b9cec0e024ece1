"""objsyms.py: which lib/ module defines and which uses each symbol, from the objects
(nm), for tests/layers.py and scripts/calltrace.py."""
import glob, os, subprocess


def symbols(objdir):
    """(defs, uses) over objdir/FOLDER/FILE.o: defs maps a defined symbol to its module
    ("join/asof"), uses maps each module to the symbols it uses but does not define."""
    defs, uses = {}, {}
    for obj in sorted(glob.glob(os.path.join(objdir, '*', '*.o'))):
        name = os.path.relpath(obj, objdir)[:-2]
        uses[name] = set()
        for line in subprocess.run(['nm', obj], capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TDBRC':
                defs[f[2]] = name
            elif len(f) == 2 and f[0] == 'U':
                uses[name].add(f[1])
    return defs, uses
