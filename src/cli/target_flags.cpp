#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/index/pin.hpp"

namespace kwheel::cli {

void add_target_flags(CLI::App* sub, TargetArgs& t, const std::string& python_help, const std::string& torch_help) {
  t.python_opt = sub->add_option("--python", t.python, python_help)->type_name("PYTHON");
  t.torch_opt = sub->add_option("--torch", t.torch, torch_help)->type_name("X.Y");
  auto* cuda = sub->add_option("--cuda", t.cuda, "The target's CUDA version X.Y (with --torch)")->type_name("X.Y");
  auto* cpu = sub->add_flag("--cpu", t.cpu, "The target has no GPU (with --torch)");
  t.python_opt->excludes(t.torch_opt)->excludes(cuda)->excludes(cpu);
  cuda->excludes(cpu)->needs(t.torch_opt);
  cpu->needs(t.torch_opt);
}

std::optional<InterpreterInfo> described_or_probed(const TargetArgs& t, const std::string& what_fits) {
  if (t.torch_opt->count()) {
    if (t.cuda.empty() && !t.cpu) throw Error(ErrorKind::usage, "--torch needs --cuda X.Y or --cpu to say which " + what_fits + " fit");
    return described_target(t.torch, t.cpu ? std::nullopt : std::optional<std::string>(t.cuda));
  }
  if (t.python_opt->count() || !t.python.empty()) return probe_interpreter(t.python);
  return std::nullopt;
}

}  // namespace kwheel::cli
