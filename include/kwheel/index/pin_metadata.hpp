#pragma once
// What `kwheel pin` reads of a candidate beyond its page entry: its METADATA
// (from the wheel itself or its PEP 658 companion) and the files a variant
// index lists, each held to the sha256 the index page gave for it. Bytes that
// do not hash to the page's word are an attack on the pin, never a candidate
// to pass over.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/http.hpp"
#include "kwheel/index/pin.hpp"
#include "kwheel/index/simple_api.hpp"

namespace kwheel {

// Throws Error(input) naming `what` and both hashes when the served bytes
// differ from the page's sha256, or when the page gave none.
void check_served_sha256(const std::string& what, const std::string& page_sha256, const std::string& served_sha256);

// A candidate's METADATA, or why the index offers none to trust.
struct CandidateMetadata {
  std::optional<std::string> text;
  std::string missing;  // when there is no text
};

// From the wheel itself where it is a local file (its bytes checked against
// the page's sha256 when a file:// page gave one), else from its PEP 658
// .metadata companion, checked against the page's metadata sha256; else,
// over HTTP, from the wheel fetched and checked. No `http`: local files only.
CandidateMetadata candidate_metadata(const IndexFile& f, HttpClient* http);

// `pin --lock`: why a candidate is not the build of request's repo_id at its
// commit, or nullopt when it is.
std::optional<std::string> commit_problem(const IndexFile& f, const PinRequest& req, HttpClient* http);

// Whether a project of a source is a kernel (wheel/kernel_marker.hpp), by
// the METADATA of one of its wheels (`files`, its page's or directory's): of
// its newest version, PEP 658 metadata preferred, else the wheel itself. No
// wheel: false. Throws Error(input) naming the project at `where` when the
// METADATA cannot be had or trusted, and what candidate_metadata throws.
bool project_is_kernel(const std::vector<IndexFile>& files, const std::string& project, const std::string& where, HttpClient& http);

// A file a variant index lists (variants.json, a wheel), held to the page's
// sha256.
std::string fetch_listed(const IndexFile& f, HttpClient& http);

}  // namespace kwheel
