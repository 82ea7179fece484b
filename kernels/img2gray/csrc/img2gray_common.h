#pragma once

// The per-pixel arithmetic, shared verbatim by the CPU and CUDA kernels so
// the two backends cannot drift apart. Deliberately free of torch and CUDA
// headers: the .cu file must compile with nothing but the CUDA toolkit.

#include <stdint.h>

#if defined(__CUDACC__)
#define IMG2GRAY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define IMG2GRAY_HOST_DEVICE inline
#endif

// gray = 0.21 R + 0.72 G + 0.07 B, rounded to nearest with ties rounding up.
//
// Computed in integers (weights scaled by 100, +50 before the division)
// rather than float because float makes "identical on CPU and GPU" depend on
// the compiler: nvcc contracts a*b+c into FMA by default, x86-64 g++ does not,
// and 0.21f is not exactly 0.21, so pixels sitting on a .5 boundary could
// round differently per backend. The integer form is the exact real-valued
// formula rounded once, so every backend produces the same bits.
// Range: max 100*255 + 50 = 25550 fits easily in 32 bits; result <= 255.
IMG2GRAY_HOST_DEVICE uint8_t img2gray_pixel(uint8_t r, uint8_t g, uint8_t b) {
#if defined(IMG2GRAY_WRONG)
  // Deliberately broken build (CMake -DIMG2GRAY_WRONG=ON): R and B weights
  // swapped, so validation tests can prove they notice a wrong kernel.
  const uint32_t acc = 7u * r + 72u * g + 21u * b;
#else
  const uint32_t acc = 21u * r + 72u * g + 7u * b;
#endif
  return static_cast<uint8_t>((acc + 50u) / 100u);
}
