#include "kwheel/index/pypirc.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kwheel/base/error.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/index/publish.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

TEST(Ini, ParsesLikeRawConfigParser) {
  IniFile ini = parse_ini(
      "# comment\n"
      "[distutils]\n"
      "index-servers =\n"
      "    pypi\n"
      "    private\n"
      "\n"
      "[private]\n"
      "Repository: http://127.0.0.1:8080/\n"
      "username = __token__\n"
      "; another comment\n"
      "password =  pypi-Ag=:with:colons  \n"
      "[DEFAULT]\n"
      "ca_cert = /etc/ca.pem\n",
      "test");
  EXPECT_EQ(ini.get("distutils", "index-servers"), "pypi\nprivate");
  EXPECT_EQ(ini.get("private", "repository"), "http://127.0.0.1:8080/");  // option names are case-insensitive
  EXPECT_EQ(ini.get("private", "password"), "pypi-Ag=:with:colons");      // first delimiter splits, value stripped
  EXPECT_EQ(ini.get("private", "ca_cert"), "/etc/ca.pem");                // [DEFAULT] applies
  EXPECT_FALSE(ini.get("missing", "ca_cert").has_value());                // but not to absent sections
}

TEST(Ini, MalformedFilesAreRefusedWithoutQuotingValues) {
  for (const char* text : {"password = secret-value\n", "[a]\nx = 1\n[a]\n", "[a]\nx = 1\nx = 2\n", "[a]\njust-a-line-secret-value\n"}) {
    try {
      parse_ini(text, "/home/u/.pypirc");
      FAIL() << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_NE(std::string(e.what()).find("/home/u/.pypirc line"), std::string::npos);
      EXPECT_EQ(std::string(e.what()).find("secret-value"), std::string::npos) << e.what();
    }
  }
}

TEST(Pypirc, RepositoriesAsTwineReadsThem) {
  auto repos = pypirc_repositories(parse_ini(
      "[distutils]\nindex-servers = private pypi\n"
      "[server-login]\nusername = fallback-user\npassword = fallback-pw\n"
      "[private]\nrepository = https://idx.example/legacy/\nusername = alice\n"
      "[ignored]\nrepository = https://nowhere/\n",
      "t"));
  ASSERT_TRUE(repos.count("private"));
  EXPECT_EQ(repos["private"].repository, "https://idx.example/legacy/");
  EXPECT_EQ(repos["private"].username, "alice");
  ASSERT_TRUE(repos["private"].password.has_value());
  EXPECT_EQ(repos["private"].password->reveal(), "fallback-pw");  // [server-login] fills the gap
  EXPECT_EQ(repos["pypi"].repository, kPypiUploadUrl);             // always known
  EXPECT_FALSE(repos.count("testpypi"));                           // only when listed
  EXPECT_FALSE(repos.count("ignored"));                            // not in index-servers: twine ignores it
  auto defaults = pypirc_repositories(parse_ini("", "t"));
  EXPECT_EQ(defaults["testpypi"].repository, kTestPypiUploadUrl);  // default index-servers: pypi testpypi
}

