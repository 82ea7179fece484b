// Raw CUDA kernel and launcher. Needs only the CUDA toolkit (no torch), see
// img2gray_cuda.h for why.

#include "img2gray_common.h"
#include "img2gray_cuda.h"

namespace {

// x runs along the row so neighbouring threads of a warp touch neighbouring
// pixels (coalesced loads/stores); 32x8 = 256 threads per block.
constexpr unsigned kBlockX = 32;
constexpr unsigned kBlockY = 8;

__global__ void img2gray_kernel(const uint8_t* __restrict__ input,
                                uint8_t* __restrict__ output, int64_t height,
                                int64_t width) {
  const int64_t x = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t y = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  // The grid is rounded up to whole blocks, so edge blocks overhang the image.
  if (x >= width || y >= height) {
    return;
  }
  // 64-bit offsets: a 3-channel image over ~715M pixels overflows int32.
  const int64_t pixel = y * width + x;
  const uint8_t* rgb = input + pixel * 3;
  output[pixel] = img2gray_pixel(rgb[0], rgb[1], rgb[2]);
}

}  // namespace

cudaError_t img2gray_cuda_launch(const uint8_t* input, uint8_t* output,
                                 int64_t height, int64_t width,
                                 cudaStream_t stream) {
  if (height < 0 || width < 0) {
    return cudaErrorInvalidValue;
  }
  // A zero-sized grid is a launch error, but an empty image is a valid input.
  if (height == 0 || width == 0) {
    return cudaSuccess;
  }
  const int64_t grid_x = (width + kBlockX - 1) / kBlockX;
  const int64_t grid_y = (height + kBlockY - 1) / kBlockY;
  // One thread per pixel means the image must fit in one grid; gridDim.y is
  // capped at 65535 (about 524k rows), far beyond any real image.
  if (grid_x > 2147483647 || grid_y > 65535) {
    return cudaErrorInvalidConfiguration;
  }
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  img2gray_kernel<<<grid, block, 0, stream>>>(input, output, height, width);
  return cudaGetLastError();
}
