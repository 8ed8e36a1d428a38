#include "topologies/core/yaml_document.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

namespace gpuscale {
namespace {

int line_at(std::string_view text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence (no overlong
// forms, no surrogates, nothing above U+10FFFF), or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](std::size_t i) {
    return i < text.size() && (byte(i) & 0xC0) == 0x80;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    unsigned min_second = 0x80, max_second = 0xBF;
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) min_second = 0xA0;  // overlong
      if (lead == 0xED) max_second = 0x9F;  // UTF-16 surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) min_second = 0x90;  // overlong
      if (lead == 0xF4) max_second = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (length > 1 && (!continuation(i + 1) || byte(i + 1) < min_second ||
                       byte(i + 1) > max_second)) {
      return i;
    }
    for (std::size_t k = 2; k < length; ++k) {
      if (!continuation(i + k)) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

// The line of the first line whose indentation holds a tab, or 0.
int first_tab_indented_line(std::string_view text) {
  int line = 1;
  bool in_indent = true, tab_in_indent = false;
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      in_indent = true;
      tab_in_indent = false;
    } else if (in_indent) {
      if (c == '\t') {
        tab_in_indent = true;
      } else if (c != ' ' && c != '\r') {
        if (tab_in_indent) return line;
        in_indent = false;
      }
    }
  }
  return 0;
}

void check_text(std::string_view text, const std::string& name) {
  if (text.size() > kMaxYamlBytes) {
    throw ConfigError(Origin{name, 0},
                      fmt::format("{:.1f} MiB is more than gpuscale reads from one file ({} MiB): "
                                  "is this the right file?",
                                  static_cast<double>(text.size()) / (1 << 20),
                                  kMaxYamlBytes >> 20));
  }
  if (const std::size_t at = first_invalid_utf8(text); at != std::string_view::npos) {
    throw ConfigError(Origin{name, line_at(text, at)},
                      fmt::format("byte 0x{:02X} is not UTF-8: save the file as UTF-8",
                                  static_cast<unsigned char>(text[at])));
  }
  if (const int line = first_tab_indented_line(text); line > 0) {
    throw ConfigError(Origin{name, line},
                      "a tab in the indentation: YAML indents with spaces (replace the tab)");
  }
}

// Builds the tree from parser events. Containers being filled live on an explicit stack, so the
// input's depth costs heap, not the call stack, and is bounded by kMaxYamlDepth.
class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(std::string name) : name_(std::move(name)) {}

  ConfigNode take_root() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      fail(mark, "a second YAML document starts here: gpuscale reads one document per file "
                 "(remove the '---' and what follows, or split the file)");
    }
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    refuse_anchor(mark, anchor);
    add(ConfigNode(), mark);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { refuse_anchor(mark, 1); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    refuse_anchor(mark, anchor);
    add(ConfigNode::scalar(value, origin(mark)), mark);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(ConfigNode::sequence(origin(mark)), mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(ConfigNode::map(origin(mark)), mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    ConfigNode node;
    YAML::Mark mark;
    std::optional<std::string> key;  // a mapping's key waiting for its value
    Origin key_origin;
  };

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    throw ConfigError(origin(mark), what);
  }
  Origin origin(const YAML::Mark& mark) const {
    return Origin{name_, mark.is_null() ? 0 : mark.line + 1};
  }

  void refuse_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) const {
    if (anchor != YAML::NullAnchor) {
      fail(mark, "YAML anchors (&name) and aliases (*name) are not read: write the value out in "
                 "full");
    }
  }

  bool expects_key() const {
    return !open_.empty() && open_.back().node.is_map() && !open_.back().key;
  }

  void open(ConfigNode node, const YAML::Mark& mark, YAML::anchor_t anchor) {
    refuse_anchor(mark, anchor);
    if (expects_key()) fail(mark, "a mapping key must be a plain name");
    if (static_cast<int>(open_.size()) >= kMaxYamlDepth) {
      fail(mark, fmt::format("nested more than {} levels deep: gpuscale's inputs never are "
                             "(is a bracket unclosed?)",
                             kMaxYamlDepth));
    }
    count(mark);
    open_.push_back(Open{std::move(node), mark, std::nullopt, Origin{}});
  }

  void close() {
    Open done = std::move(open_.back());
    open_.pop_back();
    place(std::move(done.node), done.mark);
  }

  void add(ConfigNode node, const YAML::Mark& mark) {
    count(mark);
    place(std::move(node), mark);
  }

  void count(const YAML::Mark& mark) {
    if (++values_ > kMaxYamlValues) {
      fail(mark, fmt::format("more than {} values in one file: is this the right file?",
                             kMaxYamlValues));
    }
  }

  void place(ConfigNode node, const YAML::Mark& mark) {
    if (open_.empty()) {
      root_ = std::move(node);
      return;
    }
    Open& parent = open_.back();
    if (parent.node.is_sequence()) {
      parent.node.items().push_back(std::move(node));
      return;
    }
    if (!parent.key) {
      if (!node.is_scalar()) fail(mark, "a mapping key must be a plain name");
      if (parent.node.find(node.value()) != nullptr) {
        fail(mark, fmt::format("key '{}' is given twice in this mapping (keep one)",
                               node.value()));
      }
      parent.key = node.value();
      parent.key_origin = origin(mark);
      return;
    }
    if (node.is_null()) node = ConfigNode::scalar("", parent.key_origin);
    parent.node.entries().push_back({std::move(*parent.key), std::move(node), parent.key_origin});
    parent.key.reset();
  }

  std::string name_;
  ConfigNode root_;
  std::vector<Open> open_;
  int documents_ = 0;
  std::size_t values_ = 0;
};

std::string parse_error_text(const YAML::Exception& e) {
  // yaml-cpp prefixes what() with "yaml-cpp: error at line...": use msg.
  return e.msg.empty() ? std::string("malformed YAML") : "malformed YAML: " + e.msg;
}

}  // namespace

ConfigNode parse_yaml_document(const std::string& text, const std::string& name) {
  check_text(text, name);
  std::istringstream in(text);
  TreeBuilder builder(name);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    throw ConfigError(Origin{name, e.mark.is_null() ? 0 : e.mark.line + 1}, parse_error_text(e));
  }
  return builder.take_root();
}

}  // namespace gpuscale
