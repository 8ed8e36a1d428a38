#include "tools/serve/docs_html.hpp"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <string_view>
#include <vector>

namespace gpuscale::serve {
namespace {

std::string escape_html(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Markup nested deeper than this (`[[[[...](x)`, `>>>>...`) is shown as text: our docs nest a
// level or two, and each level is a recursion.
constexpr int kMaxNesting = 8;

// Whether a link may go to `target`: a page of these docs, a section, or the web; never a
// `javascript:` URL or another scheme a browser would run.
bool is_safe_target(std::string_view target) {
  const std::size_t scheme_end = target.find(':');
  if (scheme_end == std::string_view::npos ||
      target.find_first_of("/?#") < scheme_end) {
    return true;  // relative
  }
  for (const std::string_view allowed : {"http://", "https://", "mailto:"}) {
    if (target.size() >= allowed.size()) {
      bool same = true;
      for (std::size_t k = 0; k < allowed.size(); ++k)
        same = same && std::tolower(static_cast<unsigned char>(target[k])) == allowed[k];
      if (same) return true;
    }
  }
  return false;
}

// Inline Markdown as HTML, or as the plain text a heading's anchor is made of.
class Inline {
 public:
  Inline(std::string_view text, bool html, int nesting = 0)
      : s_(text), html_(html), nesting_(nesting) {}

  std::string render() {
    while (i_ < s_.size()) step();
    return out_;
  }

 private:
  void step() {
    const char c = s_[i_];
    if (nesting_ >= kMaxNesting) {
      text(s_.substr(i_, 1));
      ++i_;
    } else if (c == '\\' && i_ + 1 < s_.size() &&
               std::ispunct(static_cast<unsigned char>(s_[i_ + 1]))) {
      text(s_.substr(i_ + 1, 1));
      i_ += 2;
    } else if (c == '`') {
      code_span();
    } else if (c == '!' && i_ + 1 < s_.size() && s_[i_ + 1] == '[') {
      link(/*image=*/true);
    } else if (c == '[') {
      link(/*image=*/false);
    } else if (s_.substr(i_, 2) == "**") {
      emphasis("**", "strong");
    } else if ((c == '*' || c == '_') && opens_emphasis()) {
      emphasis(std::string(1, c), "em");
    } else {
      text(s_.substr(i_, 1));
      ++i_;
    }
  }

  void text(std::string_view t) { out_ += html_ ? escape_html(t) : std::string(t); }

  // `code`, ``code with ` inside``: the same run of backticks closes it.
  void code_span() {
    std::size_t ticks = 0;
    while (i_ + ticks < s_.size() && s_[i_ + ticks] == '`') ++ticks;
    const std::string fence(ticks, '`');
    const std::size_t end = s_.find(fence, i_ + ticks);
    if (end == std::string_view::npos) {
      text(fence);
      i_ += ticks;
      return;
    }
    std::string_view code = s_.substr(i_ + ticks, end - i_ - ticks);
    if (code.size() >= 2 && code.front() == ' ' && code.back() == ' ')
      code = code.substr(1, code.size() - 2);
    out_ += html_ ? "<code>" + escape_html(code) + "</code>" : std::string(code);
    i_ = end + ticks;
  }

  // [text](target) or ![alt](source); anything else is text. A label is at most
  // kMaxLabel characters long (CommonMark's 999), so that a line of unclosed `[` takes linear time.
  void link(bool image) {
    constexpr std::size_t kMaxLabel = 999;
    const std::size_t open = i_ + (image ? 1 : 0);
    const std::size_t last = std::min(s_.size(), open + kMaxLabel + 2);
    int depth = 0;
    std::size_t close = open;
    for (; close < last; ++close) {
      if (s_[close] == '`') {  // brackets inside code do not count
        const std::size_t end = s_.find('`', close + 1);
        if (end == std::string_view::npos) break;
        close = end;
      } else if (s_[close] == '[') {
        ++depth;
      } else if (s_[close] == ']' && --depth == 0) {
        break;
      }
    }
    if (close + 1 >= last || s_[close] != ']' || s_[close + 1] != '(') {
      text(s_.substr(i_, 1));
      ++i_;
      return;
    }
    const std::size_t target_end = s_.substr(0, close + 2 + kMaxLabel).find(')', close + 2);
    if (target_end == std::string_view::npos) {
      text(s_.substr(i_, 1));
      ++i_;
      return;
    }
    const std::string_view label = s_.substr(open + 1, close - open - 1);
    const std::string_view target = s_.substr(close + 2, target_end - close - 2);
    const std::string inner = Inline(label, html_, nesting_ + 1).render();
    if (!html_) {
      out_ += inner;
    } else if (!is_safe_target(target)) {
      out_ += inner;  // the label alone
    } else if (image) {
      out_ += fmt::format(R"(<img src="{}" alt="{}">)", escape_html(target),
                          escape_html(Inline(label, false, nesting_ + 1).render()));
    } else {
      out_ += fmt::format(R"(<a href="{}">{}</a>)", escape_html(target), inner);
    }
    i_ = target_end + 1;
  }

  // A single `*` or `_` opens emphasis when a word follows it; `_` also needs no word before it,
  // so that snake_case stays text.
  bool opens_emphasis() const {
    const char c = s_[i_];
    if (i_ + 1 >= s_.size() || std::isspace(static_cast<unsigned char>(s_[i_ + 1]))) return false;
    if (c == '_' && i_ > 0 && is_word_char(s_[i_ - 1])) return false;
    return s_.find(c, i_ + 1) != std::string_view::npos;
  }

  void emphasis(const std::string& marker, const char* tag) {
    std::size_t end = s_.find(marker, i_ + marker.size());
    // A closing `_` must end a word: `_a_b_` closes at its last `_`.
    while (marker == "_" && end != std::string_view::npos && end + 1 < s_.size() &&
           is_word_char(s_[end + 1]))
      end = s_.find(marker, end + 1);
    if (end == std::string_view::npos || end == i_ + marker.size()) {
      text(marker);
      i_ += marker.size();
      return;
    }
    const std::string inner =
        Inline(s_.substr(i_ + marker.size(), end - i_ - marker.size()), html_, nesting_ + 1)
            .render();
    out_ += html_ ? fmt::format("<{0}>{1}</{0}>", tag, inner) : inner;
    i_ = end + marker.size();
  }

  std::string_view s_;
  bool html_;
  int nesting_;
  std::size_t i_ = 0;
  std::string out_;
};

std::string inline_html(std::string_view text) { return Inline(text, true).render(); }

std::string_view trimmed(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const std::size_t last = line.find_last_not_of(" \t");
  return line.substr(first, last - first + 1);
}

std::size_t indent_of(std::string_view line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

bool is_blank(std::string_view line) { return trimmed(line).empty(); }

// A table row's cells: split at `|` outside code spans and not escaped.
std::vector<std::string> table_cells(std::string_view row) {
  std::string_view line = trimmed(row);
  if (!line.empty() && line.front() == '|') line.remove_prefix(1);
  if (!line.empty() && line.back() == '|' && (line.size() < 2 || line[line.size() - 2] != '\\'))
    line.remove_suffix(1);
  std::vector<std::string> cells(1);
  bool in_code = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cells.back() += in_code ? "|" : "\\|";  // a code span shows no escapes of its own
      ++i;
    } else if (c == '`') {
      in_code = !in_code;
      cells.back() += c;
    } else if (c == '|' && !in_code) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  for (std::string& cell : cells) cell = std::string(trimmed(cell));
  return cells;
}

// `|---|:--:|`: cells of dashes, each perhaps with a colon at either end.
bool is_table_separator(std::string_view line) {
  std::string_view rest = trimmed(line);
  if (!rest.empty() && rest.front() == '|') rest.remove_prefix(1);
  if (!rest.empty() && rest.back() == '|') rest.remove_suffix(1);
  if (rest.empty()) return false;
  while (true) {
    const std::size_t bar = rest.find('|');
    std::string_view cell = trimmed(rest.substr(0, bar));
    if (!cell.empty() && cell.front() == ':') cell.remove_prefix(1);
    if (!cell.empty() && cell.back() == ':') cell.remove_suffix(1);
    if (cell.empty() || cell.find_first_not_of('-') != std::string_view::npos) return false;
    if (bar == std::string_view::npos) return true;
    rest.remove_prefix(bar + 1);
  }
}

// A list item's marker: "- ", "* ", "+ " or "12. "; its length, or 0 for none.
std::size_t list_marker(std::string_view line, bool& ordered) {
  const std::string_view t = line.substr(indent_of(line));
  if (t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ') {
    ordered = false;
    return 2;
  }
  std::size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits > 0 && digits + 1 < t.size() && t[digits] == '.' && t[digits + 1] == ' ') {
    ordered = true;
    return digits + 2;
  }
  return 0;
}

bool is_fence(std::string_view line) { return trimmed(line).starts_with("```"); }

bool is_heading(std::string_view line) {
  std::size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#') ++hashes;
  return hashes >= 1 && hashes <= 6 && hashes < line.size() && line[hashes] == ' ';
}

bool is_rule(std::string_view line) {
  const std::string_view t = trimmed(line);
  return t.size() >= 3 && t.find_first_not_of('-') == std::string_view::npos;
}

class Blocks {
 public:
  Blocks(const std::vector<std::string_view>& lines, std::map<std::string, int>& anchors,
         int nesting = 0)
      : lines_(lines), anchors_(anchors), nesting_(nesting) {}

