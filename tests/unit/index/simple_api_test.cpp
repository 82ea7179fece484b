#include "kwheel/index/simple_api.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"

using namespace kwheel;
using nlohmann::json;

namespace {

IndexFile file(const std::string& filename, const std::string& version) {
  IndexFile f;
  f.filename = filename;
  f.url = "../../files/" + filename;
  f.sha256 = std::string(64, 'a');
  f.requires_python = ">=3.9";
  f.metadata_sha256 = std::string(64, 'b');
  f.size = 1234;
  f.version = version;
  return f;
}

}  // namespace

TEST(HtmlEscape, EscapesMarkupAndQuotes) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;");
  EXPECT_EQ(html_unescape("&lt;=3.9&amp;&#x27;&#39;&quot;&gt;&#233;"), "<=3.9&''\">\xC3\xA9");
  EXPECT_EQ(html_unescape("&bogus; &"), "&bogus; &");
}

TEST(ProjectPage, HtmlCarriesHashRequiresPythonAndBothMetadataAttributes) {
  IndexFile f = file("img2gray-0.1.0%2Btorch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl", "0.1.0+torch2.7.cu126");
  f.filename = "img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl";
  f.requires_python = ">=3.9,<4";
  std::string html = render_project_html("img2gray", {f});
  EXPECT_NE(html.find("<meta name=\"pypi:repository-version\" content=\"1.1\">"), std::string::npos);
  EXPECT_NE(html.find("href=\"../../files/img2gray-0.1.0%2Btorch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl#sha256=" + std::string(64, 'a') + "\""),
            std::string::npos);
  EXPECT_NE(html.find("data-requires-python=\"&gt;=3.9,&lt;4\""), std::string::npos);
  const std::string md = "sha256=" + std::string(64, 'b');
  EXPECT_NE(html.find("data-core-metadata=\"" + md + "\" data-dist-info-metadata=\"" + md + "\""), std::string::npos);
  EXPECT_NE(html.find(">img2gray-0.1.0+torch2.7.cu126-cp39-abi3-manylinux_2_28_x86_64.whl</a>"), std::string::npos);
}

TEST(ProjectPage, HtmlRoundTripsThroughTheParser) {
  IndexFile a = file("img2gray-0.1.0-py3-none-any.whl", "0.1.0");
  IndexFile b = file("img2gray-0.1.0%2Btorch2.10.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "");
  b.metadata_sha256.reset();
  b.requires_python.clear();
  auto parsed = parse_project_html(render_project_html("img2gray", {a, b}), "test page");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].filename, "img2gray-0.1.0-py3-none-any.whl");
  EXPECT_EQ(parsed[0].sha256, std::string(64, 'a'));
  EXPECT_EQ(parsed[0].requires_python, ">=3.9");
  EXPECT_EQ(parsed[0].metadata_sha256, std::string(64, 'b'));
  EXPECT_EQ(parsed[0].url, "../../files/img2gray-0.1.0-py3-none-any.whl");
  EXPECT_EQ(parsed[1].filename, "img2gray-0.1.0+torch2.10.cu130-cp39-abi3-manylinux_2_28_x86_64.whl");  // percent-decoded
  EXPECT_EQ(parsed[1].version, "0.1.0+torch2.10.cu130");
  EXPECT_FALSE(parsed[1].metadata_sha256.has_value());
  EXPECT_TRUE(parsed[1].requires_python.empty());
}

TEST(ProjectPage, ParserToleratesOtherServersMarkup) {
  // Single quotes, unquoted values, upper case, "true" metadata, yanked, entities.
  const std::string html =
      "<html><body><A HREF='/packages/x-1.0-py3-none-any.whl#sha256=ABCDEF' data-requires-python='&gt;=3.8' "
      "data-dist-info-metadata=true>x-1.0-py3-none-any.whl</A>\n"
      "<a href=/p/x-0.9.tar.gz data-yanked>x-0.9.tar.gz</a></body></html>";
  auto parsed = parse_project_html(html, "test page");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].sha256, "abcdef");
  EXPECT_EQ(parsed[0].requires_python, ">=3.8");
  EXPECT_EQ(parsed[0].metadata_sha256, "");
  EXPECT_EQ(parsed[0].url, "/packages/x-1.0-py3-none-any.whl");
  EXPECT_TRUE(parsed[1].yanked);
  EXPECT_EQ(parsed[1].version, "");  // not a wheel
}

TEST(ProjectPage, JsonHasPep691And700Shape) {
  IndexFile a = file("img2gray-0.1.0+torch2.9.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "0.1.0+torch2.9.cu130");
  IndexFile b = file("img2gray-0.1.0+torch2.10.cu130-cp39-abi3-manylinux_2_28_x86_64.whl", "0.1.0+torch2.10.cu130");
  IndexFile c = file("img2gray-0.1.0-py3-none-any.whl", "0.1.0");
  json j = json::parse(render_project_json("img2gray", {a, b, c}));
  EXPECT_EQ(j["meta"], (json{{"api-version", "1.1"}}));
  EXPECT_EQ(j["name"], "img2gray");
  ASSERT_EQ(j["files"].size(), 3u);
  const json& f = j["files"][0];
  EXPECT_EQ(f["filename"], a.filename);
  EXPECT_EQ(f["url"], a.url);
  EXPECT_EQ(f["hashes"], (json{{"sha256", std::string(64, 'a')}}));
  EXPECT_EQ(f["requires-python"], ">=3.9");
  EXPECT_EQ(f["core-metadata"], (json{{"sha256", std::string(64, 'b')}}));
  EXPECT_EQ(f["dist-info-metadata"], f["core-metadata"]);
  EXPECT_EQ(f["size"], 1234);
  // PEP 440 order: the bare version, then torch2.9 before torch2.10.
  EXPECT_EQ(j["versions"], (json{"0.1.0", "0.1.0+torch2.9.cu130", "0.1.0+torch2.10.cu130"}));
  auto parsed = parse_project_json(j.dump(), "test page");
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[1].filename, b.filename);
  EXPECT_EQ(parsed[1].metadata_sha256, std::string(64, 'b'));
  EXPECT_EQ(parsed[1].size, 1234u);
}

