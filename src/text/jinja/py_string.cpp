#include "text/jinja/py_string.h"

#include <utf8proc.h>

#include <algorithm>

#include "core/error.h"

namespace tern::text::jinja {

std::u32string utf8_decode(std::string_view text, std::string_view what) {
  std::u32string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t code_point = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                         static_cast<utf8proc_ssize_t>(text.size() - pos), &code_point);
    if (n <= 0) fail(ErrorKind::kInput, "{}: malformed UTF-8 at byte {}", what, pos);
    out.push_back(static_cast<char32_t>(code_point));
    pos += static_cast<size_t>(n);
  }
  return out;
}

std::string utf8_encode(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (const char32_t c : code_points) {
    utf8proc_uint8_t buffer[4];
    const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buffer);
    out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
  }
  return out;
}

bool python_isspace(char32_t c) {
  if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return true;
  switch (c) {
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200a;
  }
}

std::string python_strip(std::string_view text, const std::string* chars, bool left, bool right) {
  const std::u32string s = utf8_decode(text, "string");
  const std::u32string set = chars ? utf8_decode(*chars, "strip characters") : std::u32string();
  const auto strippable = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : python_isspace(c);
  };
  size_t begin = 0;
  size_t end = s.size();
  if (left)
    while (begin < end && strippable(s[begin])) ++begin;
  if (right)
    while (end > begin && strippable(s[end - 1])) --end;
  return utf8_encode(std::u32string_view(s).substr(begin, end - begin));
}

namespace {

std::vector<std::string> split_whitespace(std::string_view text, int64_t maxsplit, bool from_right) {
  std::u32string s = utf8_decode(text, "string");
  if (from_right) std::reverse(s.begin(), s.end());
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && python_isspace(s[pos])) ++pos;
    if (pos == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = s.size();
      while (end > pos && python_isspace(s[end - 1])) --end;
      std::u32string rest = s.substr(pos, end - pos);
      if (from_right) std::reverse(rest.begin(), rest.end());
      parts.push_back(utf8_encode(rest));
      break;
    }
    size_t end = pos;
    while (end < s.size() && !python_isspace(s[end])) ++end;
    std::u32string word = s.substr(pos, end - pos);
    if (from_right) std::reverse(word.begin(), word.end());
    parts.push_back(utf8_encode(word));
    pos = end;
  }
  if (from_right) std::reverse(parts.begin(), parts.end());
  return parts;
}

}  // namespace

std::vector<std::string> python_split(std::string_view text, const std::string* sep, int64_t maxsplit,
                                      bool from_right) {
  if (!sep) return split_whitespace(text, maxsplit, from_right);
  if (sep->empty()) fail(ErrorKind::kInput, "chat template: split() got an empty separator");
  std::vector<std::string> parts;
  if (!from_right) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t found = text.find(*sep, pos);
      if (found == std::string_view::npos) break;
      parts.emplace_back(text.substr(pos, found - pos));
      pos = found + sep->size();
    }
    parts.emplace_back(text.substr(pos));
    return parts;
  }
  size_t end = text.size();
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    if (end < sep->size()) break;
    const size_t found = text.rfind(*sep, end - sep->size());
    if (found == std::string_view::npos) break;
    parts.emplace_back(text.substr(found + sep->size(), end - found - sep->size()));
    end = found;
  }
  parts.emplace_back(text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string python_replace(std::string_view text, std::string_view old_text, std::string_view new_text,
                           int64_t count) {
  std::string out;
  int64_t done = 0;
  if (old_text.empty()) {
    const std::u32string s = utf8_decode(text, "string");
    for (const char32_t c : s) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
      }
      out += utf8_encode(std::u32string_view(&c, 1));
    }
    if (count < 0 || done < count) out += new_text;
    return out;
  }
  size_t pos = 0;
  while (count < 0 || done < count) {
    const size_t found = text.find(old_text, pos);
    if (found == std::string_view::npos) break;
    out.append(text.substr(pos, found - pos));
    out.append(new_text);
    pos = found + old_text.size();
    ++done;
  }
  out.append(text.substr(pos));
  return out;
}

namespace {

template <class Map>
std::string map_code_points(std::string_view text, Map map) {
  std::u32string s = utf8_decode(text, "string");
  for (size_t i = 0; i < s.size(); ++i) s[i] = map(i, s);
  return utf8_encode(s);
}

char32_t to_upper(char32_t c) {
  return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
}
char32_t to_lower(char32_t c) {
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}
bool is_cased_letter(char32_t c) {
  return to_upper(c) != c || to_lower(c) != c;
}

}  // namespace

std::string python_upper(std::string_view text) {
  return map_code_points(text, [](size_t i, const std::u32string& s) { return to_upper(s[i]); });
}

std::string python_lower(std::string_view text) {
  return map_code_points(text, [](size_t i, const std::u32string& s) { return to_lower(s[i]); });
}

std::string python_title(std::string_view text) {
  return map_code_points(text, [](size_t i, const std::u32string& s) {
    const bool after_cased = i > 0 && is_cased_letter(s[i - 1]);
    return after_cased ? to_lower(s[i]) : to_upper(s[i]);
  });
}

std::string python_capitalize(std::string_view text) {
  return map_code_points(
      text, [](size_t i, const std::u32string& s) { return i == 0 ? to_upper(s[i]) : to_lower(s[i]); });
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '"':
        out += "&#34;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace tern::text::jinja
