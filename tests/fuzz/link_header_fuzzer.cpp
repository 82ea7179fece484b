// The `Link` header of a paginated tree listing, followed as
// HubClient::list_tree follows it: the rel="next" target, resolved against
// the page's URL, then compared by origin with the endpoint. Inputs up to
// 128 KiB: curl passes header lines up to 100 KiB.
#include <optional>
#include <regex>

#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/http.hpp"

using namespace kwheel;

namespace {

// The regex huggingface_hub reads the header with (and kwheel did, until a
// long header overflowed std::regex's recursion): the reference link_next
// must agree with where std::regex is safe to run.
std::optional<std::string> reference(const std::string& header) {
  static const std::regex re(R"(<([^>]*)>\s*;\s*rel\s*=\s*"?next"?)");
  std::smatch m;
  if (std::regex_search(header, m, re)) return m[1].str();
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string header = fuzz_string(data, size);
  const auto next = link_next(header);
  if (size <= 2048) FUZZ_CHECK(next == reference(header));
  if (!next) return 0;
  FUZZ_CHECK(next->find('>') == std::string::npos);
  FUZZ_CHECK(header.find("<" + *next + ">") != std::string::npos);
  const std::string page =
      "https://huggingface.co/api/kernels/kernels-community/img2gray/tree/0123456789abcdef0123456789abcdef01234567/build?recursive=true&expand=false";
  try {
    const std::string url = resolve_url(page, *next);
    FUZZ_CHECK(url.starts_with("http://") || url.starts_with("https://"));
    (void)url_origin(url);
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::network);
  }
  return 0;
}
