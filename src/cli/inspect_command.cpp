#include <algorithm>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/validate/inspect.hpp"

namespace kwheel::cli {

namespace {

struct InspectArgs {
  std::string path;
  std::vector<std::string> allow_external;
  SignatureArgs signatures;
};

nlohmann::json variant_json(const Inspection& in) {
  if (!in.variant_label) return nullptr;
  return {{"label", *in.variant_label}, {"properties", in.variant_properties}, {"problem", in.variant_problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(in.variant_problem)}};
}

// "variant: cu130_sm90: nvidia :: cuda_version_lower_bound :: 13.0, ..."
void print_variant(const Inspection& in) {
  if (!in.variant_label) return;
  if (!in.variant_problem.empty()) {
    std::cout << "problem: variant " << *in.variant_label << ": " << in.variant_problem << "\n";
    return;
  }
  std::vector<std::string> props;
  for (const auto& [ns, features] : in.variant_properties)
    for (const auto& [feature, values] : features) props.push_back(ns + " :: " + feature + " :: " + join(values, " | "));
  std::cout << "variant: " << *in.variant_label << (props.empty() ? " (the null variant: no properties, chosen when nothing else fits)" : ": " + join(props, ", "))
            << "\n";
}

nlohmann::json signature_json(const Inspection& in) {
  if (!in.signature_error.empty()) return {{"ok", false}, {"error", in.signature_error}};
  return in.signature ? in.signature->to_json() : nlohmann::json(nullptr);
}

void print_signature(const Inspection& in) {
  if (!in.signature_error.empty()) std::cout << "problem: signature: " << in.signature_error << "\n";
  else if (in.signature) std::cout << "signature: " << in.signature->describe() << "\n";
}

void print_libs(const char* title, const std::vector<NeededLibrary>& libs) {
  if (libs.empty()) return;
  std::cout << title << ":\n";
  for (const auto& l : libs) std::cout << "  " << l.soname << (l.reason.empty() ? "" : "  (" + l.reason + ")") << "\n";
}

void print_gpu(const GpuEvidence& gpu) {
  for (const auto& o : gpu.objects) {
    std::string code = describe_entries(o.cuda, true);
    for (const auto& g : o.gfx) code.append(code.empty() ? "" : ", ").append(g);
    std::cout << "gpu code: " << o.file << ": " << code << "\n";
  }
  if (!gpu.audit.undeclared.empty()) std::cout << "gpu code not in backend.archs: " << join(gpu.audit.undeclared, ", ") << "\n";
  for (const auto& m : gpu.audit.missing) std::cout << "problem: backend.archs declares " << m << " but no object carries code for it\n";
  for (const auto& f : gpu.outside_declared)
    std::cout << "problem: " << f << " has code for none of backend.archs (" << join(gpu.declared, ", ") << ")\n";
}

// A macOS wheel or object: each Mach-O's slice and minimum, and the tag
// they add up to.
void render_macos(const Inspection& in, const std::string& path, Output& out) {
  const MacosReport& m = *in.macos;
  if (out.json) {
    nlohmann::json doc{{"file", path}, {"kind", in.kind}, {"members", in.files}, {"current_platform_tags", in.current_tags},
                       {"ok", in.ok()}, {"manylinux", nullptr}, {"macos", to_json(m)}, {"problems", in.macos_problems}};
    doc["kernel"] = in.kernel ? to_json(*in.kernel) : nlohmann::json(nullptr);
    doc["hub_revision"] = in.revision ? nlohmann::json{{"repo_id", in.revision->first}, {"commit", in.revision->second}} : nlohmann::json(nullptr);
    doc["signature"] = signature_json(in);
    out.emit_json(doc);
    return;
  }
  std::cout << path << " (" << in.kind << ", Mach-O)\n";
  if (in.revision) std::cout << "built from: " << in.revision->first << " at commit " << in.revision->second << "\n";
  print_signature(in);
  for (const auto& o : m.objects)
    std::cout << "  " << o.file << ": " << o.arch << ", "
              << (o.min_macos ? "needs macOS " + o.min_macos->str() + " (" + o.source + ")" : std::string("no minimum macOS recorded")) << "\n";
  std::cout << "platform: " << m.platform_tag << "  because " << m.reason << "\n";
  if (!in.current_tags.empty()) std::cout << "tagged: " << in.current_tags << "\n";
  for (const auto& p : in.macos_problems) std::cout << "problem: " << p << "\n";
}

// What makes in.ok() false, one line each: all -q shows.
std::vector<std::string> problems(const Inspection& in) {
  std::vector<std::string> out = in.report.problems;
  out.insert(out.end(), in.macos_problems.begin(), in.macos_problems.end());
  for (const auto& m : in.gpu.audit.missing) out.push_back("backend.archs declares " + m + " but no object carries code for it");
  for (const auto& f : in.gpu.outside_declared) out.push_back(f + " has code for none of backend.archs (" + join(in.gpu.declared, ", ") + ")");
  if (!in.signature_error.empty()) out.push_back("signature: " + in.signature_error);
  if (!in.variant_problem.empty()) out.push_back("variant " + in.variant_label.value_or("") + ": " + in.variant_problem);
  return out;
}

}  // namespace

void register_inspect(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<InspectArgs>();
  auto* sub = app.add_subcommand("inspect", "Show the platform evidence of a wheel or .so: symbol versions, external libraries, manylinux policy, abi3");
  sub->add_option("file", args->path, "A .whl or a shared object")->type_name("FILE")->required();
  sub->add_option("--allow-external", args->allow_external, "A library (soname) the kernel may need beyond the policy (repeatable)")->type_name("SONAME");
  add_signature_flags(sub, args->signatures, false);
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel inspect dist/img2gray-1.7+torch2.11.cu130-cp39-abi3-manylinux_2_28_x86_64.whl",
                     "kwheel inspect build/torch211-cxx11-cu130-x86_64-linux/_img2gray_cuda_abc1234.abi3.so",
                     "kwheel inspect dist/img2gray-*.whl --allow-external libcuda.so.1 --json"});
  sub->callback([args, &out, &exit_code] {
    InspectOptions o;
    o.allowed_external.insert(args->allow_external.begin(), args->allow_external.end());
    o.signatures = signature_options(args->signatures);
    Inspection in = inspect_path(args->path, o);
    const auto& r = in.report;
    if (out.quiet && !out.json) {  // the exit status is the answer; a problem still says why
      for (const auto& p : problems(in)) out.error(args->path + ": " + p);
      exit_code = in.ok() ? 0 : static_cast<int>(ErrorKind::policy);
      return;
    }
    if (in.macos) {
      render_macos(in, args->path, out);
      exit_code = in.ok() ? 0 : static_cast<int>(ErrorKind::policy);
      return;
    }
    if (out.json) {
      nlohmann::json j = r;
      nlohmann::json doc{{"file", args->path}, {"kind", in.kind}, {"members", in.files}, {"current_platform_tags", in.current_tags},
                         {"ok", in.ok()}, {"manylinux", j}};
      doc["gpu"] = to_json(in.gpu);
      doc["kernel"] = in.kernel ? to_json(*in.kernel) : nlohmann::json(nullptr);
      doc["hub_revision"] = in.revision ? nlohmann::json{{"repo_id", in.revision->first}, {"commit", in.revision->second}} : nlohmann::json(nullptr);
      doc["signature"] = signature_json(in);
      doc["variant"] = variant_json(in);
      out.emit_json(doc);
    } else {
      std::cout << args->path << " (" << in.kind << ", " << r.arch << ")\n";
      if (in.revision) std::cout << "built from: " << in.revision->first << " at commit " << in.revision->second << "\n";
      print_signature(in);
      print_variant(in);
      if (in.kernel) {
        std::cout << "kernel: " << in.kernel->name.value_or("?") << (in.kernel->version ? " version " + std::to_string(*in.kernel->version) : "")
                  << ", backend " << in.kernel->backend.value_or("?");
        if (!in.kernel->archs.empty()) std::cout << ", archs " << join(in.kernel->archs, ", ");
        std::cout << "\n";
      }
      for (const auto& lib : r.libraries) {
        std::cout << "  " << lib.file << "\n";
        for (const auto& [family, v] : lib.max_versions) std::cout << "    needs " << family << "_" << v << "\n";
      }
      std::cout << "policy: " << r.platform_tag << (r.reason.empty() ? "" : "  because " + r.reason) << "\n";
      if (!in.current_tags.empty()) std::cout << "tagged: " << in.current_tags << "\n";
      print_libs("torch-provided libraries", r.torch_provided);
      print_libs("external libraries (not allowed)", r.external);
      print_libs("external libraries (allowed)", r.allowed_external);
      print_libs("libraries torch provides in another major", r.mismatched);
      for (const auto& w : r.warnings) std::cout << "warning: " << w << "\n";
      std::cout << "abi3: " << to_string(r.abi3.status);
      for (const auto& v : r.abi3.non_stable) std::cout << "\n  non-stable: " << v.symbol << " in " << v.file;
      std::cout << "\n";
      print_gpu(in.gpu);
      for (const auto& p : r.problems) std::cout << "problem: " << p << "\n";
    }
    exit_code = in.ok() ? 0 : static_cast<int>(ErrorKind::policy);
  });
}

}  // namespace kwheel::cli