TEST(RootPage, HtmlAndJsonListProjects) {
  std::string html = render_root_html({"img2gray", "other-kernel"});
  EXPECT_NE(html.find("<a href=\"img2gray/\">img2gray</a>"), std::string::npos);
  EXPECT_EQ(parse_root_page(html, false, "root"), (std::vector<std::string>{"img2gray", "other-kernel"}));
  json j = json::parse(render_root_json({"img2gray"}));
  EXPECT_EQ(j, (json{{"meta", {{"api-version", "1.1"}}}, {"projects", {{{"name", "img2gray"}}}}}));
  EXPECT_EQ(parse_root_page(j.dump(), true, "root"), (std::vector<std::string>{"img2gray"}));
}

TEST(ProjectPage, NotAPageIsAnInputError) {
  try {
    parse_project_json("{\"projects\": []}", "http://x/simple/y/");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("http://x/simple/y/"), std::string::npos);
  }
  EXPECT_THROW(parse_project_html("plain text", "page"), Error);
}

TEST(SimpleIndex, ProjectJsonOfUnexpectedTypesIsReadNotThrown) {
  // Found by the index_page fuzz target's crafted inputs: a non-string
  // core-metadata sha256 threw nlohmann's type_error out of `kwheel pin`.
  auto files = parse_project_json(R"({"files":[{"filename":"a-1.0-py3-none-any.whl","url":"u","core-metadata":{"sha256":5}}]})", "t");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].metadata_sha256, "");
}

// One file name, one file (issue: an index listed one name with two
// sha256s and both were pinned; after the server swapped the bytes, pip
// took the other wheel).
TEST(ProjectPage, OneFileNameWithTwoHashesFailsClosedNamingBoth) {
  const std::string a(64, 'a'), b = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  const std::string name = "img2gray-0.1.0-py3-none-any.whl";
  const std::string html = "<html><body><a href=\"/f/" + name + "#sha256=" + a + "\">x</a>\n<a href=\"/g/" + name + "#sha256=" + b + "\">x</a></body></html>";
  const json page{{"files", {{{"filename", name}, {"url", "/f/x"}, {"hashes", {{"sha256", a}}}}, {{"filename", name}, {"url", "/g/x"}, {"hashes", {{"sha256", b}}}}}}};
  for (bool is_json : {false, true}) {
    try {
      is_json ? parse_project_json(page.dump(), "http://x/simple/img2gray/") : parse_project_html(html, "http://x/simple/img2gray/");
      ADD_FAILURE() << "two hashes for one name were read";
    } catch (const Error& e) {
      const std::string why = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::input);
      for (const std::string& part : {std::string("http://x/simple/img2gray/"), name, a, b}) EXPECT_NE(why.find(part), std::string::npos) << why;
    }
  }
}

TEST(ProjectPage, OneFileNameListedTwiceWithOneHashIsOneFile) {
  const std::string a(64, 'a');
  const std::string name = "img2gray-0.1.0-py3-none-any.whl";
  // Upper-case digits are lowered first (as pip does): the same hash.
  const auto files = parse_project_html("<a href=\"/f/" + name + "\">x</a><a href=\"/f/" + name + "#sha256=" + std::string(64, 'A') + "\">x</a>" +
                                            "<a href=\"/g/" + name + "#sha256=" + a + "\">x</a>",
                                        "page");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].sha256, a);  // the one with a hash
  EXPECT_EQ(files[0].url, "/f/" + name);
}

TEST(ProjectPage, MetadataHashesAreLoweredAsFileHashesAre) {
  const auto html = parse_project_html("<a href=\"/f/a-1.0-py3-none-any.whl\" data-core-metadata=\"sha256=" + std::string(64, 'B') + "\">x</a>", "page");
  EXPECT_EQ(html.at(0).metadata_sha256, std::string(64, 'b'));
  const auto js = parse_project_json(R"({"files":[{"filename":"a-1.0-py3-none-any.whl","url":"u","core-metadata":{"sha256":")" + std::string(64, 'C') + "\"}}]}", "t");
  EXPECT_EQ(js.at(0).metadata_sha256, std::string(64, 'c'));
}

TEST(RootPage, ALinkThatIsNoProjectNameIsNoProject) {
  const std::string html = "<a href=\"../\">Parent Directory</a><a href=\"x/\">img2gray</a><a href=\"y/\">a\nb</a><a href=\"z/\">-rf</a>";
  EXPECT_EQ(parse_root_page(html, false, "root"), (std::vector<std::string>{"img2gray"}));
  EXPECT_EQ(parse_root_page(R"({"projects":[{"name":"img2gray"},{"name":"evil\n-i http://h/"},{"name":""}]})", true, "root"),
            (std::vector<std::string>{"img2gray"}));
}
