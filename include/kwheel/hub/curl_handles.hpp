#pragma once
// Every libcurl handle kwheel holds, owned RAII-style: one deleter template
// instead of a hand-written functor per handle type in each file that uses
// libcurl (the transport, URL parsing, the upload URL's credentials).
#include <curl/curl.h>

#include <memory>

#include "kwheel/hub/curl_library.hpp"

namespace kwheel::curl {

// Free: the table's member that frees the handle (curl_library.hpp). A
// handle exists only once the table is bound, so freeing never loads it.
template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* handle) const noexcept { (library().*Free)(handle); }
};

using Easy = std::unique_ptr<CURL, Deleter<&Library::easy_cleanup>>;
using Slist = std::unique_ptr<curl_slist, Deleter<&Library::slist_free_all>>;
using Multi = std::unique_ptr<CURLM, Deleter<&Library::multi_cleanup>>;
using Mime = std::unique_ptr<curl_mime, Deleter<&Library::mime_free>>;
using Url = std::unique_ptr<CURLU, Deleter<&Library::url_cleanup>>;
// A string libcurl allocated (curl_url_get): freed with curl_free.
using String = std::unique_ptr<char, Deleter<&Library::free>>;

}  // namespace kwheel::curl
