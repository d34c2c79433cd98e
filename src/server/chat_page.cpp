#include "server/chat_page.h"

namespace tern::server {

std::string_view chat_page_html() {
  static constexpr std::string_view kPage = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tern chat</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 50rem; margin: 0 auto; padding: 1rem; }
#log > div { margin: 0.5rem 0; padding: 0.5rem; border-radius: 0.4rem; white-space: pre-wrap; }
.user { background: #e8f0fe; }
.assistant { background: #f4f4f4; }
details { color: #666; font-size: 0.9em; }
.tool { font-family: monospace; background: #fff7e0; padding: 0.3rem; margin-top: 0.3rem; }
.error { color: #b00; }
form { display: flex; gap: 0.5rem; }
textarea { flex: 1; height: 4rem; }
</style>
</head>
<body>
<h1>tern chat</h1>
<div id="log"></div>
<form id="form">
<textarea id="input" placeholder="Say something"></textarea>
<button id="send" type="submit">Send</button>
<button id="stop" type="button" disabled>Stop</button>
</form>
<label><input id="thinking" type="checkbox" checked> thinking</label>
<script>
const log = document.getElementById("log");
const input = document.getElementById("input");
const send = document.getElementById("send");
const stop = document.getElementById("stop");
const messages = [];
let controller = null;

function element(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text) e.textContent = text;
  return e;
}

async function model() {
  const r = await fetch("/v1/models");
  return (await r.json()).data[0].id;
}

stop.onclick = () => { if (controller) controller.abort(); };

document.getElementById("form").onsubmit = async (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || controller) return;
  input.value = "";
  messages.push({role: "user", content: text});
  log.appendChild(element("div", "user", text));
  const box = element("div", "assistant");
  box.id = "reply-" + messages.length;
  const details = element("details");
  details.appendChild(element("summary", null, "reasoning"));
  const reasoning = element("div", "reasoning");
  details.appendChild(reasoning);
  const content = element("div", "content");
  const tools = element("div");
  box.append(details, content, tools);
  details.hidden = true;
  log.appendChild(box);
  controller = new AbortController();
  send.disabled = true;
  stop.disabled = false;
  const calls = [];
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({model: await model(), messages, stream: true,
                            chat_template_kwargs: {enable_thinking: document.getElementById("thinking").checked}}),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error((await response.json()).error.message);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        for (const choice of chunk.choices) {
          const delta = choice.delta || {};
          if (delta.reasoning_content) { details.hidden = false; reasoning.textContent += delta.reasoning_content; }
          if (delta.content) content.textContent += delta.content;
          for (const call of delta.tool_calls || []) {
            calls[call.index] = call;
            tools.appendChild(element("div", "tool", call.function.name + "(" + call.function.arguments + ")"));
          }
          if (choice.finish_reason) box.dataset.finish = choice.finish_reason;
        }
      }
    }
    box.dataset.done = "true";
  } catch (e) {
    box.dataset.done = e.name === "AbortError" ? "stopped" : "error";
    if (e.name !== "AbortError") box.appendChild(element("div", "error", String(e.message || e)));
  }
  messages.push({role: "assistant", content: content.textContent});
  controller = null;
  send.disabled = false;
  stop.disabled = true;
};
</script>
</body>
</html>
)html";
  return kPage;
}

}  // namespace tern::server
