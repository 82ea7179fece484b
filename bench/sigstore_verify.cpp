// In-process timing of kwheel's Sigstore verification, what `kwheel build`
// adds per variant: parse the bundle and verify it (verify_bundle_text),
// with the trusted root parsed once beforehand, as a build parses it once.
// Driven by bench/sigstore-verify; not part of the default build:
//
//   cmake --build build --target kwheel_bench_sigstore
//   build/kwheel_bench_sigstore RUNS < manifest
//
// The manifest has one bundle a line, tab-separated:
//   name  bundle.json  artifact  identity  issuer  trusted_root.json or "-" (the embedded production root)
// Prints one JSON object a line: the bundle, the root's parse time, the
// first verification in the process (OpenSSL's lazy set-up included) and
// every later one (RUNS of them), in microseconds. A bundle that does not
// verify is an error (exit 1): the bench times only the path that succeeds.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/base/digest.hpp"
#include "kwheel/sigstore/signer_policy.hpp"
#include "kwheel/sigstore/trusted_root.hpp"
#include "kwheel/sigstore/verifier.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace kwheel::sigstore;
  const int runs = argc > 1 ? std::atoi(argv[1]) : 200;
  if (runs < 1) {
    std::cerr << "usage: kwheel_bench_sigstore RUNS < manifest\n";
    return 2;
  }
  std::string line;
  try {
    while (std::getline(std::cin, line)) {
      if (line.empty()) continue;
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
      if (f.size() != 6) throw std::runtime_error("manifest line needs 6 tab-separated fields: " + line);
      const auto& [name, bundle_path, artifact, identity, issuer, root_path] = std::tie(f[0], f[1], f[2], f[3], f[4], f[5]);

      auto t0 = Clock::now();
      const TrustedRoot root = root_path == "-" ? embedded_trusted_root(false) : parse_trusted_root(slurp(root_path), root_path);
      const double root_us = micros(Clock::now() - t0);

      const std::string text = slurp(bundle_path);
      const auto digest = kwheel::file_digest(artifact, kwheel::DigestAlgorithm::sha256);
      const SignerPolicy policy = SignerPolicy::identity(identity, issuer);
      const auto now = static_cast<std::int64_t>(std::time(nullptr));

      std::vector<double> times;
      times.reserve(runs + 1);
      for (int i = 0; i <= runs; ++i) {
        t0 = Clock::now();
        const VerificationResult r = verify_bundle_text(text, digest, &policy, root, name, now);
        times.push_back(micros(Clock::now() - t0));
        if (r.identity.empty()) throw std::runtime_error(name + ": verified with no identity");
      }
      nlohmann::json out{{"bundle", name}, {"root_parse_us", root_us}, {"first_us", times.front()}};
      out["us"] = std::vector<double>(times.begin() + 1, times.end());
      std::cout << out.dump() << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "kwheel_bench_sigstore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