  std::string render() {
    if (nesting_ >= kMaxNesting) {  // shown as it is written
      std::string text;
      for (const std::string_view line : lines_) text += std::string(line) + "\n";
      return "<pre>" + escape_html(text) + "</pre>\n";
    }
    while (i_ < lines_.size()) block();
    return out_;
  }

 private:
  bool starts_block(std::string_view line) const {
    bool ordered = false;
    return is_blank(line) || is_heading(line) || is_fence(line) ||
           trimmed(line).starts_with(">") || trimmed(line).starts_with("|") ||
           list_marker(line, ordered) > 0;
  }

  void block() {
    const std::string_view line = lines_[i_];
    bool ordered = false;
    if (is_blank(line)) {
      ++i_;
    } else if (is_heading(line)) {
      heading(line);
    } else if (is_fence(line)) {
      fenced_code();
    } else if (trimmed(line).starts_with(">")) {
      quote();
    } else if (trimmed(line).starts_with("|") && i_ + 1 < lines_.size() &&
               is_table_separator(lines_[i_ + 1])) {
      table();
    } else if (list_marker(line, ordered) > 0) {
      list(indent_of(line));
    } else if (is_rule(line)) {
      out_ += "<hr>\n";
      ++i_;
    } else {
      paragraph();
    }
  }

