#include "server/chat_prompt.h"

#include <string_view>

#include "core/error.h"

namespace tern::server {

std::string render_chat_prompt(const text::ChatTemplate& chat_template, const ChatRequest& chat,
                               std::string* reply) {
  std::string prompt;
  try {
    prompt = chat_template.render(chat.body);
  } catch (const Error& e) {
    bad_request("messages", e.what());
  }
  if (chat.continued_reply) {
    const std::string& text = *chat.continued_reply;
    const size_t trimmed = text.find_last_not_of(" \t\r\n") + 1;
    const size_t at = prompt.rfind(std::string_view(text).substr(0, trimmed));
    if (trimmed == 0 || at == std::string::npos) {
      bad_request("continue_final_message",
                  "the chat template does not render the final assistant message's text, so it cannot be "
                  "continued");
    }
    // Keep the trailing whitespace if the template kept it; the end-of-turn marker after it goes.
    const size_t length = prompt.compare(at, text.size(), text) == 0 ? text.size() : trimmed;
    prompt.resize(at + length);
    if (reply) *reply = text.substr(0, length);
  }
  return prompt;
}

}  // namespace tern::server
