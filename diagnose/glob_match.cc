#include "diagnose/glob_match.h"

#include <cstddef>

namespace sparktrace::diagnose {

// Greedy with one backtrack point (the last `*`): linear in practice, never exponential.
bool GlobMatches(std::string_view pattern, std::string_view text) {
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;  // the pattern position after the last `*`
  std::size_t star_text = 0;                  // where the text stood when it was met
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = ++p;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star;  // let the last `*` take one more character
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace sparktrace::diagnose
