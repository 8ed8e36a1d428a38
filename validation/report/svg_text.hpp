// Text placed inside SVG (titles, labels, names from the user's files) must not break the XML.
#pragma once

#include <string>

namespace gpuscale::report {

// `text` with &, <, > and " written as XML entities.
std::string xml_escape(const std::string& text);

}  // namespace gpuscale::report
