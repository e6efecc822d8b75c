"""python -m pyperfmap [-m module | -c code | script.py] [args...]

Runs a program with pyperfmap enabled, exactly as ``python script.py``,
``python -m module`` or ``python -c code`` would run it: same sys.argv,
__main__, sys.path[0], exit status, and traceback of an uncaught exception.  PYPERFMAP=1 is put in
the environment so that Python subprocesses (where pyperfmap is installed)
are profiled too.
"""
import linecache
import os
import runpy
import sys
import types

import pyperfmap

USAGE = "usage: python -m pyperfmap [-m module | -c code | script.py] [args...]\n"


def _user_traceback(tb):
    """Drops the frames of this launcher and of runpy from a traceback."""
    ours = globals()
    while tb is not None and (tb.tb_frame.f_globals is ours
                              or tb.tb_frame.f_globals.get("__name__") == "runpy"):
        tb = tb.tb_next
    return tb


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or (argv[0] in ("-m", "-c") and len(argv) < 2):
        sys.stderr.write(USAGE)
        return 2
    if argv[0] in ("-m", "-c"):
        target, args = argv[1], argv[2:]
    else:
        target, args = argv[0], argv[1:]
        if not os.path.exists(target):
            sys.stderr.write("%s: can't open file %r: [Errno 2] No such file or directory\n"
                             % (sys.executable, target))
            return 2

    os.environ["PYPERFMAP"] = "1"
    pyperfmap.enable()
    if argv[0] == "-c":
        sys.argv = ["-c"] + args
        sys.path[0] = ""  # as python -c has it: the current folder, found anew each time
        code = types.ModuleType("__main__")
        code.__builtins__ = __builtins__
        sys.modules["__main__"] = code
        if sys.version_info >= (3, 13):  # its tracebacks quote -c code's lines
            linecache.cache["<string>"] = (len(target), None, target.splitlines(True), "<string>")
        run = lambda: exec(compile(target, "<string>", "exec"), code.__dict__)
    elif argv[0] == "-m":
        sys.argv = [target] + args  # runpy replaces argv[0] with the module's path
        sys.path[0] = os.getcwd()
        run = lambda: runpy._run_module_as_main(target, alter_argv=True)
    else:
        sys.argv = [target] + args
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        run = lambda: runpy.run_path(target, run_name="__main__")
    try:
        run()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        tb = _user_traceback(e.__traceback__)
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
