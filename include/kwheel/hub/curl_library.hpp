#pragma once
// libcurl's functions as kwheel calls them: one table, bound the first time
// a command needs the network or a URL parsed by libcurl.
//
// Why not a plain link: a distribution's libcurl brings some thirty shared
// libraries (GnuTLS for librtmp, Kerberos, LDAP, libssh2, ...), and binding
// them cost every run ~7 ms before main() on the 2-core CI machine
// (`kwheel --version` 10.3 ms linked, 3.3 ms loading on first use): a sixth
// of a nightly `kwheel index` with nothing new, which never needs them. With
// KWHEEL_LAZY_CURL (CMakeLists.txt: the developer build) libcurl.so.4 is
// dlopen'ed here; without it (the release binary, which links libcurl
// statically, and the pyproject.toml wheel, whose repair must see libcurl
// as needed to graft it) the table points at the linked functions.
#include <curl/curl.h>

namespace kwheel::curl {

// X(member, libcurl function): the libcurl API kwheel uses, and nothing else.
#define KWHEEL_CURL_FUNCTIONS(X)                 \
  X(global_init, curl_global_init)               \
  X(easy_init, curl_easy_init)                   \
  X(easy_cleanup, curl_easy_cleanup)             \
  X(easy_setopt, curl_easy_setopt)               \
  X(easy_getinfo, curl_easy_getinfo)             \
  X(easy_perform, curl_easy_perform)             \
  X(easy_strerror, curl_easy_strerror)           \
  X(multi_init, curl_multi_init)                 \
  X(multi_cleanup, curl_multi_cleanup)           \
  X(multi_setopt, curl_multi_setopt)             \
  X(multi_add_handle, curl_multi_add_handle)     \
  X(multi_remove_handle, curl_multi_remove_handle) \
  X(multi_perform, curl_multi_perform)           \
  X(multi_poll, curl_multi_poll)                 \
  X(multi_info_read, curl_multi_info_read)       \
  X(multi_strerror, curl_multi_strerror)         \
  X(slist_append, curl_slist_append)             \
  X(slist_free_all, curl_slist_free_all)         \
  X(mime_init, curl_mime_init)                   \
  X(mime_free, curl_mime_free)                   \
  X(mime_addpart, curl_mime_addpart)             \
  X(mime_name, curl_mime_name)                   \
  X(mime_filedata, curl_mime_filedata)           \
  X(mime_filename, curl_mime_filename)           \
  X(mime_type, curl_mime_type)                   \
  X(mime_data, curl_mime_data)                   \
  X(url, curl_url)                               \
  X(url_cleanup, curl_url_cleanup)               \
  X(url_set, curl_url_set)                       \
  X(url_get, curl_url_get)                       \
  X(free, curl_free)                             \
  X(getdate, curl_getdate)

struct Library {
#define KWHEEL_CURL_MEMBER(member, function) decltype(&::function) member = nullptr;
  KWHEEL_CURL_FUNCTIONS(KWHEEL_CURL_MEMBER)
#undef KWHEEL_CURL_MEMBER
};

// The table, bound once (thread-safe). Throws Error(ErrorKind::io) naming
// libcurl.so.4 and the package to install when it cannot be loaded, or
// lacks a function kwheel needs (a libcurl older than 7.88).
const Library& library();

}  // namespace kwheel::curl
