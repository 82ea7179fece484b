#pragma once

// Entry points registered as torch ops in torch_binding.cpp. Plain ATen
// headers instead of <torch/torch.h>: the full C++ frontend roughly doubles
// the compile time of every file that includes this.

#include <ATen/core/Tensor.h>

// Schema: img2gray(Tensor input, Tensor! output) -> ()
void img2gray_cpu(const at::Tensor& input, at::Tensor& output);

#if defined(CUDA_KERNEL)
void img2gray_cuda(const at::Tensor& input, at::Tensor& output);
#endif
