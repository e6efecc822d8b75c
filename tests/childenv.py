"""The environment of a program recorded by a test: the build's pyperfmap
on PYTHONPATH (PYPERFMAP_PATH) and, in a sanitized build, the sanitizer
runtimes preloaded (PYMERGE_CHILD_PRELOAD, which meson sets there: the
extension is instrumented, the interpreter is not)."""
import os


def child_env():
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYPERFMAP_PATH", ""))
    if os.environ.get("PYMERGE_CHILD_PRELOAD"):
        env.update(LD_PRELOAD=os.environ["PYMERGE_CHILD_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
    return env
