#pragma once
// What an index may put into the files `kwheel pin` writes, held to what
// each value must be. A project page is the server's word: its file names,
// hashes and URLs reach requirements.txt and pylock.toml, which pip obeys
// line by line (even under --require-hashes, an option line or a second
// requirement line is obeyed). So each value is checked here by its
// grammar before anything is pinned from it, and every requirements text is
// checked again, line by line, before the library hands it out: one rule,
// whichever path wrote it (one kernel, every kernel of a source, a
// kernels.lock, a variant index, the dependencies uv resolved).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/index/pin.hpp"
#include "kwheel/index/simple_api.hpp"

namespace kwheel {

// Why `file`, listed on the project page `where`, can never be pinned for
// `project`: its name is not a wheel filename of `project` by the spec
// (packaging/wheel_filename.hpp, PEP 825 labels accepted) though it ends in
// .whl or holds a byte no file name of a distribution holds; its sha256 or
// PEP 658 metadata sha256 is neither absent nor 64 lowercase hex digits;
// its URL holds a control byte or is not UTF-8; its size is beyond TOML's
// integers. The
// reason names `where` and the value, escaped (printable()). nullopt when
// every value is sound; a sound file that is not a wheel (an sdist, a
// PEP 825 variants.json) passes: it is never a candidate.
std::optional<std::string> listed_file_problem(const IndexFile& file, const std::string& project, const std::string& where);

// Moves every file of `files` with a listed_file_problem into `refused` as
// a candidate that does not fit, its filename and URL escaped (so that
// --json and messages can show it), the sound ones staying in `files` in
// their order.
void refuse_unsound_files(std::vector<IndexFile>& files, const std::string& project, const std::string& where, std::vector<PinCandidate>& refused);

// A version as a pin may write it after "==": PEP 440, and only the bytes
// a version is written with (no whitespace, which PEP 440's regex lets
// surround it).
bool is_pin_version(std::string_view version);

// A PEP 508 marker as uv writes one, held to a strict form: marker names,
// operators, parentheses and spaces outside quotes, and quoted values of
// letters, digits and . _ - + ! * only. No '#' (pip would read a comment
// from it), no '\\', and no space inside a quoted value (pip splits a
// requirement line into words before it reads the marker, and a word that
// starts with '-' is an option).
bool is_plain_marker(std::string_view marker);

// "NAME==VERSION[ ; MARKER]" followed by one or more " --hash=sha256:<64
// lowercase hex>": the only requirement line kwheel writes.
bool is_pinned_requirement(std::string_view line);

// A comment line of requirements.txt, "# TEXT\n", TEXT escaped so that it
// stays one line for pip, which splits lines as Python's str.splitlines()
// does (CR, VT, FF, the C0 separators, U+0085, U+2028, U+2029 all end a
// line there): control bytes, invalid UTF-8 and U+2028/U+2029 become \xNN.
std::string requirements_comment(std::string_view text);

// The requirements text `text` as kwheel may hand it out: every line a
// comment ('#' and one line by pip's rule), one of `options` (the index
// lines kwheel chose: "--index-url URL" or "--extra-index-url URL", URL
// without whitespace or control bytes), or is_pinned_requirement; no empty
// line but the end. Throws Error(input) naming the first other line,
// escaped; `what` says whose text it is ("the requirements of img2gray").
void check_requirements_text(std::string_view text, const std::vector<std::string>& options, const std::string& what);

}  // namespace kwheel
