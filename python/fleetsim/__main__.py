"""`fleetsim` on an environment's PATH (and `python3 -m fleetsim`): runs the program installed
inside the package (fleetsim/bin/fleetsim) with the same arguments (fleetsim --help)."""
import os
import sys


def program():
    """The path of the installed `fleetsim` program."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "fleetsim")


def main():
    path = program()
    if not os.access(path, os.X_OK):
        sys.exit(f"fleetsim: the program is not installed beside the package ({path}); "
                 "install the package with pip (docs/python.md)")
    os.execv(path, ["fleetsim"] + sys.argv[1:])  # it finds itself by /proc/self/exe


if __name__ == "__main__":
    main()
