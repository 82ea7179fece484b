# stands in for kernel-builder's compatibility module: re-exports ../__init__.py
from .. import *  # noqa