  void heading(std::string_view line) {
    std::size_t level = 0;
    while (line[level] == '#') ++level;
    const std::string_view text = trimmed(line.substr(level));
    std::string anchor = heading_anchor(std::string(text));
    const int seen = anchors_[anchor]++;
    if (seen > 0) anchor += fmt::format("-{}", seen);
    out_ += fmt::format("<h{0} id=\"{1}\"><a href=\"#{1}\">{2}</a></h{0}>\n", level,
                        escape_html(anchor), inline_html(text));
    ++i_;
  }

  void fenced_code() {
    const std::size_t indent = indent_of(lines_[i_]);
    ++i_;
    std::string code;
    while (i_ < lines_.size() && !is_fence(lines_[i_])) {
      std::string_view line = lines_[i_++];
      line.remove_prefix(std::min(indent, indent_of(line)));
      code += std::string(line) + "\n";
    }
    ++i_;  // the closing fence
    out_ += "<pre><code>" + escape_html(code) + "</code></pre>\n";
  }

  void quote() {
    std::vector<std::string_view> inner;
    while (i_ < lines_.size() && trimmed(lines_[i_]).starts_with(">")) {
      std::string_view line = trimmed(lines_[i_++]).substr(1);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      inner.push_back(line);
    }
    out_ += "<blockquote>\n" + Blocks(inner, anchors_, nesting_ + 1).render() + "</blockquote>\n";
  }

  void table() {
    const auto cell_row = [](const std::vector<std::string>& cells, const char* tag) {
      std::string row = "<tr>";
      for (const std::string& cell : cells)
        row += fmt::format("<{0}>{1}</{0}>", tag, inline_html(cell));
      return row + "</tr>\n";
    };
    out_ += "<table>\n<thead>" + cell_row(table_cells(lines_[i_]), "th") + "</thead>\n<tbody>\n";
    i_ += 2;
    while (i_ < lines_.size() && trimmed(lines_[i_]).starts_with("|"))
      out_ += cell_row(table_cells(lines_[i_++]), "td");
    out_ += "</tbody>\n</table>\n";
  }

