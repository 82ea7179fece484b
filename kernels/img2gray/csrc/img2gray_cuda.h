#pragma once

// Boundary between the raw CUDA code (img2gray.cu, toolkit headers only) and
// the torch-facing wrapper (img2gray_cuda.cpp). Keeping torch out of the .cu
// lets it be compiled and checked with a bare nvcc, and keeps nvcc away from
// the torch headers, which are the slow and fragile part of a CUDA build.

#include <cuda_runtime.h>
#include <stdint.h>

// Converts a contiguous HWC uint8 RGB image at `input` into a contiguous HxW
// uint8 image at `output`, on `stream`. Both pointers are device pointers.
// Returns the launch status (cudaSuccess when nothing needed launching).
cudaError_t img2gray_cuda_launch(const uint8_t* input, uint8_t* output,
                                 int64_t height, int64_t width,
                                 cudaStream_t stream);
