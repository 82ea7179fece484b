#pragma once
// "Did you mean": the known word closest to a mistyped one, as git and
// cargo suggest a command. Closeness is the optimal-string-alignment
// distance (Damerau-Levenshtein without re-editing a transposed pair), so
// "biuld" is one edit from "build", as a slip of two fingers is.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// Insertions, deletions, substitutions and swaps of two adjacent characters
// that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest `typed`, if it is near enough to be what was meant:
// at most a third of the typed word's length in edits (at least one). On a
// tie the earlier candidate wins. None for an exact match: nothing to suggest.
std::optional<std::string> closest_match(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace kwheel
