"""Imported by pyperfmap.pth at interpreter start when PYPERFMAP is set."""
import sys

try:
    import pyperfmap

    pyperfmap.enable()
except Exception as e:  # a profiler must never stop a program from starting
    sys.stderr.write("pyperfmap: warning: PYPERFMAP is set but pyperfmap could not be enabled: %s\n" % e)
