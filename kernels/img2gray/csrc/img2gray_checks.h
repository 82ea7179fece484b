#pragma once

// Argument checks shared by the CPU and CUDA implementations. The Python
// wrapper checks the same things with friendlier ValueErrors, but the op is
// also reachable directly through torch.ops, where a bad tensor must fail
// loudly instead of reading or writing out of bounds.

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

inline void img2gray_check_args(const at::Tensor& input,
                                const at::Tensor& output) {
  TORCH_CHECK(input.scalar_type() == at::kByte,
              "img2gray: input must be uint8, got ", input.scalar_type());
  TORCH_CHECK(input.dim() == 3 && input.size(2) == 3,
              "img2gray: input must be HWC with 3 channels, got shape ",
              input.sizes());
  TORCH_CHECK(input.is_contiguous(), "img2gray: input must be contiguous");
  TORCH_CHECK(output.scalar_type() == at::kByte,
              "img2gray: output must be uint8, got ", output.scalar_type());
  TORCH_CHECK(output.dim() == 2 && output.size(0) == input.size(0) &&
                  output.size(1) == input.size(1),
              "img2gray: output must have shape (", input.size(0), ", ",
              input.size(1), "), got ", output.sizes());
  TORCH_CHECK(output.is_contiguous(), "img2gray: output must be contiguous");
  TORCH_CHECK(input.device() == output.device(),
              "img2gray: input and output must be on the same device, got ",
              input.device(), " and ", output.device());
}
