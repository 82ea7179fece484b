#include "torch_binding.h"

#include <torch/library.h>

#include "registration.h"

// The schema is defined exactly once; each backend only adds an
// implementation for its dispatch key. TORCH_EXTENSION_NAME is the unique
// per-build namespace (_img2gray_<hash>), so several builds of this kernel can
// live in one process without their registrations colliding.
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("img2gray(Tensor input, Tensor! output) -> ()");
}

TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops) {
  ops.impl("img2gray", &img2gray_cpu);
}

// CUDA_KERNEL is the define kernel-builder (and our CMakeLists.txt) sets for
// CUDA variants; CPU variants have no CUDA code to register.
#if defined(CUDA_KERNEL)
TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, ops) {
  ops.impl("img2gray", &img2gray_cuda);
}
#endif

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
