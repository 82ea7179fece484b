#include "kwheel/factory/warm_up.hpp"

#include <exception>

#include "kwheel/base/digest.hpp"
#include "kwheel/evidence/abi3.hpp"
#include "kwheel/evidence/manylinux_policy.hpp"

namespace kwheel {

std::vector<WarmUp::Task> WarmUp::run_inits() {
  return {
      [] { PolicySet::builtin(); },
      [] { StableAbi::builtin(); },
      [] { TorchProvided::builtin(); },
      [] { Hasher{}.finish(); },
  };
}

WarmUp::WarmUp(std::vector<Task> tasks) {
  threads_.reserve(tasks.size());
  for (auto& task : tasks) {
    try {
      threads_.emplace_back([task = std::move(task)] {
        try {
          task();
        } catch (...) {
        }
      });
    } catch (const std::exception&) {
      return;  // no thread to spare: the rest are done on first use instead
    }
  }
}

}  // namespace kwheel
