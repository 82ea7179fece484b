#include <ctime>
#include <iostream>

#include "cli.hpp"
#include "kwheel/link/link.hpp"

namespace kwheel::cli {

namespace {

struct LinkArgs {
  std::string python;
  std::string cache;
  std::string lock;
  SignatureArgs signers;
  bool allow_unsigned = false;
};

std::string short_commit(const std::string& c) { return c.substr(0, 12); }

void print_report(const LinkReport& r, const Output& out) {
  for (const auto& m : r.lock_mismatches)
    out.error("lock: " + m.repo_id + " is locked at " + m.locked + ", installed: " + m.installed + "; install the locked wheel, or lock again");
  for (const auto& k : r.kernels) {
    if (k.status == LinkedKernel::Status::failed) {
      out.error("not linked: " + k.distribution + ": " + k.why);
    } else if (k.status == LinkedKernel::Status::skipped) {
      out.warn("skipped: " + k.distribution + ": " + k.why);
    } else if (out.table()) {
      const KernelOrigin& o = *k.origin;
      std::cout << (r.written ? "linked  " : "checked ") << o.repo_id << " v" << o.version << " (" << short_commit(o.revision)
                << (k.stand_in_revision ? ", a stand-in commit" : "") << ", " << o.variant << ") -> " << k.package_dir.string() << "\n";
    }
  }
  if (out.table()) {
    for (const auto& repo : r.removed) std::cout << "unlinked " << repo << ": nothing installed provides it now\n";
    if (!r.written) std::cout << "the cache " << r.cache.string() << " was left as it was\n";
  }
  // The one line a user needs, even with -q (`eval "$(kwheel link -q ...)"`).
  if (r.written && !r.default_cache) std::cout << export_line(r.cache) << "\n";
}

int run_link(const LinkArgs& a, const Output& out) {
  LinkOptions o;
  o.python = a.python;
  if (!a.cache.empty()) o.cache = a.cache;
  if (!a.lock.empty()) o.lock = a.lock;
  o.chain.signatures = signature_options(a.signers);
  o.chain.allow_unsigned = a.allow_unsigned;
  o.chain.now = static_cast<std::int64_t>(std::time(nullptr));
  const LinkReport r = link_kernels(o);
  if (out.json) out.emit_json(r.to_json());
  else print_report(r, out);
  return r.exit_code();
}

}  // namespace

void register_link(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<LinkArgs>();
  auto* sub = app.add_subcommand(
      "link",
      "Make the kernel wheels installed for a Python visible to code written for kernels (get_kernel, has_kernel, kernelize, "
      "load_kernel, get_locked_kernel, get_kernel_dep), offline: each installed kernel is verified as `kwheel verify --python` does, then "
      "linked into the cache kernels reads (KERNELS_CACHE, else HF_HUB_CACHE / HF_HOME/hub) under its Hub repo, version, commit and variant; "
      "links, not copies, so pip uninstall and kwheel verify keep meaning what they say. A re-run leaves entries only for what is installed now. "
      "Exit 0 when every kernel was linked or skipped with a reason; when one was not linked (nothing of it is): 8 a broken chain, "
      "9 no trusted signer (see --allow-unsigned), 3 a kernel or cache folder it cannot link; "
      "5 when --lock names a kernel not installed at its locked commit (then nothing is written)");
  sub->add_option("--python", args->python, "The interpreter whose installed kernels are linked")->type_name("PYTHON")->required();
  sub->add_option("--cache", args->cache,
                  "Write the links here instead (the line `export KERNELS_CACHE=DIR` that kernels needs is printed)")->type_name("DIR");
  sub->add_option("--lock", args->lock, "kernels.lock (either format): every locked kernel must be installed at its locked commit")->type_name("FILE");
  add_signature_flags(sub, args->signers, false);
  sub->add_flag("--allow-unsigned", args->allow_unsigned,
                "Link kernels no trusted signer vouches for (unsigned, signed by someone else); a broken chain still fails");
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel link --python /opt/venv/bin/python                       # into the HF cache kernels reads",
                     "kwheel link --python .venv/bin/python --cache .kernels         # prints: export KERNELS_CACHE=...",
                     "kwheel link --python .venv/bin/python --lock kernels.lock      # each locked kernel at its commit"});
  sub->callback([args, &out, &exit_code] { exit_code = run_link(*args, out); });
}

}  // namespace kwheel::cli
