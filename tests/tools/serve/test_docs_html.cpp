// The docs as `gpuscale serve` shows them (tools/serve/docs_html.hpp): GitHub's heading anchors,
// the Markdown our docs write, every character escaped; and every docs link of the page and of
// the docs themselves lands on a heading that exists.
#include "tools/serve/docs_html.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "tests/support/test_support.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::serve {
namespace {

TEST(DocsHtml, HeadingAnchorsAreGitHubs) {
  EXPECT_EQ(heading_anchor("Deriving a machine from another (`base:`)"),
            "deriving-a-machine-from-another-base");
  EXPECT_EQ(heading_anchor("4. A what-if machine of your own (15 minutes)"),
            "4-a-what-if-machine-of-your-own-15-minutes");
  EXPECT_EQ(heading_anchor("Naming a run's exchange: `--exchange`, `--algo` and `--comm`"),
            "naming-a-runs-exchange---exchange---algo-and---comm");
  EXPECT_EQ(heading_anchor("[Links](x.md) **and** *lanes*: µs × 2 → fast"),
            "links-and-lanes-µs--2--fast");
  EXPECT_EQ(heading_anchor("snake_case_stays"), "snake_case_stays");
}

TEST(DocsHtml, RendersTheMarkdownTheDocsWrite) {
  const std::string html = markdown_html(R"(# Title
A paragraph with `code <b>`, **bold**, *em*, snake_case_name and a [link](replay.md#x).
Its second line.

- item one
  continued
  - nested
- item two

1. first
2. second

| a | b |
|---|---|
| `x \| y` | <script> |

```sh
echo "<hi>" && true
```

> quoted

![a figure](figures/f.png)

## Title
)");
  for (const char* expected :
       {R"(<h1 id="title"><a href="#title">Title</a></h1>)",
        "<p>A paragraph with <code>code &lt;b&gt;</code>, <strong>bold</strong>, <em>em</em>, "
        "snake_case_name and a <a href=\"replay.md#x\">link</a>. Its second line.</p>",
        "<ul>\n<li>item one continued\n<ul>\n<li>nested</li>\n</ul>\n</li>\n<li>item two</li>\n"
        "</ul>",
        "<ol>\n<li>first</li>\n<li>second</li>\n</ol>",
        "<thead><tr><th>a</th><th>b</th></tr>",
        "<tr><td><code>x | y</code></td><td>&lt;script&gt;</td></tr>",
        "<pre><code>echo &quot;&lt;hi&gt;&quot; &amp;&amp; true\n</code></pre>",
        "<blockquote>\n<p>quoted</p>\n</blockquote>",
        R"(<img src="figures/f.png" alt="a figure">)",
        R"(<h2 id="title-1">)"}) {
    EXPECT_NE(html.find(expected), std::string::npos) << expected << "\nin:\n" << html;
  }
  EXPECT_EQ(html.find("<script>"), std::string::npos);
}

// Markdown no doc of ours writes still renders, escaped, in one pass: deep nesting is shown as
// text, a link that would run script keeps only its label.
TEST(DocsHtml, InputNoDocWritesRendersEscapedAndEnds) {
  for (const std::string& markdown : std::vector<std::string>{
           std::string(100000, '['), std::string(100000, '>'), "|x|\n" + std::string(100000, '-'),
        std::string(5000, '_') + "a", "`unclosed", "```\nunclosed fence <b>", "- ", "|",
        "1. ", "![", "[a](", "**", std::string(5000, '*') + "x",
        "- a\n" + std::string(200, ' ') + "- b"}) {
    const std::string html = markdown_html(markdown);
    EXPECT_EQ(html.find("<b>"), std::string::npos) << markdown.substr(0, 40);
  }
  const std::string script = markdown_html("[click](javascript:alert(1)) [ok](replay.md#x)");
  EXPECT_EQ(script.find("javascript"), std::string::npos) << script;
  EXPECT_NE(script.find(R"(<a href="replay.md#x">ok</a>)"), std::string::npos) << script;
  EXPECT_EQ(heading_anchor("Über Ω"), "über-ω");
}

// Each docs page's anchors, as the server renders it.
std::map<std::string, std::set<std::string>> docs_anchors() {
  std::map<std::string, std::set<std::string>> anchors;
  const std::filesystem::path docs = std::filesystem::path(data_root()) / "docs";
  const std::regex id(R"re(<h[1-6] id="([^"]+)")re");
  for (const auto& entry : std::filesystem::directory_iterator(docs)) {
    if (entry.path().extension() != ".md") continue;
    const std::string html = markdown_html(testing::file_bytes(entry.path().string()));
    auto& page = anchors[entry.path().filename().string()];
    for (auto m = std::sregex_iterator(html.begin(), html.end(), id); m != std::sregex_iterator();
         ++m)
      page.insert((*m)[1].str());
  }
  return anchors;
}

// The links of `text` to a docs page and a section ("/docs/replay.md#one-iteration" in the page,
// "replay.md#one-iteration" or "#one-iteration" within the docs), each with the page it names
// (`page` for "#..." alone).
std::vector<std::pair<std::string, std::string>> section_links(const std::string& text,
                                                               const std::regex& pattern,
                                                               const std::string& page) {
  std::vector<std::pair<std::string, std::string>> links;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), pattern);
       m != std::sregex_iterator(); ++m) {
    links.emplace_back((*m)[1].length() > 0 ? (*m)[1].str() : page, (*m)[2].str());
  }
  return links;
}

TEST(DocsHtml, EveryLinkOfThePageLandsOnASection) {
  const auto anchors = docs_anchors();
  const std::string web = data_root() + "/tools/serve/web/";
  const std::string page =
      testing::file_bytes(web + "app.js") + testing::file_bytes(web + "index.html");
  // app.js's `doc: "replay.md#..."` and index.html's href="/docs/replay.md#...".
  const auto links = section_links(
      page, std::regex(R"((?:doc: "|/docs/)([a-z0-9-]+\.md)(?:#([^"]+))?")"), "");
  EXPECT_GE(links.size(), 15u);
  for (const auto& [doc, section] : links) {
    ASSERT_TRUE(anchors.contains(doc)) << "the page links to " << doc << ", no docs page";
    if (!section.empty()) {
      EXPECT_TRUE(anchors.at(doc).contains(section)) << "the page links to " << doc << "#"
                                                     << section << ", no heading there";
    }
  }
}

TEST(DocsHtml, EveryLinkBetweenDocsLandsOnASection) {
  const auto anchors = docs_anchors();
  const std::regex link(R"(\]\(([a-z0-9-]+\.md)?#([^)\s]+)\))");
  int checked = 0;
  for (const auto& [doc, ids] : anchors) {
    const std::string text = testing::file_bytes(data_root() + "/docs/" + doc);
    for (const auto& [target, section] : section_links(text, link, doc)) {
      ++checked;
      ASSERT_TRUE(anchors.contains(target)) << doc << " links to " << target << ", no docs page";
      EXPECT_TRUE(anchors.at(target).contains(section))
          << doc << " links to " << target << "#" << section << ", no heading there";
    }
  }
  EXPECT_GT(checked, 10);
}

}  // namespace
}  // namespace gpuscale::serve
