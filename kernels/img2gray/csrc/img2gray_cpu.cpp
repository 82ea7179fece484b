// CPU implementation. Uses the same img2gray_pixel() as the CUDA kernel, so
// both backends give bit-identical results.

#include <ATen/Parallel.h>

#include <algorithm>

#include "img2gray_checks.h"
#include "img2gray_common.h"
#include "torch_binding.h"

void img2gray_cpu(const at::Tensor& input, at::Tensor& output) {
  img2gray_check_args(input, output);
  TORCH_CHECK(input.device().is_cpu(), "img2gray_cpu: input must be on CPU");

  const int64_t height = input.size(0);
  const int64_t width = input.size(1);
  const uint8_t* in = input.data_ptr<uint8_t>();
  uint8_t* out = output.data_ptr<uint8_t>();

  // Rows are independent; the grain keeps small images single-threaded,
  // where waking torch's thread pool costs more than the work itself.
  const int64_t rows_per_task =
      std::max<int64_t>(1, 32768 / std::max<int64_t>(width, 1));
  at::parallel_for(0, height, rows_per_task, [&](int64_t begin, int64_t end) {
    for (int64_t y = begin; y < end; ++y) {
      const uint8_t* row_in = in + y * width * 3;
      uint8_t* row_out = out + y * width;
      for (int64_t x = 0; x < width; ++x) {
        row_out[x] =
            img2gray_pixel(row_in[3 * x], row_in[3 * x + 1], row_in[3 * x + 2]);
      }
    }
  });
}
