#pragma once

// Stand-in for the registration.h that kernel-builder generates into
// torch-ext/ at build time (same macros), so this CMake build can compile the
// unmodified torch-ext sources without Nix.

#include <Python.h>

#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)

#define _STRINGIFY(A) #A
#define STRINGIFY(A) _STRINGIFY(A)

// TORCH_LIBRARY / TORCH_LIBRARY_IMPL paste their NAME argument, so a macro
// such as TORCH_EXTENSION_NAME must be expanded one level earlier.
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)

#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) \
  TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)

// An empty Python module: importing the .so is only a way to get it dlopen'ed
// so the static TORCH_LIBRARY initializers run. PyModule_Create maps to
// PyModule_Create2, part of the stable ABI, which keeps the module abi3.
// (kernel-builder's macro leaves the trailing PyModuleDef members implicit;
// they are spelled out here only to keep -Wextra quiet.)
#define REGISTER_EXTENSION(NAME)                                           \
  PyMODINIT_FUNC CONCAT(PyInit_, NAME)() {                                 \
    static struct PyModuleDef module = {                                   \
        PyModuleDef_HEAD_INIT, STRINGIFY(NAME), nullptr, 0, nullptr,       \
        nullptr,               nullptr,         nullptr, nullptr};         \
    return PyModule_Create(&module);                                       \
  }
