// The docs (docs/*.md) as the page's numbers link to them: HTML whose headings carry the anchors
// GitHub gives them, so that `replay.md#gradient-exchange` lands on its section in the browser as
// it does on GitHub. Only the Markdown our docs write: ATX headings, paragraphs, nested `-`/`*`
// and numbered lists, pipe tables, fenced code, block quotes, rules, and inline code, emphasis,
// links and images. Every character of the text is escaped; no HTML passes through.
#pragma once

#include <string>

namespace gpuscale::serve {

// GitHub's anchor for a heading's text (its Markdown, inline code and all): lower case, every
// character but letters, digits, spaces, '-' and '_' dropped, spaces made '-'.
// "Deriving a machine from another (`base:`)" -> "deriving-a-machine-from-another-base".
std::string heading_anchor(const std::string& heading_markdown);

// The body of `markdown` as HTML. A heading's anchor repeated on the page gets "-1", "-2", ...
// as on GitHub.
std::string markdown_html(const std::string& markdown);

// A whole page: `title`, the page's style sheet, a link back to the page, and `markdown`'s HTML.
std::string docs_page_html(const std::string& title, const std::string& markdown);

}  // namespace gpuscale::serve
