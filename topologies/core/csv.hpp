// CSV as RFC 4180 writes and reads it: a field holding a comma, a double quote or a line break is quoted,
// its quotes doubled, so a machine named "dgx1, 2x links" stays one column. Records end in LF, as
// every CSV reader we know accepts (RFC 4180's CRLF would leave a '\r' in the last field of
// Unix tools such as cut and awk).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

std::string csv_field(std::string_view text);

// The fields joined by commas, each through csv_field, and a line break.
std::string csv_record(const std::vector<std::string>& fields);

// The fields of one line as RFC 4180 reads it (commas separate, double quotes enclose a field
// that holds commas, a doubled quote inside is one), each trimmed of blanks and a trailing '\r'.
std::vector<std::string> split_csv(const std::string& line);

}  // namespace gpuscale
