// Torch-facing CUDA wrapper: validates tensors, picks device and stream, and
// hands raw pointers to the torch-free launcher in img2gray.cu. Compiled by
// the host C++ compiler, so nvcc never has to parse the torch headers.

#include "img2gray_cuda.h"

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "img2gray_checks.h"
#include "torch_binding.h"

void img2gray_cuda(const at::Tensor& input, at::Tensor& output) {
  img2gray_check_args(input, output);
  TORCH_CHECK(input.is_cuda(), "img2gray_cuda: input must be a CUDA tensor");

  // The launch goes to the current device; without the guard a tensor on
  // cuda:1 would be processed by a kernel launched on cuda:0.
  const c10::cuda::CUDAGuard device_guard(input.device());
  // torch's current stream, so the op is ordered with surrounding torch work
  // (and with CUDA graphs / side streams the caller set up).
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();

  const cudaError_t err = img2gray_cuda_launch(
      input.data_ptr<uint8_t>(), output.data_ptr<uint8_t>(), input.size(0),
      input.size(1), stream);
  TORCH_CHECK(err == cudaSuccess, "img2gray: CUDA launch failed for shape ",
              input.sizes(), ": ", cudaGetErrorString(err));
}
