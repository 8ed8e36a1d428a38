// Text written into YAML files that gpuscale reads back (the calibration tool's): a string as a
// scalar that any YAML reader returns unchanged, as a block value, a flow value or a key.
#pragma once

#include <string>
#include <string_view>

namespace gpuscale {

// Plain when that cannot be misread: starts with a letter or '_', holds only letters, digits,
// spaces and `_ - . + / ( )`, does not end in a space, and is not a word YAML 1.1 takes for a
// boolean or null ("yes", "off", "null"...). Anything else, the empty string included, is
// double-quoted with `"`, `\` and control characters escaped. So versions ("13.0") and dates
// are quoted: readers that resolve types would take them for numbers and timestamps.
std::string yaml_scalar(std::string_view text);

}  // namespace gpuscale
