"""The `rvfit` command of a pip-installed rvfit: it replaces itself with
the package's rvfit program (<package>/bin/rvfit, which finds the
package's librvfit through its run path and the plugins next to it), so
arguments, exit status, signals and mpirun behave as with the program
itself."""
import os
import sys

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin",
                       "rvfit")


def main():
    if not os.access(PROGRAM, os.X_OK):
        sys.exit("rvfit: this rvfit package has no rvfit program (%s is "
                 "missing); install it with its C side: pip install ./python "
                 "in rvfit's source tree" % PROGRAM)
    try:
        os.execv(PROGRAM, ["rvfit"] + sys.argv[1:])
    except OSError as e:
        sys.exit("rvfit: cannot run %s: %s" % (PROGRAM, e.strerror))
