#pragma once
// Every libcurl handle kwheel holds, owned RAII-style: one deleter template
// instead of a hand-written functor per handle type in each file that uses
// libcurl (the transport, URL parsing, the upload URL's credentials).
#include <curl/curl.h>

#include <memory>

namespace kwheel::curl {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* handle) const noexcept { Free(handle); }
};

using Easy = std::unique_ptr<CURL, Deleter<curl_easy_cleanup>>;
using Slist = std::unique_ptr<curl_slist, Deleter<curl_slist_free_all>>;
using Multi = std::unique_ptr<CURLM, Deleter<curl_multi_cleanup>>;
using Mime = std::unique_ptr<curl_mime, Deleter<curl_mime_free>>;
using Url = std::unique_ptr<CURLU, Deleter<curl_url_cleanup>>;
// A string libcurl allocated (curl_url_get): freed with curl_free.
using String = std::unique_ptr<char, Deleter<curl_free>>;

}  // namespace kwheel::curl