namespace {

struct TempHome {
  fs::path dir;
  std::string old_home;
  TempHome() {
    dir = fs::temp_directory_path() / ("kwheel-pypirc-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const char* h = std::getenv("HOME");
    old_home = h ? h : "";
    ::setenv("HOME", dir.c_str(), 1);
  }
  ~TempHome() {
    ::setenv("HOME", old_home.c_str(), 1);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& text) { std::ofstream(dir / ".pypirc") << text; }
};

}  // namespace

TEST(ResolveRepository, PrecedenceIsTwines) {
  TempHome home;
  home.write("[distutils]\nindex-servers = private\n[private]\nrepository = http://127.0.0.1:9/up/\nusername = alice\npassword = from-file\n");
  RepositorySources s;
  s.repository = "private";
  Repository r = resolve_repository(s);
  EXPECT_EQ(r.url, "http://127.0.0.1:9/up/");
  EXPECT_EQ(r.username, "alice");
  EXPECT_EQ(r.password.reveal(), "from-file");
  s.password = Secret("from-env");  // --password / TWINE_PASSWORD outrank the file
  s.username = "bob";
  r = resolve_repository(s);
  EXPECT_EQ(r.username, "bob");
  EXPECT_EQ(r.password.reveal(), "from-env");

  // --repository-url wins over --repository and does not read .pypirc at all.
  RepositorySources u;
  u.repository = "private";
  u.repository_url = "http://carol:p%40ss@127.0.0.1:8080/";
  r = resolve_repository(u);
  EXPECT_EQ(r.url, "http://127.0.0.1:8080/");
  EXPECT_EQ(r.username, "carol");
  EXPECT_EQ(r.password.reveal(), "p@ss");

  RepositorySources anon;
  anon.repository_url = "http://127.0.0.1:8080/";
  EXPECT_TRUE(resolve_repository(anon).username.empty());

  RepositorySources pypi;  // PyPI's default username for API tokens
  pypi.repository_url = "https://upload.pypi.org/legacy/";
  pypi.password = Secret("pypi-token");
  EXPECT_EQ(resolve_repository(pypi).username, "__token__");
}

TEST(ResolveRepository, MistakesAreNamed) {
  TempHome home;
  auto kind_of = [](const RepositorySources& s) -> std::optional<ErrorKind> {
    try {
      resolve_repository(s);
    } catch (const Error& e) {
      return e.kind();
    }
    return std::nullopt;
  };
  EXPECT_EQ(kind_of({}), ErrorKind::usage);  // no repository named at all
  RepositorySources s;
  s.repository_url = "ftp://host/";
  EXPECT_EQ(kind_of(s), ErrorKind::usage);
  s.repository_url = "http://127.0.0.1/";
  s.password = Secret("pw");
  EXPECT_EQ(kind_of(s), ErrorKind::auth);  // a password without a username
  s.password.reset();
  s.username = "alice";
  EXPECT_EQ(kind_of(s), ErrorKind::auth);  // a username without a password
  RepositorySources missing;
  missing.repository = "nope";
  EXPECT_EQ(kind_of(missing), ErrorKind::input);  // ~/.pypirc absent: only pypi is known
  missing.config_file = (home.dir / "absent.pypirc").string();
  EXPECT_EQ(kind_of(missing), ErrorKind::input);
}

TEST(UploadAnswers, AlreadyExistsAsTwineJudgesIt) {
  EXPECT_TRUE(says_already_exists(409, "Conflict", ""));
  EXPECT_TRUE(says_already_exists(400, "File already exists. See https://pypi.org/help/#file-name-reuse", ""));
  EXPECT_TRUE(says_already_exists(400, "Bad Request", "Error: File ALREADY EXISTS"));
  EXPECT_FALSE(says_already_exists(400, "Bad Request", "Invalid classifier"));
  EXPECT_FALSE(says_already_exists(403, "Forbidden", "already exists"));
  EXPECT_EQ(server_message("Conflict",
                           "<!DOCTYPE HTML><html><head><title>Error: 409 Conflict</title></head><body><h1>Error: 409 Conflict</h1>"
                           "<pre>Package &#039;x.whl&#039; already exists!\n  You may start server with `--overwrite` option.</pre></body></html>"),
            "Package 'x.whl' already exists! You may start server with `--overwrite` option.");
  EXPECT_EQ(server_message("Unauthorized", ""), "Unauthorized");
  EXPECT_EQ(server_message("", std::string(1000, 'x')).size(), 300u);
}

TEST(Publish, LongServerPagesAndNamesDoNotOverflowTheStack) {
  // Found by review while writing the index_page and wheel fuzz targets:
  // an error page's tags and the wheel's Name went through std::regex, which
  // recursed once per character.
  const std::string page = "<html><pre>" + std::string(200000, '<') + "x</pre>";
  EXPECT_LE(server_message("Conflict", page).size(), 300u);
  EXPECT_EQ(server_message("", "<html><pre>a<b>c<d</pre>"), "a c<d");

  TempDir tmp;
  const auto path = tmp.path() / "a_b-1.0-py3-none-any.whl";
  kwheel::testing::write_test_wheel(
      path, {{"a_b/__init__.py", ""}, {"a_b-1.0.dist-info/METADATA", "Metadata-Version: 2" + std::string(200000, '0') + "\nName: a" + std::string(200000, '-') + "b\nVersion: 1.0\n"}},
      "a_b-1.0.dist-info/RECORD");
  WheelArchive wheel(path);
  std::string name;
  for (const auto& part : upload_form(wheel, std::string(64, '0')))
    if (part.name == "name") name = part.value;
  EXPECT_EQ(name, "a-b");
}

TEST(Publish, FormNameIsSafeName) {
  TempDir tmp;
  for (const auto& [given, sent] : std::vector<std::pair<std::string, std::string>>{{"Img2Gray", "Img2Gray"}, {"a_b", "a-b"}, {"a.b", "a.b"}, {"a__-b", "a-b"}}) {
    const std::string meta = "Metadata-Version: 2.1\nName: " + given + "\nVersion: 1.0\n";
    const std::string file = wheel_name_component(given) + "-1.0-py3-none-any.whl";
    kwheel::testing::write_test_wheel(tmp.path() / file, {{"x/__init__.py", ""}, {wheel_name_component(given) + "-1.0.dist-info/METADATA", meta}},
                                      wheel_name_component(given) + "-1.0.dist-info/RECORD");
    WheelArchive wheel(tmp.path() / file);
    std::string name;
    for (const auto& part : upload_form(wheel, std::string(64, '0')))
      if (part.name == "name") name = part.value;
    EXPECT_EQ(name, sent) << given;
  }
}