  // Items at `indent`; an item's continuation lines and the lists, code and paragraphs under it
  // are indented past its marker.
  void list(std::size_t indent) {
    bool ordered = false;
    list_marker(lines_[i_], ordered);
    const char* tag = ordered ? "ol" : "ul";
    out_ += fmt::format("<{}>\n", tag);
    while (i_ < lines_.size()) {
      bool this_ordered = false;
      const std::size_t marker = list_marker(lines_[i_], this_ordered);
      if (marker == 0 || indent_of(lines_[i_]) != indent || this_ordered != ordered) break;
      const std::size_t content = indent + marker;
      std::vector<std::string_view> item{lines_[i_].substr(content)};
      ++i_;
      while (i_ < lines_.size()) {
        const std::string_view line = lines_[i_];
        if (is_blank(line)) {
          // A blank line ends the item unless what follows is indented under it.
          if (i_ + 1 < lines_.size() && !is_blank(lines_[i_ + 1]) &&
              indent_of(lines_[i_ + 1]) >= content) {
            item.push_back("");
            ++i_;
            continue;
          }
          break;
        }
        bool nested_ordered = false;
        const bool item_marker = list_marker(line, nested_ordered) > 0;
        if (item_marker && indent_of(line) <= indent) break;  // the next item, or an outer one's
        if (!item_marker && indent_of(line) < content && starts_block(line)) break;
        item.push_back(line.substr(std::min(content, indent_of(line))));
        ++i_;
      }
      out_ += "<li>" + item_html(item) + "</li>\n";
      if (i_ < lines_.size() && is_blank(lines_[i_])) {
        // Blank lines between items of one list.
        std::size_t next = i_;
        while (next < lines_.size() && is_blank(lines_[next])) ++next;
        bool next_ordered = false;
        if (next < lines_.size() && list_marker(lines_[next], next_ordered) > 0 &&
            indent_of(lines_[next]) == indent && next_ordered == ordered) {
          i_ = next;
        } else {
          break;
        }
      }
    }
    out_ += fmt::format("</{}>\n", tag);
  }

  // An item's first paragraph stays inline (no <p>), as a tight list shows it.
  std::string item_html(const std::vector<std::string_view>& item) {
    std::size_t first_block = 0;
    std::string text;
    while (first_block < item.size() && !is_blank(item[first_block]) &&
           (first_block == 0 || !starts_block(item[first_block]))) {
      if (!text.empty()) text += ' ';
      text += trimmed(item[first_block++]);
    }
    const std::vector<std::string_view> rest(item.begin() + static_cast<long>(first_block),
                                             item.end());
    return inline_html(text) +
           (rest.empty() ? "" : "\n" + Blocks(rest, anchors_, nesting_ + 1).render());
  }

  void paragraph() {
    std::string text;
    while (i_ < lines_.size() && !(starts_block(lines_[i_]) && !text.empty()) &&
           !is_blank(lines_[i_])) {
      if (!text.empty()) text += ' ';
      text += trimmed(lines_[i_++]);
    }
    out_ += "<p>" + inline_html(text) + "</p>\n";
  }

  const std::vector<std::string_view>& lines_;
  std::map<std::string, int>& anchors_;
  int nesting_;
  std::size_t i_ = 0;
  std::string out_;
};

// A UTF-8 sequence's code point at `s[i]`, and its length.
char32_t code_point(std::string_view s, std::size_t i, std::size_t& length) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = byte(0);
  length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (i + length > s.size()) {
    length = 1;
    return lead;
  }
  if (length == 1) return lead;
  char32_t cp = lead & (0xFF >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (byte(k) & 0x3F);
  return cp;
}

// The letters our docs' headings hold beyond ASCII: Latin-1's (µ among them, not × or ÷) and
// Greek's. Dashes, arrows, quotes and mathematical signs are dropped, as GitHub drops them.
bool is_kept_letter(char32_t cp) {
  return cp == 0xB5 || (cp >= 0xC0 && cp <= 0xFF && cp != 0xD7 && cp != 0xF7) ||
         (cp >= 0x370 && cp <= 0x3FF);
}

// A kept letter in lower case, as UTF-8 (two bytes: every kept letter is below U+0800).
std::string lower_case_utf8(char32_t cp) {
  if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3A9)) cp += 0x20;
  return {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
}

}  // namespace

std::string heading_anchor(const std::string& heading_markdown) {
  const std::string text = Inline(heading_markdown, false).render();
  std::string anchor;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    const char32_t cp = code_point(text, i, length);
    if (cp < 0x80) {
      const char c = static_cast<char>(cp);
      if (c == ' ') {
        anchor += '-';
      } else if (is_word_char(c) || c == '-' || c == '_') {
        anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    } else if (is_kept_letter(cp) && length == 2) {
      anchor += lower_case_utf8(cp);
    }
    i += length;
  }
  return anchor;
}

std::string markdown_html(const std::string& markdown) {
  std::vector<std::string_view> lines;
  std::string_view rest = markdown;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    lines.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  std::map<std::string, int> anchors;
  return Blocks(lines, anchors).render();
}

std::string docs_page_html(const std::string& title, const std::string& markdown) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{0}: gpuscale docs</title>
<link rel="stylesheet" href="/style.css">
</head>
<body class="doc">
<nav><a href="/">gpuscale serve</a> · docs · {0}</nav>
<main>
{1}</main>
</body>
</html>
)",
                     escape_html(title), markdown_html(markdown));
}

}  // namespace gpuscale::serve
