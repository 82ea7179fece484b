# Compatibility module of the flat layout: loaders that import
# build/<variant>/img2gray/ (the nested layout, kernels <= 0.11) find this
# file, which loads the flat package one directory up and re-exports it.
# kwheel leaves it out of wheels: there the flat package is img2gray itself.
import importlib.util as _util
import sys as _sys
from pathlib import Path as _Path

_flat = _Path(__file__).resolve().parent.parent / "__init__.py"
_alias = "_flat_" + format(abs(hash(str(_flat))), "x")
_spec = _util.spec_from_file_location(_alias, _flat, submodule_search_locations=[str(_flat.parent)])
_module = _util.module_from_spec(_spec)
_sys.modules[_alias] = _module
_spec.loader.exec_module(_module)
globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
