// The prompt a chat request becomes: the model's chat template over the request's messages, tools and
// kwargs. The server generates from it, /apply-template returns it and `tern render` prints it, so all
// three agree byte for byte.
#pragma once

#include <string>

#include "server/api.h"
#include "text/chat_template.h"

namespace tern::server {

// For continue_final_message the prompt ends inside the final reply, after its text as the template
// wrote it (templates trim, so trailing whitespace may be gone); `reply` gets that text. A template
// error, or a final reply the template does not render, is an ApiError (400) naming "messages" or
// "continue_final_message".
std::string render_chat_prompt(const text::ChatTemplate& chat_template, const ChatRequest& chat,
                               std::string* reply = nullptr);

}  // namespace tern::server
