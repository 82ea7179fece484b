// Where --skip-existing reads what an index holds: the simple index derived
// from an upload URL for the servers kwheel knows (their layouts as their
// docs give them), and the sha256 a project page gives a file.
#include "kwheel/index/published_copy.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

TEST(DerivedSimpleIndex, KnownServersOnly) {
  // pypiserver: uploads to the root, pages under /simple/.
  EXPECT_EQ(derived_simple_index("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/simple/");
  // devpi: uploads to /USER/INDEX/, pages under /USER/INDEX/+simple/.
  EXPECT_EQ(derived_simple_index("http://127.0.0.1:3141/alice/dev/"), "http://127.0.0.1:3141/alice/dev/+simple/");
  EXPECT_EQ(derived_simple_index("https://devpi.example.org/alice/dev"), "https://devpi.example.org/alice/dev/+simple/");
  EXPECT_EQ(derived_simple_index("https://upload.pypi.org/legacy/"), "https://pypi.org/simple/");
  EXPECT_EQ(derived_simple_index("https://test.pypi.org/legacy/"), "https://test.pypi.org/simple/");
  // Anything else is for the user to name (--index-url).
  EXPECT_EQ(derived_simple_index("https://index.test/legacy/"), std::nullopt);
  EXPECT_EQ(derived_simple_index("https://artifactory.test/api/pypi/pypi-local"), std::nullopt);
}

class PublishedCopyTest : public ::testing::Test {
 protected:
  void serve(const std::string& body, const std::string& type = "text/html") {
    pages_->on("https://pages.test/simple/demo/", {{200, body, {{"content-type", type}}, "OK"}});
  }
  PublishedCopy read() {
    HttpOptions o;
    o.max_attempts = 1;
    HttpClient http(o, pages_);
    return published_copy(http, "https://pages.test/simple", "demo-1.0-py3-none-any.whl");
  }
  std::shared_ptr<testing::FakeTransport> pages_ = std::make_shared<testing::FakeTransport>();
};

TEST_F(PublishedCopyTest, ReadsTheFilesSha256FromEitherPageFormat) {
  const std::string hex(64, 'a'), other(64, 'b');
  serve("<html><a href=\"demo-0.9-py3-none-any.whl#sha256=" + other + "\">0.9</a><a href=\"demo-1.0-py3-none-any.whl#sha256=" + std::string(64, 'A') +
        "\">1.0</a></html>");
  PublishedCopy c = read();
  EXPECT_EQ(c.sha256, hex);  // hex compares in lower case
  EXPECT_EQ(c.page, "https://pages.test/simple/demo/");
  serve(R"({"meta": {"api-version": "1.0"}, "name": "demo", "files": [{"filename": "demo-1.0-py3-none-any.whl", "url": "x", "hashes": {"sha256": ")" + other +
            R"("}}]})",
        "application/vnd.pypi.simple.v1+json");
  EXPECT_EQ(read().sha256, other);
}

TEST_F(PublishedCopyTest, AFileListedTwiceWithDifferentHashesSaysNothing) {
  serve("<html><a href=\"a/demo-1.0-py3-none-any.whl#sha256=" + std::string(64, 'a') + "\">1</a><a href=\"b/demo-1.0-py3-none-any.whl#sha256=" +
        std::string(64, 'b') + "\">2</a></html>");
  const std::string e = testing::error_of([&] { read(); }, ErrorKind::input);
  EXPECT_NE(e.find("more than once, with different sha256s"), std::string::npos) << e;
}

TEST_F(PublishedCopyTest, CredentialsWantedIsAnAuthError) {
  pages_->on("https://pages.test/simple/demo/", {{401, "", {}, "Unauthorized"}});
  const std::string e = testing::error_of([&] { read(); }, ErrorKind::auth);
  EXPECT_NE(e.find("https://pages.test/simple/demo/ wants credentials (HTTP 401)"), std::string::npos) << e;
}

}  // namespace
}  // namespace kwheel
