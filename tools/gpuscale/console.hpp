// What gpuscale says on stderr besides its results and its one-line errors (main.cpp), through
// spdlog: progress lines at level info, warnings at level warn, so that stdout stays the results
// alone and SPDLOG_LEVEL=warn (or =error) quiets them.
#pragma once

#include <string_view>

namespace gpuscale::cli {

// A stderr logger printing each message as it is ("%v"), its level from $SPDLOG_LEVEL.
void init_console();

void progress(std::string_view line);   // "[3/40] lenet p2p 4 GPUs batch 16: 148.16 ms ..."
void warning(std::string_view message); // printed "gpuscale: warning: MESSAGE"

}  // namespace gpuscale::cli
