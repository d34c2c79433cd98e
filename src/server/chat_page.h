// The built-in chat page served at GET /: one static HTML file with inline JS, compiled into the
// binary. It streams replies from /v1/chat/completions, shows reasoning in a collapsible block,
// renders tool calls, and has a stop button (aborting the fetch closes the connection, which cancels
// the request on the server).
#pragma once

#include <string_view>

namespace tern::server {

std::string_view chat_page_html();

}  // namespace tern::server
