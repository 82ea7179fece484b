#include "kwheel/hub/curl_library.hpp"

#if KWHEEL_LAZY_CURL
#include <dlfcn.h>
#endif

#include <string>

#include "kwheel/base/error.hpp"

namespace kwheel::curl {

namespace {

#if KWHEEL_LAZY_CURL
// The SONAME every libcurl 7.x and 8.x has (Debian's libcurl4, RHEL's libcurl).
constexpr const char* kSoname = "libcurl.so.4";

Error unavailable(const std::string& why) {
  return Error(ErrorKind::io, "cannot load " + std::string(kSoname) + " (" + why +
                                  "), which kwheel needs for HTTP and URLs; install libcurl 7.88 or newer (Debian and Ubuntu: "
                                  "apt install libcurl4; RHEL: dnf install libcurl), or use the release wheel, which carries its own");
}

Library load() {
  // Never dlclose'd: libcurl's TLS library registers exit handlers that
  // point into it, so it stays mapped for the life of the process.
  void* so = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    const char* why = ::dlerror();
    throw unavailable(why ? why : "dlopen failed");
  }
  Library lib;
  auto bind = [&](auto& slot, const char* name) {
    void* symbol = ::dlsym(so, name);
    if (!symbol) throw unavailable(std::string("it has no ") + name);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(symbol);
  };
#define KWHEEL_CURL_BIND(member, function) bind(lib.member, #function);
  KWHEEL_CURL_FUNCTIONS(KWHEEL_CURL_BIND)
#undef KWHEEL_CURL_BIND
  return lib;
}
#else
Library load() {
  Library lib;
#define KWHEEL_CURL_LINK(member, function) lib.member = &::function;
  KWHEEL_CURL_FUNCTIONS(KWHEEL_CURL_LINK)
#undef KWHEEL_CURL_LINK
  return lib;
}
#endif

}  // namespace

const Library& library() {
  static const Library lib = load();
  return lib;
}

}  // namespace kwheel::curl
